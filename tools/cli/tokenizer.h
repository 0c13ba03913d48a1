// The CLI's text tokenizers for `aotirt generate` and `aotirt tokenize`: a
// Hugging Face tokenizer.json (byte-level BPE, tokenizer_bpe.cpp, needs
// Oniguruma) or a SentencePiece model (tokenizer_sentencepiece.cpp, needs
// SentencePiece). A build without one of those libraries gets a stub that
// reports that this kind of tokenizer is unavailable (tokenizer_*_none.cpp).
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
  // The text of |tokens|, decoded together (SentencePiece joins pieces, byte
  // tokens join into UTF-8 characters). Special tokens decode to nothing.
  virtual Result<std::string> decode(const std::vector<int64_t>& tokens) const = 0;
  virtual int64_t vocab_size() const = 0;
};

// Opens a tokenizer file: a tokenizer.json (a name ending in .json, or a
// file whose text starts with '{') or a SentencePiece model. NOT_FOUND
// naming the file when it is missing.
Result<std::unique_ptr<Tokenizer>> open_tokenizer(const std::string& path);

// The two readers open_tokenizer chooses between; |path| exists.
Result<std::unique_ptr<Tokenizer>> open_sentencepiece_tokenizer(const std::string& path);
Result<std::unique_ptr<Tokenizer>> open_bpe_tokenizer(const std::string& path);

}  // namespace cli
}  // namespace aotirt
