// Built when CMake found no SentencePiece: a SentencePiece model cannot be
// read, so `aotirt generate` takes token ids (or a tokenizer.json) only.
#include "tokenizer.h"

namespace aotirt {
namespace cli {

Result<std::unique_ptr<Tokenizer>> open_sentencepiece_tokenizer(const std::string& path) {
  return Status(StatusCode::kUnavailable,
                "this aotirt was built without SentencePiece, so it cannot read the tokenizer " + path +
                    ": install libsentencepiece-dev and rebuild, or pass --prompt-ids");
}

}  // namespace cli
}  // namespace aotirt
