// Built when CMake found no Oniguruma: a tokenizer.json's pre-tokenizer is a
// regular expression that needs it, so such a tokenizer cannot be read.
#include "tokenizer.h"

namespace aotirt {
namespace cli {

Result<std::unique_ptr<Tokenizer>> open_bpe_tokenizer(const std::string& path) {
  return Status(StatusCode::kUnavailable,
                "this aotirt was built without Oniguruma, so it cannot read the tokenizer " + path +
                    ": install libonig-dev and rebuild, or pass --prompt-ids");
}

}  // namespace cli
}  // namespace aotirt
