// The generation sampler (src/llm/sampler.h): greedy ties, the top-k and
// top-p cuts, seeding, and that draws follow the softmax of the logits.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "llm/sampler.h"

namespace aotirt {
namespace {

TEST(LlmSamplerTest, GreedyTakesTheFirstLargest) {
  llm::Sampler s(SamplingOptions{});
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f};
  EXPECT_EQ(s.next(logits.data(), 4), 1);
  const std::vector<float> nan_first = {NAN, 0.0f, 1.0f};
  EXPECT_EQ(s.next(nan_first.data(), 3), 2);
  // A vocabulary's worth: the vectorised pass, its tail and NaNs anywhere.
  std::vector<float> big(128257, -3.0f);
  big[5] = NAN;
  big[70001] = 9.5f;
  big[128256] = 9.5f;  // a tie in the tail: the first stays
  big[99999] = NAN;
  EXPECT_EQ(s.next(big.data(), static_cast<int64_t>(big.size())), 70001);
  big[128256] = 10.0f;
  EXPECT_EQ(s.next(big.data(), static_cast<int64_t>(big.size())), 128256);
  const std::vector<float> all_low = {-INFINITY, -INFINITY, -INFINITY};
  EXPECT_EQ(s.next(all_low.data(), 3), 0);
}

TEST(LlmSamplerTest, TopKOfOneAndATinyTopPAreGreedy) {
  const std::vector<float> logits = {0.1f, 0.2f, 3.0f, 0.3f, 2.9f};
  SamplingOptions k1;
  k1.temperature = 1.0f;
  k1.top_k = 1;
  SamplingOptions p;
  p.temperature = 1.0f;
  p.top_p = 1e-6f;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    k1.seed = p.seed = seed;
    llm::Sampler a(k1), b(p);
    EXPECT_EQ(a.next(logits.data(), 5), 2);
    EXPECT_EQ(b.next(logits.data(), 5), 2);
  }
}

TEST(LlmSamplerTest, ASeedGivesOneSequence) {
  const std::vector<float> logits = {0.0f, 0.1f, 0.2f, 0.3f, 0.4f, 0.5f};
  SamplingOptions o;
  o.temperature = 1.0f;
  o.seed = 42;
  llm::Sampler a(o), b(o);
  std::vector<int64_t> x, y;
  for (int i = 0; i < 50; ++i) {
    x.push_back(a.next(logits.data(), 6));
    y.push_back(b.next(logits.data(), 6));
  }
  EXPECT_EQ(x, y);
  o.seed = 43;
  llm::Sampler c(o);
  std::vector<int64_t> z;
  for (int i = 0; i < 50; ++i) z.push_back(c.next(logits.data(), 6));
  EXPECT_NE(x, z);
}

// Frequencies over many draws match the softmax at the temperature, within
// a few standard deviations; the top-k cut leaves only the k largest.
TEST(LlmSamplerTest, DrawsFollowTheSoftmaxOfTheKeptLogits) {
  const std::vector<float> logits = {1.0f, 2.0f, 0.0f, 3.0f};
  SamplingOptions o;
  o.temperature = 2.0f;
  o.top_k = 3;
  o.seed = 7;
  llm::Sampler s(o);
  const int draws = 20000;
  std::map<int64_t, int> count;
  for (int i = 0; i < draws; ++i) ++count[s.next(logits.data(), 4)];
  EXPECT_EQ(count.count(2), 0u) << "the smallest logit is outside the top 3";
  double z = 0;
  for (int64_t id : {0, 1, 3}) z += std::exp(logits[id] / 2.0);
  for (int64_t id : {0, 1, 3}) {
    const double p = std::exp(logits[id] / 2.0) / z;
    const double sd = std::sqrt(draws * p * (1 - p));
    EXPECT_NEAR(count[id], draws * p, 5 * sd) << "token " << id;
  }
}

TEST(LlmSamplerTest, TopPKeepsTheSmallestSetReachingIt) {
  // Probabilities about 0.665, 0.245, 0.090: top_p 0.8 keeps the first two.
  const std::vector<float> logits = {2.0f, 1.0f, 0.0f};
  SamplingOptions o;
  o.temperature = 1.0f;
  o.top_p = 0.8f;
  o.seed = 1;
  llm::Sampler s(o);
  std::map<int64_t, int> count;
  for (int i = 0; i < 5000; ++i) ++count[s.next(logits.data(), 3)];
  EXPECT_EQ(count.count(2), 0u);
  EXPECT_GT(count[0], count[1]);
  EXPECT_GT(count[1], 0);
}

}  // namespace
}  // namespace aotirt
