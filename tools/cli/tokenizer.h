// The CLI's text tokenizer for `aotirt generate`: SentencePiece when the
// build found it (tokenizer_sentencepiece.cpp), otherwise a stub whose every
// call reports that text prompts are unavailable (tokenizer_none.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "aotirt/status.h"

namespace aotirt {
namespace cli {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual Result<std::vector<int64_t>> encode(const std::string& text) const = 0;
  // The text of |tokens|, decoded together (SentencePiece joins pieces).
  virtual Result<std::string> decode(const std::vector<int64_t>& tokens) const = 0;
  virtual int64_t vocab_size() const = 0;
};

// Opens a tokenizer model file; NOT_FOUND naming the file when it is missing.
Result<std::unique_ptr<Tokenizer>> open_tokenizer(const std::string& path);

}  // namespace cli
}  // namespace aotirt
