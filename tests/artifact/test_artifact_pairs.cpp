// CSD's correction memory: summarize_pairs against a table computed by hand, and the Pareto share.
#include <catch2/catch.hpp>

#include "artifact/csd_pairs.h"

using namespace specd;

namespace {

CsdRejection rejection(int32_t draft, int32_t target, float gap, int32_t prompt = 0) {
  return {prompt, 0, 0, draft, target, gap};
}

CsdPair pair(int32_t draft, int32_t target, int64_t count, double mean, double min, double p10, double median, double p90,
             double max) {
  return {draft, target, count, mean, min, p10, median, p90, max};
}

}  // namespace

TEST_CASE("csd pairs: counts, nearest-rank quantiles and order by count", "[artifact][csd]") {
  // (5 -> 9): ten gaps -1..-10 in shuffled order; (3 -> 4): two; (7 -> 1) and (2 -> 8): one each,
  // tied on count and so ordered by draft token; (3 -> 2): three, with a repeated gap.
  std::vector<CsdRejection> rejections;
  for (float gap : {-4.f, -1.f, -10.f, -7.f, -2.f, -9.f, -3.f, -6.f, -8.f, -5.f}) rejections.push_back(rejection(5, 9, gap));
  rejections.push_back(rejection(7, 1, -0.5f));
  rejections.push_back(rejection(3, 4, -2.f));
  rejections.push_back(rejection(3, 2, -1.f));
  rejections.push_back(rejection(2, 8, 0.25f));
  rejections.push_back(rejection(3, 4, -1.f));
  rejections.push_back(rejection(3, 2, -3.f));
  rejections.push_back(rejection(3, 2, -1.f));

  // Nearest rank: the q-quantile of n sorted gaps is the ceil(q n)-th. n = 10: p10 1st, median
  // 5th, p90 9th. n = 3: p10 1st, median 2nd, p90 3rd. n = 2: p10 1st, median 1st, p90 2nd.
  const std::vector<CsdPair> expected = {
      pair(5, 9, 10, -5.5, -10, -10, -6, -2, -1),
      pair(3, 2, 3, -5.0 / 3.0, -3, -3, -1, -1, -1),
      pair(3, 4, 2, -1.5, -2, -2, -2, -1, -1),
      pair(2, 8, 1, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25),
      pair(7, 1, 1, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5),
  };
  const std::vector<CsdPair> pairs = summarize_pairs(rejections);
  REQUIRE(pairs.size() == expected.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    INFO("row " << i);
    CHECK(pairs[i] == expected[i]);
  }
  std::reverse(rejections.begin(), rejections.end());
  CHECK(summarize_pairs(rejections) == pairs);  // the order of the events does not matter
  CHECK(summarize_pairs({}).empty());
}

TEST_CASE("csd pairs: the Pareto share of the most frequent pairs", "[artifact][csd]") {
  // Ten pairs with counts 40, 20, 10, 8, 6, 5, 4, 3, 2, 2 (total 100), given out of order.
  std::vector<CsdPair> pairs;
  int32_t token = 0;
  for (int64_t count : {2, 40, 5, 20, 3, 10, 2, 8, 4, 6}) pairs.push_back(pair(token++, 0, count, 0, 0, 0, 0, 0, 0));
  CHECK(pareto_share(pairs, 0.2) == Approx(0.60));  // 2 pairs: 40 + 20
  CHECK(pareto_share(pairs, 0.25) == Approx(0.70));  // ceil(2.5) = 3 pairs: + 10
  CHECK(pareto_share(pairs, 0.7) == Approx(0.93));  // 7 pairs
  CHECK(pareto_share(pairs, 0.0) == 0.0);
  CHECK(pareto_share(pairs, 1.0) == 1.0);
  CHECK(pareto_share({}, 0.2) == 0.0);
  CHECK_THROWS_AS(pareto_share(pairs, 1.5), std::invalid_argument);
  // 0.28 * 25 is 7.000000000000001 in floating point: still the top 7 pairs, not 8.
  std::vector<CsdPair> many;
  for (int32_t t = 0; t < 25; ++t) many.push_back(pair(t, 0, 1, 0, 0, 0, 0, 0, 0));
  CHECK(pareto_share(many, 0.28) == Approx(7.0 / 25.0));
}
