// Choosing the next token from a row of logits: greedy, or a draw after
// temperature, top-k and top-p (nucleus) cuts, as GenerateOptions describes.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "aotirt/generate.h"

namespace aotirt {
namespace llm {

class Sampler {
 public:
  explicit Sampler(const SamplingOptions& options);

  // The chosen token among |logits[0..n)|.
  int64_t next(const float* logits, int64_t n);

 private:
  SamplingOptions options_;
  std::mt19937_64 rng_;
  std::vector<std::pair<float, int64_t>> scratch_;  // (logit, id), reused
};

}  // namespace llm
}  // namespace aotirt
