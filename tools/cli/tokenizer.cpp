// Chooses the reader for a tokenizer file: tokenizer.json or SentencePiece.
#include "tokenizer.h"

#include <fstream>

namespace aotirt {
namespace cli {

Result<std::unique_ptr<Tokenizer>> open_tokenizer(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.good()) return Status(StatusCode::kNotFound, "the tokenizer file " + path + " cannot be opened");
  // A SentencePiece model is a binary protocol buffer, which never starts
  // with '{' (that would be field 15 of wire type 3, which its schema lacks).
  char first = 0;
  while (in.get(first) && (first == ' ' || first == '\n' || first == '\r' || first == '\t')) {
  }
  const bool json_name = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  if (json_name || (in && first == '{')) return open_bpe_tokenizer(path);
  return open_sentencepiece_tokenizer(path);
}

}  // namespace cli
}  // namespace aotirt
