// Drift and quality measures of specd bench: where two outputs first differ, and chrF against
// hand-computed values (character n-grams 1..6 without whitespace, beta = 2, effective order).
#include <catch2/catch.hpp>

#include "bench/quality.h"
#include "stats/statistics.h"

using namespace specd;

TEST_CASE("quality: first divergence of two token sequences", "[quality]") {
  CHECK(first_divergence({1, 2, 3}, {1, 2, 3}) == -1);
  CHECK(first_divergence({1, 2, 3}, {1, 5, 3}) == 1);
  CHECK(first_divergence({1, 2}, {1, 2, 3}) == 2);
  CHECK(first_divergence({}, {4}) == 0);
  CHECK(first_divergence({}, {}) == -1);
}

TEST_CASE("quality: chrF equals the hand-computed score", "[quality]") {
  CHECK(chrf_stats("the cat", "the cat").score() == Approx(100.0));
  CHECK(chrf_stats("xyz", "abc").score() == 0.0);
  // "abc" against "abd": orders 1, 2, 3 have n-grams on both sides; precision = recall =
  // (2/3 + 1/2 + 0) / 3, so F = the same.
  const double expected = 100.0 * (2.0 / 3.0 + 0.5 + 0.0) / 3.0;
  CHECK(chrf_stats("abc", "abd").score() == Approx(expected));
  CHECK(chrf_stats("a b\nc", " ab d").score() == Approx(expected));  // whitespace does not count
  // Precision and recall differ: "ab" against "abab": order 1 P = 1, R = 2/4; order 2 P = 1, R = 1/3.
  const double p = 1.0, r = (0.5 + 1.0 / 3.0) / 2.0;
  CHECK(chrf_stats("ab", "abab").score() == Approx(100.0 * 5 * p * r / (4 * p + r)));
  // Code points, not bytes: one two-byte character is one unigram.
  CHECK(chrf_stats("é", "é").score() == Approx(100.0));
  // A corpus adds statistics before scoring.
  ChrfStats corpus = chrf_stats("abc", "abd");
  corpus.add(chrf_stats("abc", "abd"));
  CHECK(corpus.score() == Approx(expected));
}

TEST_CASE("statistics: median and the 95% interval of a mean", "[quality]") {
  CHECK(median({3, 1, 2}) == 2.0);
  CHECK(median({4, 1, 2, 3}) == 2.5);
  MeanAccumulator m;
  for (double v : {1.0, 2.0, 3.0, 4.0}) m.add(v);
  CHECK(m.mean() == 2.5);
  // sample standard deviation sqrt(5/3), n = 4
  CHECK(m.ci95() == Approx(1.96 * std::sqrt(5.0 / 3.0 / 4.0)));
  MeanAccumulator one;
  one.add(5);
  CHECK(one.ci95() == 0.0);
}
