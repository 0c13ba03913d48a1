// A SentencePiece model (tokenizer.model) read with the SentencePiece library.
#include <sentencepiece_processor.h>

#include "tokenizer.h"

namespace aotirt {
namespace cli {
namespace {

class SentencePieceTokenizer : public Tokenizer {
 public:
  explicit SentencePieceTokenizer(std::unique_ptr<sentencepiece::SentencePieceProcessor> sp) : sp_(std::move(sp)) {}

  Result<std::vector<int64_t>> encode(const std::string& text) const override {
    std::vector<int> ids;
    const auto st = sp_->Encode(text, &ids);
    if (!st.ok()) return Status(StatusCode::kInvalidArgument, "the tokenizer cannot encode the prompt: " + st.ToString());
    return std::vector<int64_t>(ids.begin(), ids.end());
  }

  Result<std::string> decode(const std::vector<int64_t>& tokens) const override {
    std::vector<int> ids;
    for (int64_t t : tokens) {
      // Ids the tokenizer does not know (a model vocabulary larger than the
      // tokenizer's) decode to nothing rather than failing the stream.
      if (t >= 0 && t < sp_->GetPieceSize()) ids.push_back(static_cast<int>(t));
    }
    std::string text;
    const auto st = sp_->Decode(ids, &text);
    if (!st.ok()) return Status(StatusCode::kInvalidArgument, "the tokenizer cannot decode: " + st.ToString());
    return text;
  }

  int64_t vocab_size() const override { return sp_->GetPieceSize(); }

 private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
};

}  // namespace

Result<std::unique_ptr<Tokenizer>> open_sentencepiece_tokenizer(const std::string& path) {
  auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto st = sp->Load(path);
  if (!st.ok())
    return Status(StatusCode::kInvalidArgument, "the tokenizer file " + path + " is not a SentencePiece model: " +
                                                    st.ToString());
  return std::unique_ptr<Tokenizer>(new SentencePieceTokenizer(std::move(sp)));
}

}  // namespace cli
}  // namespace aotirt
