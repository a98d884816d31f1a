// The CPU matmul kernels against a plain triple loop: every tile shape and its leftovers (row
// counts 1 to 17, outputs that are not a multiple of the panel width, short and odd inner sizes),
// each weight dtype and the BF16 kernels (where the CPU has them: dot products, widened tiles,
// AMX tiles; each row's bits alone and among others), with bias and accumulation, on one and two
// threads.
#include <catch2/catch.hpp>
#include "test_skip.h"
#include "float_bounds.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "io/half_precision.h"
#include "model/cpu/matmul.h"
#include "model/cpu/matmul_bf16_dot.h"

using namespace specd;
using cpu::WeightType;

namespace {

struct Problem {
  std::vector<float> x, bias, y_start, w_float;  // w_float: W as the kernel sees it, widened
  std::vector<uint16_t> w_16;                    // W stored 16-bit (BF16/F16)
  int64_t rows, in, out;
};

Problem make_problem(WeightType type, int64_t rows, int64_t in, int64_t out, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Problem p{{}, {}, {}, {}, {}, rows, in, out};
  for (int64_t i = 0; i < rows * in; ++i) p.x.push_back(normal(rng));
  for (int64_t i = 0; i < out; ++i) p.bias.push_back(normal(rng));
  for (int64_t i = 0; i < rows * out; ++i) p.y_start.push_back(normal(rng));
  for (int64_t i = 0; i < out * in; ++i) {
    float v = normal(rng);
    if (type == WeightType::BF16 || type == WeightType::BF16Pairs) {
      p.w_16.push_back(float_to_bf16(v));
      v = bf16_to_float(p.w_16.back());
    } else if (type == WeightType::F16) {
      p.w_16.push_back(float_to_half(v));
      v = half_to_float(p.w_16.back());
    }
    p.w_float.push_back(v);
  }
  return p;
}

// The BF16 dot-product kernels round x to BF16 first (then every product is exact).
float kernel_input(WeightType type, float x) { return type == WeightType::BF16Pairs ? bf16_to_float(float_to_bf16(x)) : x; }

// The product in double, rounded to float, and for each output the sum of its terms' magnitudes
// (the scale of float32's rounding error in any order of summation).
struct Reference {
  std::vector<float> y;
  std::vector<double> magnitude;
};

Reference reference(const Problem& p, WeightType type, bool with_bias, bool accumulate) {
  Reference ref{accumulate ? p.y_start : std::vector<float>(p.rows * p.out, 0.0f), std::vector<double>(p.rows * p.out)};
  for (int64_t r = 0; r < p.rows; ++r)
    for (int64_t j = 0; j < p.out; ++j) {
      double sum = with_bias ? p.bias[j] : 0.0;
      double magnitude = std::abs(sum) + std::abs(ref.y[r * p.out + j]);
      for (int64_t k = 0; k < p.in; ++k) {
        const double term = static_cast<double>(kernel_input(type, p.x[r * p.in + k])) * p.w_float[j * p.in + k];
        sum += term;
        magnitude += std::abs(term);
      }
      ref.y[r * p.out + j] += static_cast<float>(sum);
      ref.magnitude[r * p.out + j] = magnitude;
    }
  return ref;
}

// BF16Pairs by `kernel`; the other types by cpu::matmul.
std::vector<float> run_kernel(const Problem& p, WeightType type, bool with_bias, bool accumulate, int threads, cpu::Bf16Kernel kernel) {
  const void* w = type == WeightType::F32 ? static_cast<const void*>(p.w_float.data()) : p.w_16.data();
  const size_t element = type == WeightType::F32 ? 4 : 2;
  std::vector<unsigned char> packed(cpu::packed_elements(type, p.out, p.in) * element);
  cpu::pack_panels(w, type, p.out, p.in, packed.data());
  std::vector<float> y = p.y_start;
  const cpu::MatmulArgs args{p.x.data(), packed.data(), type, with_bias ? p.bias.data() : nullptr, y.data(), p.rows, p.in, p.out, accumulate};
  if (type == WeightType::BF16Pairs)
    cpu::matmul_bf16_dot(args, threads, kernel);
  else
    cpu::matmul(args, threads);
  return y;
}

void check_every_tile_shape(WeightType type, cpu::Bf16Kernel kernel = cpu::Bf16Kernel::Dot) {
  const int64_t rows = GENERATE(1, 2, 3, 4, 5, 7, 8, 9, 17);
  const int64_t out = GENERATE(5, 16, 40, 64, 80, 200);
  const int64_t in = GENERATE(3, 64, 97);
  const bool with_bias = GENERATE(false, true);
  const bool accumulate = GENERATE(false, true);
  const int threads = GENERATE(1, 2);
  CAPTURE(static_cast<int>(type), rows, out, in, with_bias, accumulate, threads);

  const Problem p = make_problem(type, rows, in, out, static_cast<uint32_t>(rows * 1000 + out * 10 + in));
  const Reference want = reference(p, type, with_bias, accumulate);
  const std::vector<float> got = run_kernel(p, type, with_bias, accumulate, threads, kernel);
  // A float32 dot product of in + 2 terms (products, bias, the accumulated value) in any order,
  // products' rounding included, is within gamma_(in+2) of their magnitudes (float_bounds.h); the
  // reference rounds twice more (its double sum to float, then the accumulation): gamma_(in+4).
  double worst = 0;  // the largest error as a share of its bound
  for (size_t i = 0; i < want.y.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want.y[i]) / (test::float32_gamma(in + 4) * want.magnitude[i]));
  CHECK(worst <= 1.0);
}

}  // namespace

TEST_CASE("CPU matmul equals the plain product for every tile shape, dtype and epilogue") {
  check_every_tile_shape(GENERATE(WeightType::F32, WeightType::BF16, WeightType::F16));
}

// The AMX kernel in test cases of its own: a machine without AMX skips those alone, and reports
// the dot-product and widened kernels' cases as run.
TEST_CASE("CPU BF16-pair matmul (AVX512-BF16: dot products and widened tiles) equals the plain product for every tile shape and epilogue") {
  if (!cpu::bf16_dot_supported()) SPECD_SKIP("no AVX512-BF16 kernels in this build");
  const auto kernel = GENERATE(cpu::Bf16Kernel::Dot, cpu::Bf16Kernel::Widened);
  CAPTURE(cpu::bf16_kernel_name(kernel));
  check_every_tile_shape(WeightType::BF16Pairs, kernel);
}

TEST_CASE("CPU BF16-pair matmul (AMX tiles) equals the plain product for every tile shape and epilogue") {
  if (!cpu::bf16_kernel_usable(cpu::Bf16Kernel::Amx)) SPECD_SKIP("this CPU or build has no AMX tiles");
  check_every_tile_shape(WeightType::BF16Pairs, cpu::Bf16Kernel::Amx);
}

// Every BF16 kernel gives a row the same bits alone as among others (tiles of 2 or more rows
// widened to FMA or on AMX, one row by vdpbf16ps or FMA in AMX's order): a model's one-token and
// multi-token forwards agree only so, for every tile and its leftovers (rows past 16 and 32 span
// AMX's row tiles; in = 97 ends in a partial tile of k-pairs).
namespace {

void check_rows_alone(cpu::Bf16Kernel kernel) {
  const int64_t rows = GENERATE(2, 3, 5, 7, 8, 9, 16, 17, 33, 40);
  const int64_t out = GENERATE(5, 40, 80, 200);
  const int64_t in = GENERATE(3, 64, 97);
  const bool with_bias = GENERATE(false, true);
  const bool accumulate = GENERATE(false, true);
  const int threads = GENERATE(1, 2);
  CAPTURE(cpu::bf16_kernel_name(kernel), rows, out, in, with_bias, accumulate, threads);
  const Problem p = make_problem(WeightType::BF16Pairs, rows, in, out, static_cast<uint32_t>(rows * 7 + out * 3 + in));
  std::vector<uint16_t> packed(cpu::packed_elements(WeightType::BF16Pairs, out, in));
  cpu::pack_panels(p.w_16.data(), WeightType::BF16Pairs, out, in, packed.data());
  std::vector<float> together = p.y_start, alone = p.y_start;
  cpu::matmul_bf16_dot({p.x.data(), packed.data(), WeightType::BF16Pairs, with_bias ? p.bias.data() : nullptr, together.data(), rows, in,
                        out, accumulate},
                       threads, kernel);
  for (int64_t r = 0; r < rows; ++r)
    cpu::matmul_bf16_dot({p.x.data() + r * in, packed.data(), WeightType::BF16Pairs, with_bias ? p.bias.data() : nullptr,
                          alone.data() + r * out, 1, in, out, accumulate},
                         threads, kernel);
  CHECK(std::memcmp(together.data(), alone.data(), together.size() * sizeof(float)) == 0);
}

}  // namespace

TEST_CASE("CPU BF16-pair matmul (dot products and widened tiles): each row gets the bits it has alone, for every tile shape and epilogue") {
  if (!cpu::bf16_dot_supported()) SPECD_SKIP("no AVX512-BF16 kernels in this build");
  check_rows_alone(GENERATE(cpu::Bf16Kernel::Dot, cpu::Bf16Kernel::Widened));
}

TEST_CASE("CPU BF16-pair matmul (AMX tiles): each row gets the bits it has alone, for every tile shape and epilogue") {
  if (!cpu::bf16_kernel_usable(cpu::Bf16Kernel::Amx)) SPECD_SKIP("this CPU or build has no AMX tiles");
  check_rows_alone(cpu::Bf16Kernel::Amx);
}

TEST_CASE("BF16 pair packing puts W[row, k] at (panel, k / 2, row % 16, k % 2) and pads odd k") {
  const int64_t out = 17, in = 3;
  std::vector<uint16_t> w(out * in);
  for (int64_t i = 0; i < out * in; ++i) w[i] = static_cast<uint16_t>(i + 1);
  std::vector<uint16_t> packed(cpu::packed_elements(WeightType::BF16Pairs, out, in), 0xFFFF);
  REQUIRE(packed.size() == 2 * 16 * 2 * 2);
  cpu::pack_bf16_pairs(w.data(), out, in, packed.data());
  const int64_t pairs = 2;
  auto at = [&](int64_t p, int64_t kp, int64_t c, int64_t j) { return packed[((p * pairs + kp) * 16 + c) * 2 + j]; };
  CHECK(at(0, 0, 5, 1) == w[5 * in + 1]);
  CHECK(at(0, 1, 5, 0) == w[5 * in + 2]);
  CHECK(at(0, 1, 5, 1) == 0);  // k = 3 is past in
  CHECK(at(1, 0, 0, 0) == w[16 * in + 0]);
  CHECK(at(1, 0, 1, 0) == 0);  // row 17 is past out
}

TEST_CASE("BF16 panels interleave the two halves of each panel row") {
  CHECK(cpu::panel_slot(WeightType::BF16, 0) == 0);
  CHECK(cpu::panel_slot(WeightType::BF16, 8) == 1);
  CHECK(cpu::panel_slot(WeightType::BF16, 1) == 2);
  CHECK(cpu::panel_slot(WeightType::BF16, 15) == 15);
  CHECK(cpu::panel_slot(WeightType::F16, 8) == 8);
}

TEST_CASE("packing puts W[row, k] at panel row / 16, position (k, row % 16) and pads with zeros") {
  const int64_t out = 20, in = 3;
  std::vector<float> w(out * in);
  for (int64_t i = 0; i < out * in; ++i) w[i] = static_cast<float>(i + 1);
  std::vector<float> packed(cpu::packed_elements(WeightType::F32, out, in), -1.0f);
  cpu::pack_panels(w.data(), WeightType::F32, out, in, packed.data());
  REQUIRE(packed.size() == 2 * 16 * 3);
  CHECK(packed[(0 * in + 2) * 16 + 5] == w[5 * in + 2]);
  CHECK(packed[(1 * in + 1) * 16 + 3] == w[19 * in + 1]);
  CHECK(packed[(1 * in + 0) * 16 + 4] == 0.0f);
  CHECK(packed[(1 * in + 2) * 16 + 15] == 0.0f);
}
