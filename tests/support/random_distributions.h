#pragma once
// Random draft distributions for the acceptor tests: the softmax of normal logits.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace specd::test {

// Over `vocab` tokens, summing to 1 (float rounding aside): exp of N(0, sd) draws, normalised.
template <typename Rng>
std::vector<float> random_distribution(Rng& rng, int64_t vocab, float sd) {
  std::normal_distribution<float> normal(0.0f, sd);
  std::vector<float> q(static_cast<size_t>(vocab));
  float total = 0;
  for (float& v : q) total += v = std::exp(normal(rng));
  for (float& v : q) v /= total;
  return q;
}

}  // namespace specd::test
