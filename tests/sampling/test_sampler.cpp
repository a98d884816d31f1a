// Sampling: greedy is argmax, top-k and top-p keep exactly the tokens they should, draws follow
// the shaped distribution, and a seed fixes the whole stream.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <map>

#include "sampling/sampler.h"
#include "util/error.h"

using namespace specd;

namespace {

std::vector<int> kept(const std::vector<double>& probs) {
  std::vector<int> ids;
  for (size_t i = 0; i < probs.size(); ++i)
    if (probs[i] > 0) ids.push_back(static_cast<int>(i));
  return ids;
}

SamplingParams params(double temperature, int top_k, double top_p, uint64_t seed = 0) {
  SamplingParams p;
  p.temperature = temperature;
  p.top_k = top_k;
  p.top_p = top_p;
  p.seed = seed;
  return p;
}

}  // namespace

TEST_CASE("greedy picks the first largest logit", "[sampling]") {
  std::vector<float> logits{0.5f, 2.0f, -1.0f, 2.0f, 1.0f};
  CHECK(argmax(logits.data(), 5) == 1);
  Sampler greedy(params(0.0, 0, 1.0));
  CHECK(greedy.sample(logits.data(), 5) == 1);
}

TEST_CASE("temperature scales the softmax", "[sampling]") {
  std::vector<float> logits{1.0f, 2.0f, 3.0f};
  auto p = shaped_distribution(logits.data(), 3, params(2.0, 0, 1.0));
  double z = std::exp(0.5) + std::exp(1.0) + std::exp(1.5);
  CHECK(p[0] == Approx(std::exp(0.5) / z));
  CHECK(p[2] == Approx(std::exp(1.5) / z));
}

TEST_CASE("top-k keeps the k largest logits, ties at the k-th included", "[sampling]") {
  std::vector<float> logits{0.1f, 3.0f, 2.0f, 2.0f, -5.0f, 1.0f};
  CHECK(kept(shaped_distribution(logits.data(), 6, params(1.0, 1, 1.0))) == std::vector<int>{1});
  CHECK(kept(shaped_distribution(logits.data(), 6, params(1.0, 2, 1.0))) == std::vector<int>{1, 2, 3});  // tie
  CHECK(kept(shaped_distribution(logits.data(), 6, params(1.0, 4, 1.0))) == std::vector<int>{1, 2, 3, 5});
  CHECK(kept(shaped_distribution(logits.data(), 6, params(1.0, 100, 1.0))).size() == 6);
  auto p = shaped_distribution(logits.data(), 6, params(1.0, 4, 1.0));
  double z = std::exp(3.0) + 2 * std::exp(2.0) + std::exp(1.0);
  CHECK(p[1] == Approx(std::exp(3.0) / z));  // renormalised over the kept set
}

TEST_CASE("top-p keeps the most likely tokens until their mass reaches p", "[sampling]") {
  // probabilities 0.5, 0.25, 0.125, 0.125 (logits are their logs)
  std::vector<float> logits{std::log(0.125f), std::log(0.5f), std::log(0.125f), std::log(0.25f)};
  CHECK(kept(shaped_distribution(logits.data(), 4, params(1.0, 0, 0.5))) == std::vector<int>{1});
  CHECK(kept(shaped_distribution(logits.data(), 4, params(1.0, 0, 0.51))) == std::vector<int>{1, 3});
  CHECK(kept(shaped_distribution(logits.data(), 4, params(1.0, 0, 0.75))) == std::vector<int>{1, 3});
  CHECK(kept(shaped_distribution(logits.data(), 4, params(1.0, 0, 0.8))) == std::vector<int>{0, 1, 3});  // tie: lower id first
  CHECK(kept(shaped_distribution(logits.data(), 4, params(1.0, 0, 1.0))).size() == 4);
  auto p = shaped_distribution(logits.data(), 4, params(1.0, 0, 0.6));
  CHECK(p[1] == Approx(2.0 / 3.0));
  CHECK(p[3] == Approx(1.0 / 3.0));
}

TEST_CASE("top-k then top-p, as Hugging Face orders them", "[sampling]") {
  std::vector<float> logits{std::log(0.4f), std::log(0.3f), std::log(0.2f), std::log(0.1f)};
  // top-k 3 renormalises to 4/9, 3/9, 2/9; top-p 0.7 then needs the first two (4/9 < 0.7 <= 7/9).
  CHECK(kept(shaped_distribution(logits.data(), 4, params(1.0, 3, 0.7))) == std::vector<int>{0, 1});
}

TEST_CASE("a seed fixes the sample stream and draws follow the distribution", "[sampling]") {
  std::vector<float> logits{0.0f, 1.0f, 2.0f, 0.5f};
  Sampler a(params(1.0, 0, 1.0, 7)), b(params(1.0, 0, 1.0, 7)), c(params(1.0, 0, 1.0, 8));
  std::vector<int32_t> sa, sb, sc;
  for (int i = 0; i < 200; ++i) {
    sa.push_back(a.sample(logits.data(), 4));
    sb.push_back(b.sample(logits.data(), 4));
    sc.push_back(c.sample(logits.data(), 4));
  }
  CHECK(sa == sb);
  CHECK(sa != sc);

  // 40,000 draws: chi-square with 3 degrees of freedom stays below 16.27 (p = 0.001).
  auto expected = shaped_distribution(logits.data(), 4, params(1.0, 0, 1.0));
  Sampler d(params(1.0, 0, 1.0, 123));
  std::vector<double> counts(4, 0.0);
  const int draws = 40000;
  for (int i = 0; i < draws; ++i) counts[d.sample(logits.data(), 4)] += 1;
  double chi2 = 0;
  for (int i = 0; i < 4; ++i) chi2 += std::pow(counts[i] - draws * expected[i], 2) / (draws * expected[i]);
  CHECK(chi2 < 16.27);
}

TEST_CASE("out-of-range sampling options are rejected naming the option", "[sampling]") {
  CHECK_THROWS_WITH(validate(params(-1.0, 0, 1.0)), Catch::Contains("temperature must"));
  CHECK_THROWS_WITH(validate(params(1.0, -3, 1.0)), Catch::Contains("top_k must"));
  CHECK_THROWS_WITH(validate(params(1.0, 0, 0.0)), Catch::Contains("top_p must"));
  CHECK_THROWS_WITH(validate(params(1.0, 0, 1.5)), Catch::Contains("top_p must"));
  CHECK_NOTHROW(validate(params(0.7, 40, 0.9)));
}

namespace {

// Top-p as the definition says it: sort every token (most likely first, ties by lower id) and keep
// tokens while the mass before them is below p. The sampler only sorts the head; the result must be
// identical, bit for bit.
std::vector<double> top_p_by_full_sort(std::vector<double> probs, double top_p) {
  std::vector<int64_t> order(probs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return probs[a] > probs[b]; });
  double kept = 0.0;
  for (int64_t id : order) {
    if (kept < top_p)
      kept += probs[id];
    else
      probs[id] = 0.0;
  }
  for (auto& p : probs) p /= kept;
  return probs;
}

}  // namespace

TEST_CASE("top-p over a large vocabulary equals the full-sort definition, ties included", "[sampling]") {
  std::mt19937 rng(11);
  for (int64_t vocab : {3, 70, 300, 5000}) {
    for (double top_p : {0.05, 0.5, 0.9, 0.999}) {
      for (double spread : {0.5, 3.0, 12.0}) {
        CAPTURE(vocab, top_p, spread);
        std::vector<float> logits(static_cast<size_t>(vocab));
        // Rounded to quarters so that many tokens tie.
        std::normal_distribution<float> normal(0.0f, static_cast<float>(spread));
        for (auto& z : logits) z = std::round(normal(rng) * 4.0f) / 4.0f;
        SamplingParams plain;
        plain.temperature = 0.7;
        SamplingParams nucleus = plain;
        nucleus.top_p = top_p;
        const std::vector<double> want = top_p_by_full_sort(shaped_distribution(logits.data(), vocab, plain), top_p);
        CHECK(shaped_distribution(logits.data(), vocab, nucleus) == want);
      }
    }
  }
}
