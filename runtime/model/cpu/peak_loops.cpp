#include "model/cpu/peak_loops.h"

#include "util/simd.h"

namespace specd::cpu {
namespace {

// Results land here so that the compiler keeps the loops.
volatile float g_sink;

}  // namespace

const char* f32_loop_name() {
#if defined(__AVX512F__)
  return "avx512";
#elif defined(SPECD_HAVE_AVX2)
  return "avx2";
#else
  return "scalar";
#endif
}

// Independent accumulators cover the FMA latency (4-5 cycles on two ports needs at least 10 in
// flight).
int64_t f32_loop(int64_t iterations) {
#if defined(__AVX512F__)
  __m512 acc[16];
  SPECD_UNROLL for (int j = 0; j < 16; ++j) acc[j] = _mm512_set1_ps(0.01f * j);
  const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-6f);  // converges to 1: no overflow
  for (int64_t i = 0; i < iterations; ++i) {
    SPECD_UNROLL for (int j = 0; j < 16; ++j) acc[j] = _mm512_fmadd_ps(acc[j], m, a);
  }
  SPECD_UNROLL for (int j = 1; j < 16; ++j) acc[0] = _mm512_add_ps(acc[0], acc[j]);
  g_sink = lane_sum(acc[0]);
  return iterations * 16 * 16 * 2;
#elif defined(SPECD_HAVE_AVX2)
  __m256 acc[12];  // 16 registers: 12 accumulators and the two constants
  SPECD_UNROLL for (int j = 0; j < 12; ++j) acc[j] = _mm256_set1_ps(0.01f * j);
  const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-6f);
  for (int64_t i = 0; i < iterations; ++i) {
    SPECD_UNROLL for (int j = 0; j < 12; ++j) acc[j] = _mm256_fmadd_ps(acc[j], m, a);
  }
  SPECD_UNROLL for (int j = 1; j < 12; ++j) acc[0] = _mm256_add_ps(acc[0], acc[j]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc[0]);
  g_sink = lanes[0];
  return iterations * 12 * 8 * 2;
#else
  float acc[16];
  for (int j = 0; j < 16; ++j) acc[j] = 0.01f * j;
  for (int64_t i = 0; i < iterations; ++i) {
    SPECD_UNROLL for (int j = 0; j < 16; ++j) acc[j] = acc[j] * 0.999999f + 1e-6f;
  }
  g_sink = acc[0] + acc[15];
  return iterations * 16 * 2;
#endif
}

int64_t bf16_dot_loop(int64_t iterations) {
#if defined(__AVX512F__) && defined(__AVX512BF16__) && defined(__AVX512BW__)
  __m512 acc[16];
  // Distinct starting values: equal ones let the compiler merge the accumulators into one.
  SPECD_UNROLL for (int j = 0; j < 16; ++j) acc[j] = _mm512_set1_ps(0.01f * j);
  const __m512bh x = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(1e-3f));
  const __m512bh y = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1.0f), _mm512_set1_ps(1.0f));
  for (int64_t i = 0; i < iterations; ++i) {
    SPECD_UNROLL for (int j = 0; j < 16; ++j) acc[j] = _mm512_dpbf16_ps(acc[j], x, y);
  }
  SPECD_UNROLL for (int j = 1; j < 16; ++j) acc[0] = _mm512_add_ps(acc[0], acc[j]);
  g_sink = lane_sum(acc[0]);
  return iterations * 16 * 16 * 4;
#else
  (void)iterations;
  return 0;
#endif
}

}  // namespace specd::cpu
