#include "llm/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace aotirt {
namespace llm {

Sampler::Sampler(const SamplingOptions& options) : options_(options), rng_(options.seed) {}

int64_t Sampler::next(const float* logits, int64_t n) {
  if (options_.temperature <= 0.0f) {
    // First maximum, as torch.argmax picks; a NaN never wins. The largest
    // value comes from a pass the compiler vectorises (eight running maxima;
    // a NaN fails every comparison), then the first index holding it.
    constexpr int kLanes = 8;
    float lane_max[kLanes];
    for (float& m : lane_max) m = -std::numeric_limits<float>::infinity();
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (int l = 0; l < kLanes; ++l) lane_max[l] = logits[i + l] > lane_max[l] ? logits[i + l] : lane_max[l];
    float top = -std::numeric_limits<float>::infinity();
    for (float m : lane_max) top = m > top ? m : top;
    for (; i < n; ++i) top = logits[i] > top ? logits[i] : top;
    for (int64_t j = 0; j < n; ++j)
      if (logits[j] == top) return j;
    return 0;  // every logit NaN (or -inf and NaN): the first id
  }
  scratch_.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) scratch_[i] = {logits[i] / options_.temperature, i};
  // Most likely first; equal logits keep id order, so a seed gives one answer.
  auto more_likely = [](const std::pair<float, int64_t>& a, const std::pair<float, int64_t>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  size_t keep = scratch_.size();
  if (options_.top_k > 0 && static_cast<size_t>(options_.top_k) < keep) {
    keep = static_cast<size_t>(options_.top_k);
    std::partial_sort(scratch_.begin(), scratch_.begin() + keep, scratch_.end(), more_likely);
  } else {
    std::sort(scratch_.begin(), scratch_.end(), more_likely);
  }
  // Softmax over the kept logits (shifted by the largest for range).
  const float top = scratch_[0].first;
  std::vector<double> p(keep);
  double sum = 0;
  for (size_t i = 0; i < keep; ++i) sum += p[i] = std::exp(static_cast<double>(scratch_[i].first - top));
  if (options_.top_p < 1.0f) {
    // The smallest prefix whose probability reaches top_p; the most likely
    // token always stays.
    double cumulative = 0;
    size_t cut = keep;
    for (size_t i = 0; i < keep; ++i) {
      cumulative += p[i] / sum;
      if (cumulative >= options_.top_p) {
        cut = i + 1;
        break;
      }
    }
    keep = cut;
    sum = 0;
    for (size_t i = 0; i < keep; ++i) sum += p[i];
  }
  std::uniform_real_distribution<double> uniform(0.0, sum);
  double r = uniform(rng_);
  for (size_t i = 0; i < keep; ++i) {
    r -= p[i];
    if (r < 0) return scratch_[i].second;
  }
  return scratch_[keep - 1].second;
}

}  // namespace llm
}  // namespace aotirt
