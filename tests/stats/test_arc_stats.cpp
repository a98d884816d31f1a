// The statistics of ARC-Decode's calibration and audit (issue 10's oracles): conformal ranks and
// quantiles against brute force, binomial intervals against scipy's, the top-k JS divergence
// against hand computation, and the fitted constants and audit counts on toy sample sets.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>

#include <nlohmann/json.hpp>

#include "stats/arc_fit.h"
#include "stats/arc_gate.h"
#include "stats/conformal.h"
#include "stats/divergence.h"
#include "stats/intervals.h"

using namespace specd;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The smallest r with r >= (n + 1)(1 - delta), delta = numerator / 10^9, by counting up.
int64_t rank_by_search(int64_t n, int64_t delta_numerator) {
  int64_t r = 0;
  while (r * 1000000000 < (n + 1) * (1000000000 - delta_numerator)) ++r;
  return r;
}

// The smallest value v of `values` with at least `rank` values <= v.
double order_statistic_by_counting(const std::vector<double>& values, int64_t rank) {
  double best = kInf;
  for (double v : values) {
    const auto at_most = std::count_if(values.begin(), values.end(), [v](double x) { return x <= v; });
    if (at_most >= rank) best = std::min(best, v);
  }
  return best;
}

ArcSample sample(int32_t prompt, int32_t depth, float entropy, double js, double u_emb, double u_logit,
                 bool held_out = false) {
  ArcSample s;
  s.prompt = prompt, s.depth = depth, s.root_entropy = entropy;
  s.js = js, s.u_emb_raw = u_emb, s.u_logit_raw = u_logit, s.held_out = held_out;
  return s;
}

// ArcConstants::operator== is the artifact's; compare the fields here.
void check_same(const ArcConstants& a, const ArcConstants& b) {
  CHECK(a.bucket == b.bucket);
  CHECK(a.samples == b.samples);
  CHECK(a.rank == b.rank);
  CHECK(a.c_s == b.c_s);
  CHECK(a.alpha_kappa == b.alpha_kappa);
  CHECK(a.tau_delta == b.tau_delta);
}

// The toy set of the fit tests: js = 0.01 i, u_emb = 0.1 (10 - i), u_logit = 0.5, i = 1..9.
std::vector<ArcSample> toy_samples() {
  std::vector<ArcSample> samples;
  for (int i = 1; i <= 9; ++i) samples.push_back(sample(i, 1, 0.25f, 0.01 * i, 0.1 * (10 - i), 0.5));
  return samples;
}

}  // namespace

TEST_CASE("conformal rank: exact integer arithmetic", "[arc_stats]") {
  CHECK(conformal_rank(19, 0.05) == 19);
  CHECK(conformal_rank(99, 0.05) == 95);
  CHECK(conformal_rank(199, 0.05) == 190);
  CHECK(conformal_rank(18, 0.05) == 19);  // exceeds n: too few for a finite bound
  CHECK(conformal_rank(0, 0.05) == 1);
  // 10 * (1 - 0.7) is 3.0000000000000004 in doubles: a floating ceil would say 4.
  CHECK(std::ceil(10 * (1 - 0.7)) == 4);
  CHECK(conformal_rank(9, 0.7) == 3);
  CHECK(conformal_rank(19, 0.7) == 6);
  CHECK(conformal_rank(9, 0.1) == 9);
  // Beyond 64-bit products: (n + 1) * 950000000 overflows int64 for n = 10^12 - 1.
  CHECK(conformal_rank(999999999999, 0.05) == 950000000000);
  CHECK(conformal_rank(int64_t{1} << 60, 0.5) == (int64_t{1} << 59) + 1);
  // delta = numerator / 10^9: values where (n + 1)(1 - delta) is an integer for many n, and others.
  const std::vector<std::pair<double, int64_t>> deltas = {
      {0.05, 50000000}, {0.1, 100000000}, {0.2, 200000000}, {0.25, 250000000}, {0.3, 300000000},
      {0.5, 500000000}, {0.01, 10000000}, {0.02, 20000000}, {0.15, 150000000}, {0.7, 700000000},
      {0.123456789, 123456789}, {0.000000001, 1}, {0.999999999, 999999999}, {0.033, 33000000}};
  for (const auto& [delta, numerator] : deltas)
    for (int64_t n = 0; n <= 200; ++n) {
      INFO("n " << n << " delta " << delta);
      CHECK(conformal_rank(n, delta) == rank_by_search(n, numerator));
    }
  for (const auto& [delta, numerator] : deltas) {
    if (numerator < 1000000) continue;  // the search below would count to 10^9
    int64_t n = 0;
    while (rank_by_search(n, numerator) > n) ++n;
    INFO("delta " << delta);
    CHECK(conformal_min_samples(delta) == n);
  }
  CHECK(conformal_min_samples(0.000000001) == 999999999);
  CHECK(conformal_min_samples(0.05) == 19);
  CHECK_THROWS_AS(conformal_rank(10, 0.0500000001), std::invalid_argument);  // a 10th digit
  CHECK_THROWS_AS(conformal_rank(10, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(conformal_rank(10, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(conformal_rank(10, std::nan("")), std::invalid_argument);
  CHECK_THROWS_AS(conformal_rank(-1, 0.05), std::invalid_argument);
}

TEST_CASE("conformal quantile: the brute-force order statistic for n = 1..200", "[arc_stats]") {
  std::mt19937_64 rng(10);
  std::uniform_int_distribution<int> small(0, 30);  // many ties
  std::normal_distribution<double> normal(0, 1);
  for (double delta : {0.05, 0.1, 0.2, 0.5, 0.3, 0.01, 0.07}) {
    for (int64_t n = 1; n <= 200; ++n) {
      std::vector<double> values;
      for (int64_t i = 0; i < n; ++i) values.push_back(i % 2 ? small(rng) : normal(rng));
      const int64_t rank = conformal_rank(n, delta);
      const double expected = rank > n ? kInf : order_statistic_by_counting(values, rank);
      INFO("n " << n << " delta " << delta);
      CHECK(conformal_quantile(values, delta) == expected);
    }
  }
  CHECK(conformal_quantile({3, 1, 2}, 0.05) == kInf);
  std::vector<double> twenty;
  for (int i = 20; i >= 1; --i) twenty.push_back(i);
  CHECK(conformal_quantile(twenty, 0.05) == 20);                 // n = 20: rank ceil(19.95) = 20
  CHECK(conformal_quantile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.5) == 6);  // rank ceil(5.5) = 6
  CHECK(conformal_quantile({kInf, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0.5) == 6);
  CHECK_THROWS_AS(conformal_quantile({1, std::nan(""), 2}, 0.5), std::invalid_argument);
}

TEST_CASE("intervals: Wilson and Clopper-Pearson equal scipy's to 1e-9", "[arc_stats]") {
  std::ifstream in(SPECD_SOURCE_DIR "/tests/fixtures/intervals.json");
  REQUIRE(in);
  const nlohmann::json references = nlohmann::json::parse(in);
  REQUIRE(references["intervals"].size() >= 60);
  for (const nlohmann::json& row : references["intervals"]) {
    const int64_t k = row["successes"], n = row["n"];
    const double confidence = row["confidence"];
    INFO(k << "/" << n << " at " << confidence);
    const Interval wilson = wilson_interval(k, n, confidence);
    const Interval cp = clopper_pearson_interval(k, n, confidence);
    CHECK(std::fabs(wilson.low - row["wilson"][0].get<double>()) <= 1e-9);
    CHECK(std::fabs(wilson.high - row["wilson"][1].get<double>()) <= 1e-9);
    CHECK(std::fabs(cp.low - row["clopper_pearson"][0].get<double>()) <= 1e-9);
    CHECK(std::fabs(cp.high - row["clopper_pearson"][1].get<double>()) <= 1e-9);
  }
  // The edges are stated exactly, not up to rounding.
  CHECK(wilson_interval(0, 7).low == 0.0);
  CHECK(wilson_interval(7, 7).high == 1.0);
  CHECK(clopper_pearson_interval(0, 7).low == 0.0);
  CHECK(clopper_pearson_interval(7, 7).high == 1.0);
  // Clopper-Pearson at 0 of n: 1 - (a/2)^(1/n), closed form.
  CHECK(clopper_pearson_interval(0, 10).high == Approx(1 - std::pow(0.025, 0.1)).epsilon(1e-12));
  CHECK(wilson_interval(0, 0).low == 0.0);
  CHECK(wilson_interval(0, 0).high == 1.0);
  CHECK(clopper_pearson_interval(0, 0).high == 1.0);
  CHECK_THROWS_AS(wilson_interval(5, 4), std::invalid_argument);
  CHECK_THROWS_AS(wilson_interval(-1, 4), std::invalid_argument);
  CHECK_THROWS_AS(clopper_pearson_interval(1, 4, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(clopper_pearson_interval(1, -4), std::invalid_argument);
}

TEST_CASE("JS divergence: a hand computation on a four-token vocabulary", "[arc_stats]") {
  // Top-2 of q = {0, 1}, of r = {1, 2}: the support is {0, 1, 2}; token 3 is outside it.
  const float q[] = {2, 1, 0, -1}, r[] = {0, 2, 1, -1};
  // Hand values (Python, math module): each row softmaxed on the support, + mu, / (1 + 3 mu).
  CHECK(topk_js_divergence(q, r, 4, 1.0, 2, 0.01) == Approx(0.18095195302572237).epsilon(1e-12));
  CHECK(topk_js_divergence(q, r, 4, 2.0, 2, 0.01) == Approx(0.05482854159304822).epsilon(1e-12));
  CHECK(topk_js_divergence(q, r, 4, 1.0, 2, 0.0) == Approx(0.19284165812147447).epsilon(1e-12));
  // Temperature 0 is read as 1.
  CHECK(topk_js_divergence(q, r, 4, 0.0, 2, 0.01) == topk_js_divergence(q, r, 4, 1.0, 2, 0.01));
  // A token outside the union does not count; one inside does.
  const float q_outside[] = {2, 1, 0, -0.5f}, q_inside[] = {2, 1, 0.5f, -1};
  CHECK(topk_js_divergence(q_outside, r, 4, 1.0, 2, 0.01) == topk_js_divergence(q, r, 4, 1.0, 2, 0.01));
  CHECK(topk_js_divergence(q_inside, r, 4, 1.0, 2, 0.01) != topk_js_divergence(q, r, 4, 1.0, 2, 0.01));
  // k beyond the vocabulary takes all of it: support {0, 1, 2, 3}.
  CHECK(topk_js_divergence(q, r, 4, 1.0, 9, 0.01) != topk_js_divergence(q, r, 4, 1.0, 2, 0.01));
  CHECK(topk_js_divergence(q, r, 4, 1.0, 9, 0.01) == topk_js_divergence(q, r, 4, 1.0, 4, 0.01));
}

TEST_CASE("JS divergence: smoothing, symmetry, zero and ln 2", "[arc_stats]") {
  // Disjoint point masses: ln 2 without smoothing; with it, the smoothed hand value.
  const float q[] = {0, -INFINITY, -INFINITY}, r[] = {-INFINITY, 0, -INFINITY};
  CHECK(topk_js_divergence(q, r, 3, 1.0, 1, 0.0) == Approx(std::log(2.0)).epsilon(1e-15));
  const double mu = 0.1, a = (1 + mu) / (1 + 2 * mu), b = mu / (1 + 2 * mu);  // q = (a, b), r = (b, a)
  const double m = 0.5;
  const double smoothed = a * std::log(a / m) + b * std::log(b / m);
  CHECK(topk_js_divergence(q, r, 3, 1.0, 1, mu) == Approx(smoothed).epsilon(1e-13));
  CHECK(smoothed < std::log(2.0));
  // Ties go to the lower token id: the top-1 of {1, 1, 0} is token 0, so the support with r's
  // top-1 (token 2) is {0, 2}, as if token 1 were masked; {1, 2} would see r's 3 at token 1.
  const float tied[] = {1, 1, 0}, other[] = {0, 3, 5};
  const float token0[] = {1, -INFINITY, 0}, token1[] = {-INFINITY, 1, 0};
  const double tie_js = topk_js_divergence(tied, other, 3, 1.0, 1, 0.01);
  CHECK(tie_js == topk_js_divergence(token0, other, 3, 1.0, 1, 0.01));
  CHECK(tie_js != topk_js_divergence(token1, other, 3, 1.0, 1, 0.01));

  std::mt19937_64 rng(7);
  std::normal_distribution<float> logit(0, 4);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<float> x(64), y(64);
    for (float& v : x) v = logit(rng);
    for (float& v : y) v = trial % 3 ? logit(rng) : 10 * logit(rng);
    const int32_t k = 1 + trial % 12;
    const double mu = trial % 2 ? 1e-4 : 0.0;
    const double forward = topk_js_divergence(x.data(), y.data(), 64, 1.0, k, mu);
    CHECK(forward == topk_js_divergence(y.data(), x.data(), 64, 1.0, k, mu));
    CHECK(forward >= 0.0);
    CHECK(forward <= std::log(2.0));
    CHECK(topk_js_divergence(x.data(), x.data(), 64, 1.0, k, mu) == Approx(0.0).margin(1e-15));
  }
  const float nan_row[] = {0, NAN, 1};
  CHECK_THROWS_AS(topk_js_divergence(nan_row, q, 3, 1.0, 1, 0.1), std::invalid_argument);
  CHECK_THROWS_AS(topk_js_divergence(q, r, 3, -1.0, 1, 0.1), std::invalid_argument);
  CHECK_THROWS_AS(topk_js_divergence(q, r, 3, 1.0, 0, 0.1), std::invalid_argument);
  CHECK_THROWS_AS(topk_js_divergence(q, r, 3, 1.0, 1, -0.1), std::invalid_argument);
  const float all_masked[] = {-INFINITY, -INFINITY, -INFINITY};
  CHECK_THROWS_AS(topk_js_divergence(all_masked, r, 3, 1.0, 1, 0.1), std::invalid_argument);
}

TEST_CASE("ARC fit: constants on a toy set equal the hand-computed order statistics", "[arc_stats]") {
  // n = 9, delta = 0.2: rank ceil(10 * 0.8) = 8. js / u_emb = 0.1 i / (10 - i): the 8th smallest is
  // i = 8's, 0.4. js / u_logit = 0.02 i: 0.16. U_min = min(0.04 (10 - i), 0.08): 0.04 once, 0.08
  // eight times: the 8th smallest is 0.08.
  std::vector<ArcSample> samples = toy_samples();
  samples.push_back(sample(50, 1, 0.25f, 0.9, 0.01, 0.01, true));  // held out: never fitted
  const std::vector<ArcConstants> constants = fit_arc_constants(samples, 0.2, {});
  REQUIRE(constants.size() == 1);
  CHECK(constants[0].bucket == "all");
  CHECK(constants[0].samples == 9);
  CHECK(constants[0].rank == 8);
  CHECK(constants[0].c_s == Approx(0.4).epsilon(1e-12));
  CHECK(constants[0].alpha_kappa == Approx(0.16).epsilon(1e-12));
  CHECK(constants[0].tau_delta == Approx(0.08).epsilon(1e-12));
  CHECK(arc_bound(constants[0], 0.1, 0.5) == Approx(0.04).epsilon(1e-12));
  CHECK(arc_bound(constants[0], 1.0, 0.5) == Approx(0.08).epsilon(1e-12));
  CHECK(arc_bound(constants[0], 0.0, 0.5) == 0.0);

  // Recomputing, in any sample order, gives the same constants.
  std::vector<ArcSample> shuffled = samples;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(3));
  check_same(fit_arc_constants(shuffled, 0.2, {})[0], constants[0]);
  check_same(fit_arc_constants(samples, 0.2, {})[0], constants[0]);

  // Too few calibration samples for delta: refused (0.2 needs 4, 0.05 needs 19).
  CHECK_THROWS_AS(fit_arc_constants(samples, 0.05, {}), std::invalid_argument);
  CHECK_THROWS_AS(fit_arc_constants({samples.begin(), samples.begin() + 3}, 0.2, {}), std::invalid_argument);
  CHECK_NOTHROW(fit_arc_constants({samples.begin(), samples.begin() + 4}, 0.2, {}));
  std::vector<ArcSample> bad = samples;
  bad[2].js = std::nan("");
  CHECK_THROWS_AS(fit_arc_constants(bad, 0.2, {}), std::invalid_argument);
  bad[2].js = -0.1;
  CHECK_THROWS_AS(fit_arc_constants(bad, 0.2, {}), std::invalid_argument);
}

TEST_CASE("ARC fit: zero denominators and brute force on random samples", "[arc_stats]") {
  // n = 19, delta = 0.1: rank 18. js = 0.01 i over u = 1: c_s = the 18th of 0.01..0.19 = 0.18.
  std::vector<ArcSample> samples;
  for (int i = 1; i <= 19; ++i) samples.push_back(sample(i, 1, 0.5f, 0.01 * i, 1.0, 1.0));
  CHECK(fit_arc_constants(samples, 0.1, {})[0].c_s == Approx(0.18).epsilon(1e-12));
  // u_emb = 0 with js = 0.01 > 0 is covered by no constant: its ratio is +inf, the 19th, and the
  // 18th is now 0.19 (skipping the sample would give the 17th of 18, again 0.18).
  samples[0] = sample(1, 1, 0.5f, 0.01, 0.0, 1.0);
  CHECK(fit_arc_constants(samples, 0.1, {})[0].c_s == Approx(0.19).epsilon(1e-12));
  samples[1] = sample(2, 1, 0.5f, 0.02, 0.0, 1.0);  // two infinite ratios: the 18th is one
  CHECK(fit_arc_constants(samples, 0.1, {})[0].c_s == kInf);
  // u = 0 with js = 0 is covered by any constant: ratio 0. Emb ratios {0, 0.03..0.19, inf}: 18th
  // 0.19; logit ratios (u = 1) {0, 0.01, 0.03..0.19}: 18th 0.18.
  samples[1] = sample(2, 1, 0.5f, 0.0, 0.0, 1.0);
  const ArcConstants zero_js = fit_arc_constants(samples, 0.1, {})[0];
  CHECK(zero_js.c_s == Approx(0.19).epsilon(1e-12));
  CHECK(zero_js.alpha_kappa == Approx(0.18).epsilon(1e-12));
  CHECK(arc_bound(zero_js, 0.0, 2.0) == 0.0);

  std::mt19937_64 rng(11);
  std::exponential_distribution<double> positive(3.0);
  std::vector<ArcSample> random;
  for (int i = 0; i < 300; ++i)
    random.push_back(sample(i, 1 + i % 4, 0.1f * (i % 10), positive(rng) * 0.01, positive(rng), positive(rng), i % 3 == 0));
  const double delta = 0.05;
  const ArcConstants fitted = fit_arc_constants(random, delta, {})[0];
  std::vector<double> emb, logit, bound;
  for (const ArcSample& s : random)
    if (!s.held_out) emb.push_back(s.js / s.u_emb_raw), logit.push_back(s.js / s.u_logit_raw);
  const int64_t n = static_cast<int64_t>(emb.size()), rank = conformal_rank(n, delta);
  CHECK(fitted.samples == 200);
  CHECK(fitted.rank == rank);
  CHECK(fitted.c_s == order_statistic_by_counting(emb, rank));
  CHECK(fitted.alpha_kappa == order_statistic_by_counting(logit, rank));
  for (const ArcSample& s : random)
    if (!s.held_out) bound.push_back(std::min(fitted.c_s * s.u_emb_raw, fitted.alpha_kappa * s.u_logit_raw));
  CHECK(fitted.tau_delta == order_statistic_by_counting(bound, rank));
}

TEST_CASE("ARC fit: the split rule takes the ratios at delta / 2 and covers JS <= U_min on 1 - delta of the samples", "[arc_stats]") {
  std::mt19937_64 rng(5);
  std::exponential_distribution<double> positive(3.0);
  std::vector<ArcSample> random;
  // Independent bounds: the paper's rule misses on either side, up to 2 delta of the samples.
  for (int i = 0; i < 400; ++i) random.push_back(sample(i, 1, 0.5f, positive(rng) * 0.01, positive(rng), positive(rng)));
  const double delta = 0.1;
  std::vector<double> emb, logit;
  for (const ArcSample& s : random) emb.push_back(s.js / s.u_emb_raw), logit.push_back(s.js / s.u_logit_raw);
  const int64_t n = static_cast<int64_t>(random.size()), split_rank = conformal_rank(n, delta / 2);
  const ArcConstants split = fit_arc_constants(random, delta, {}, delta / 2)[0];
  CHECK(split.rank == conformal_rank(n, delta));
  CHECK(split.c_s == order_statistic_by_counting(emb, split_rank));
  CHECK(split.alpha_kappa == order_statistic_by_counting(logit, split_rank));
  auto covered = [&](const ArcConstants& c) {
    int64_t k = 0;
    for (const ArcSample& s : random) k += s.js <= arc_bound(c, s.u_emb_raw, s.u_logit_raw);
    return static_cast<double>(k) / static_cast<double>(n);
  };
  // Each ratio misses at most n + 1 - rank samples; the union at most twice that.
  CHECK(covered(split) >= 1 - delta);
  const ArcConstants paper = fit_arc_constants(random, delta, {})[0];
  CHECK(covered(paper) >= 1 - 2 * delta);
  CHECK(covered(paper) < 1 - delta);  // these samples show the paper's gap
  CHECK(fit_arc_constants(random, delta, {}, 0)[0] == paper);
}

TEST_CASE("ARC fit: depth and entropy buckets, too few samples fall back to all", "[arc_stats]") {
  std::vector<ArcSample> samples = toy_samples();  // depth 1, entropy 0.25
  samples.push_back(sample(20, 2, 0.75f, 0.5, 1.0, 1.0));
  samples.push_back(sample(21, 2, 0.75f, 0.6, 1.0, 1.0));
  samples.push_back(sample(22, 5, 0.75f, 0.6, 1.0, 1.0, true));  // held out: no bucket of its own

  const std::vector<ArcConstants> by_depth = fit_arc_constants(samples, 0.2, {true, {}});
  REQUIRE(by_depth.size() == 3);
  CHECK(by_depth[0].bucket == "all");
  CHECK(by_depth[0].samples == 11);
  CHECK(by_depth[1].bucket == "depth=1");
  check_same(by_depth[1], [&] { ArcConstants c = fit_arc_constants(toy_samples(), 0.2, {})[0]; c.bucket = "depth=1"; return c; }());
  CHECK(by_depth[2].bucket == "depth=2");
  CHECK(by_depth[2].samples == 2);
  CHECK(by_depth[2].rank == 3);  // ceil(3 * 0.8) = 3 > 2: the "all" constants
  CHECK(is_fallback(by_depth[2]));
  CHECK(!is_fallback(by_depth[1]));
  CHECK(by_depth[2].c_s == by_depth[0].c_s);
  CHECK(by_depth[2].alpha_kappa == by_depth[0].alpha_kappa);
  CHECK(by_depth[2].tau_delta == by_depth[0].tau_delta);
  CHECK(&constants_for(by_depth, 1, 0.9f) == &by_depth[1]);
  CHECK(&constants_for(by_depth, 2, 0.1f) == &by_depth[2]);
  CHECK(&constants_for(by_depth, 5, 0.1f) == &by_depth[0]);

  const std::vector<ArcConstants> by_entropy = fit_arc_constants(samples, 0.2, {false, {0, 0.5, 1}});
  REQUIRE(by_entropy.size() == 3);
  CHECK(by_entropy[1].bucket == "entropy=[0,0.5)");
  CHECK(by_entropy[1].samples == 9);
  CHECK(by_entropy[1].c_s == Approx(0.4).epsilon(1e-12));
  CHECK(by_entropy[2].bucket == "entropy=[0.5,1)");
  CHECK(by_entropy[2].samples == 2);
  CHECK(&constants_for(by_entropy, 3, 0.49f) == &by_entropy[1]);
  CHECK(&constants_for(by_entropy, 3, 0.5f) == &by_entropy[2]);
  CHECK(&constants_for(by_entropy, 3, 1.0f) == &by_entropy[0]);  // outside the edges

  const std::vector<ArcConstants> crossed = fit_arc_constants(samples, 0.2, {true, {0, 0.5, 1}});
  REQUIRE(crossed.size() == 5);
  CHECK(crossed[1].bucket == "depth=1,entropy=[0,0.5)");
  CHECK(crossed[1].samples == 9);
  CHECK(crossed[2].bucket == "depth=1,entropy=[0.5,1)");
  CHECK(crossed[2].samples == 0);
  CHECK(crossed[3].bucket == "depth=2,entropy=[0,0.5)");
  CHECK(crossed[4].bucket == "depth=2,entropy=[0.5,1)");
  CHECK(&constants_for(crossed, 1, 0.25f) == &crossed[1]);
  CHECK(&constants_for(crossed, 2, 0.75f) == &crossed[4]);
  CHECK(&constants_for(crossed, 3, 0.75f) == &crossed[0]);

  CHECK(entropy_bucket_name(0.1, 1.0 / 3) == "entropy=[0.1,0.3333333333333333)");
  CHECK_THROWS_AS(fit_arc_constants(samples, 0.2, {false, {0.5}}), std::invalid_argument);
  CHECK_THROWS_AS(fit_arc_constants(samples, 0.2, {false, {0.5, 0.5}}), std::invalid_argument);
  std::vector<ArcConstants> bad = by_depth;
  bad[1].bucket = "width=3";
  CHECK_THROWS_AS(constants_for(bad, 1, 0.5f), std::invalid_argument);
  bad.erase(bad.begin());
  CHECK_THROWS_AS(constants_for(bad, 1, 0.5f), std::invalid_argument);
}

TEST_CASE("ARC audit: coverage counts per group with their intervals", "[arc_stats]") {
  ArcConstants all;
  all.c_s = 1.0, all.alpha_kappa = 2.0;
  ArcConstants depth2 = all;
  depth2.bucket = "depth=2", depth2.samples = 30, depth2.rank = 29, depth2.c_s = 10.0;
  const std::vector<ArcConstants> constants = {all, depth2};
  const std::map<int32_t, std::string> categories = {{0, "code"}, {1, "chat"}, {2, "chat"}};
  // U_min = min(c_s u_emb, alpha_kappa u_logit).
  const std::vector<ArcSample> samples = {
      sample(0, 1, 0.5f, 0.5, 1.0, 1.0, true),    // U = 1: covered
      sample(0, 1, 0.5f, 1.5, 1.0, 1.0, true),    // not covered
      sample(1, 1, 0.5f, 0.2, 0.1, 5.0, true),    // U = 0.1: not covered
      sample(1, 2, 0.5f, 0.9, 0.1, 5.0, true),    // depth 2: U = min(1, 10) = 1: covered
      sample(2, 2, 0.5f, 1.0, 0.1, 0.5, true),    // U = min(1, 1): covered (<=)
      sample(2, 1, 0.5f, 0.01, 0.0, 5.0, true),   // U = 0: not covered
      sample(1, 1, 0.5f, 9.0, 1.0, 1.0, false),   // calibration split
      sample(7, 1, 0.5f, 0.0, 1.0, 1.0, false)};  // calibration split
  const std::vector<ArcAuditRow> rows = audit_arc(samples, constants, categories);
  REQUIRE(rows.size() == 5);
  const auto check_row = [](const ArcAuditRow& row, const char* kind, const char* group, int64_t n, int64_t covered) {
    INFO(kind << " " << group);
    CHECK(row.group_kind == kind);
    CHECK(row.group == group);
    CHECK(row.samples == n);
    CHECK(row.covered == covered);
    CHECK(row.coverage == Approx(static_cast<double>(covered) / n));
    CHECK(row.wilson_low == wilson_interval(covered, n).low);
    CHECK(row.wilson_high == wilson_interval(covered, n).high);
    CHECK(row.cp_low == clopper_pearson_interval(covered, n).low);
    CHECK(row.cp_high == clopper_pearson_interval(covered, n).high);
  };
  check_row(rows[0], "all", "all", 6, 3);
  check_row(rows[1], "category", "chat", 4, 2);
  check_row(rows[2], "category", "code", 2, 1);
  check_row(rows[3], "depth", "1", 4, 1);
  check_row(rows[4], "depth", "2", 2, 2);

  // The other split (deploy samples stored with held_out = false): prompt 7 needs a category.
  CHECK_THROWS_AS(audit_arc(samples, constants, categories, false), std::invalid_argument);
  std::map<int32_t, std::string> with_seven = categories;
  with_seven[7] = "math";
  const std::vector<ArcAuditRow> deploy = audit_arc(samples, constants, with_seven, false);
  REQUIRE(deploy.size() == 4);
  check_row(deploy[0], "all", "all", 2, 1);
  check_row(deploy[1], "category", "chat", 1, 0);
  check_row(deploy[2], "category", "math", 1, 1);
  check_row(deploy[3], "depth", "1", 2, 1);

  const std::vector<ArcAuditRow> empty = audit_arc({}, constants, categories);
  REQUIRE(empty.size() == 1);
  CHECK(empty[0].samples == 0);
  CHECK(empty[0].wilson_low == 0.0);
  CHECK(empty[0].wilson_high == 1.0);
}

namespace {

// P(X <= k) for X ~ Bin(n, p), summed term by term in log space (no Boost).
double binomial_cdf_by_sum(int64_t k, int64_t n, double p) {
  double total = 0;
  for (int64_t i = 0; i <= k; ++i)
    total += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) + i * std::log(p) + (n - i) * std::log1p(-p));
  return total;
}

// `count` deploy-site samples of prompt `prompt` at `theta`: relaxed or not, t_d = t_m or not, JS given.
void add_sites(std::vector<ArcSample>& out, int32_t prompt, double theta, int count, bool relaxed, bool argmax, double js) {
  for (int i = 0; i < count; ++i) {
    ArcSample s;
    s.prompt = prompt;
    s.step = i;
    s.depth = 1;
    s.target_token = 5;
    s.draft_token = argmax ? 5 : 6;
    s.js = argmax ? 0 : js;
    s.deploy_site = true;
    s.relaxed = relaxed;
    s.theta = theta;
    out.push_back(s);
  }
}

}  // namespace

TEST_CASE("ARC gate: Learn-then-Test per theta with exact binomial p-values, Bonferroni over the grid", "[arc_stats]") {
  ArcGateOptions options;
  options.thetas = {0.9, 0.5, 0.1};
  options.js_tolerance = 0.1;
  options.risk = 0.1;
  options.confidence = 0.95;
  std::vector<ArcSample> samples;
  // theta 0.9: 60 relaxed, none above the tolerance; 5 argmax relaxations and 10 sites not relaxed beside them.
  add_sites(samples, 1, 0.9, 60, true, false, 0.05);
  add_sites(samples, 3, 0.9, 5, true, true, 0);
  add_sites(samples, 3, 0.9, 10, false, false, 0.5);
  // theta 0.5: 3 of 60 above.
  add_sites(samples, 5, 0.5, 57, true, false, 0.1);  // at the tolerance: not a miss (JS > epsilon misses)
  add_sites(samples, 5, 0.5, 3, true, false, 0.2);
  // theta 0.1: 8 of 200 above, over two prompts.
  add_sites(samples, 7, 0.1, 100, true, false, 0.01);
  add_sites(samples, 9, 0.1, 92, true, false, 0.01);
  add_sites(samples, 9, 0.1, 8, true, false, 0.6);
  // Candidate samples are not the gate's.
  ArcSample candidate;
  candidate.js = 0.6;
  samples.push_back(candidate);

  const std::vector<ArcGateRow> rows = fit_arc_gate(samples, options);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].theta == 0.9);
  CHECK(rows[0].prompts == 2);
  CHECK(rows[0].sites == 75);
  CHECK(rows[0].relaxed == 60);
  CHECK(rows[0].relaxed_argmax == 5);
  CHECK(rows[0].misses == 0);
  CHECK(rows[0].p_value == Approx(std::pow(0.9, 60)).epsilon(1e-12));
  CHECK(rows[0].risk_high == Approx(1 - std::pow(0.05, 1.0 / 60)).epsilon(1e-9));  // one-sided CP at k = 0
  CHECK(rows[0].valid);
  CHECK(rows[1].misses == 3);
  CHECK(rows[1].risk == Approx(0.05));
  CHECK(rows[1].p_value == Approx(binomial_cdf_by_sum(3, 60, 0.1)).epsilon(1e-10));
  CHECK(!rows[1].valid);  // 0.14 > 0.05 / 3
  CHECK(rows[2].relaxed == 200);
  CHECK(rows[2].misses == 8);
  CHECK(rows[2].p_value == Approx(binomial_cdf_by_sum(8, 200, 0.1)).epsilon(1e-10));
  CHECK(rows[2].p_value < 0.05 / 3);
  CHECK(rows[2].valid);

  // The loosest valid theta, even past an invalid one: Bonferroni assumes no order.
  const ArcGateChoice choice = choose_arc_gate(rows, options);
  CHECK(choice.relaxes);
  CHECK(choice.theta == 0.1);
  CHECK(choice.reason.find("8 of 200") != std::string::npos);

  // At 99.9% confidence (level 0.001 / 3) neither p-value (0.0018, 0.0014) is small enough.
  options.confidence = 0.999;
  const std::vector<ArcGateRow> strict = fit_arc_gate(samples, options);
  CHECK(!strict[0].valid);
  CHECK(!strict[2].valid);
  const ArcGateChoice none = choose_arc_gate(strict, options);
  CHECK(!none.relaxes);
  CHECK(none.theta == kArcNeverRelax);
  CHECK(none.reason.find("relaxes nothing") != std::string::npos);

  // A theta with no relaxed token cannot be shown safe: p = 1.
  options.confidence = 0.95;
  options.thetas = {0.9, 0.5, 0.1, 0.99};
  const std::vector<ArcGateRow> with_empty = fit_arc_gate(samples, options);
  CHECK(with_empty.front().theta == 0.99);
  CHECK(with_empty.front().p_value == 1.0);
  CHECK(!with_empty.front().valid);

  // A deploy site off the grid, and bad options, are refused.
  options.thetas = {0.9, 0.5};
  CHECK_THROWS_WITH(fit_arc_gate(samples, options), Catch::Contains("theta 0.1, which is not on the grid"));
  options.thetas = {0.9, 0.9};
  CHECK_THROWS_WITH(fit_arc_gate(samples, options), Catch::Contains("repeats"));
}

TEST_CASE("intervals: the prompt-clustered interval of a pooled proportion, by hand", "[arc_stats]") {
  // p = 10/50; residuals s_k - p n_k = 0, 1, -1, 0, 0; se = sqrt(5/4 * 2) / 50; t(4, 0.975) = 2.7764451051977987.
  const Interval i = cluster_interval({{2, 10}, {3, 10}, {1, 10}, {2, 10}, {2, 10}});
  const double half = 2.7764451051977987 * std::sqrt(5.0 / 4 * 2) / 50;
  CHECK(i.low == Approx(0.2 - half).epsilon(1e-12));
  CHECK(i.high == Approx(0.2 + half).epsilon(1e-12));
  // Empty clusters are dropped; one cluster cannot estimate the spread between clusters.
  CHECK(cluster_interval({{2, 10}, {0, 0}}).low == 0);
  CHECK(cluster_interval({{2, 10}, {0, 0}}).high == 1);
  // Clamped to [0, 1].
  const Interval wide = cluster_interval({{1, 4}, {3, 4}, {0, 2}});
  CHECK(wide.low == 0);
  CHECK(wide.high == 1);
  CHECK_THROWS(cluster_interval({{3, 2}, {1, 4}}));
  // Every cluster at one rate: no zero-width interval, but Wilson's with a cluster as one observation.
  const Interval all_covered = cluster_interval({{3, 3}, {5, 5}, {2, 2}});
  CHECK(all_covered.high == 1);
  CHECK(all_covered.low == Approx(wilson_interval(3, 3).low).epsilon(1e-12));
  // p = 2/3 over 2 clusters: center (2 * 2 * p + z^2) / (2 (2 + z^2)), half z / (2 (2 + z^2)) * sqrt(4 * 2 * p * q + z^2).
  const Interval same_rate = cluster_interval({{2, 3}, {4, 6}});
  const double z = 1.959963984540054, denom = 2 * (2 + z * z);
  const double center = (4.0 * 2 / 3 + z * z) / denom, spread = z / denom * std::sqrt(8.0 * 2 / 9 + z * z);
  CHECK(same_rate.low == Approx(center - spread).epsilon(1e-12));
  CHECK(same_rate.high == Approx(center + spread).epsilon(1e-12));
}
