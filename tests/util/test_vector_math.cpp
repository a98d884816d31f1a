// The vectorised loops of util/vector_math.h against plain loops, at lengths that exercise the
// vector body and the scalar tail.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "float_bounds.h"
#include "util/vector_math.h"

using namespace specd;

TEST_CASE("first_max_index returns what std::max_element returns, ties to the first") {
  std::mt19937 rng(11);
  for (int64_t n = 1; n <= 70; ++n) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<float> v(static_cast<size_t>(n));
      // Few distinct values, so the maximum is often tied.
      for (float& x : v) x = static_cast<float>(static_cast<int>(rng() % 5)) - 2.0f;
      CAPTURE(n, trial);
      CHECK(cpu::first_max_index(v.data(), n) == std::max_element(v.begin(), v.end()) - v.begin());
      CHECK(cpu::max_value(v.data(), n) == *std::max_element(v.begin(), v.end()));
    }
  }
  std::vector<float> vocab(4096, -1.0f);
  vocab[4095] = 3.0f;
  CHECK(cpu::first_max_index(vocab.data(), 4096) == 4095);
  vocab[17] = 3.0f;
  CHECK(cpu::first_max_index(vocab.data(), 4096) == 17);
}

TEST_CASE("exp_shifted_sum writes exp(v - shift) and returns their sum") {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int64_t n : {1, 7, 8, 9, 31, 100}) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = normal(rng);
    const float shift = cpu::max_value(v.data(), n);
    std::vector<float> expected(v);
    double sum = 0;
    for (float& x : expected) sum += (x = std::exp(x - shift));
    const float got = cpu::exp_shifted_sum(v.data(), n, shift);
    CAPTURE(n);
    // Both exponentiate the same float argument: the kernel's exp and std::exp (within 1 ulp, 2 u) differ by
    // their errors; the sum adds a float32 sum of n positive terms (gamma_n) and its rounding.
    const double exp_error = test::kVectorExpRelativeError + 2 * test::kFloat32UnitRoundoff;
    CHECK(std::abs(got - sum) <= (test::float32_gamma(n) + exp_error + test::kFloat32UnitRoundoff) * sum);
    for (int64_t i = 0; i < n; ++i) CHECK(std::abs(v[i] - expected[i]) <= exp_error * expected[i]);
  }
}
