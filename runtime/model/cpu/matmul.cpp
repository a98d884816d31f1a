#include "model/cpu/matmul.h"

#include "io/half_precision.h"

#include <algorithm>
#include <cstring>

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define SPECD_HAVE_AVX2 1
#endif

namespace specd::cpu {
namespace {

// Scalar and vector loads of weights of each stored type, widened to float.
template <WeightType T> struct Weights;
template <> struct Weights<WeightType::F32> {
  using Element = float;
  static float scalar(const float* p) { return *p; }
#ifdef SPECD_HAVE_AVX2
  static __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
#endif
};
template <> struct Weights<WeightType::BF16> {
  using Element = uint16_t;
  static float scalar(const uint16_t* p) { return bf16_to_float(*p); }
#ifdef SPECD_HAVE_AVX2
  static __m256 load8(const uint16_t* p) {
    __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
#endif
};
template <> struct Weights<WeightType::F16> {
  using Element = uint16_t;
  static float scalar(const uint16_t* p) { return half_to_float(*p); }
#ifdef SPECD_HAVE_AVX2
  static __m256 load8(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
#endif
};

#ifdef SPECD_HAVE_AVX2
inline float horizontal_sum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
#endif

// RW rows of W against RX rows of x: RW * RX accumulators + RX x-loads + 1 W-load stay within the
// 16 ymm registers of AVX2 (4x3, 4x2, 8x1, ...).
template <WeightType T, int RW, int RX>
inline void tile(const MatmulArgs& a, int64_t w_row, int64_t x_row) {
  using W = Weights<T>;
  const int64_t k = a.in;
  const auto* w = static_cast<const typename W::Element*>(a.w) + w_row * k;
  const float* x = a.x + x_row * k;
  float sums[RW][RX];
  int64_t i = 0;
#ifdef SPECD_HAVE_AVX2
  __m256 acc[RW][RX];
  for (int r = 0; r < RW; ++r)
    for (int c = 0; c < RX; ++c) acc[r][c] = _mm256_setzero_ps();
  for (; i + 8 <= k; i += 8) {
    __m256 xv[RX];
    for (int c = 0; c < RX; ++c) xv[c] = _mm256_loadu_ps(x + c * k + i);
    for (int r = 0; r < RW; ++r) {
      __m256 wv = W::load8(w + r * k + i);
      for (int c = 0; c < RX; ++c) acc[r][c] = _mm256_fmadd_ps(wv, xv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < RW; ++r)
    for (int c = 0; c < RX; ++c) sums[r][c] = horizontal_sum(acc[r][c]);
#else
  for (int r = 0; r < RW; ++r)
    for (int c = 0; c < RX; ++c) sums[r][c] = 0.0f;
#endif
  for (; i < k; ++i)
    for (int r = 0; r < RW; ++r)
      for (int c = 0; c < RX; ++c) sums[r][c] += W::scalar(w + r * k + i) * x[c * k + i];
  for (int c = 0; c < RX; ++c) {
    float* y = a.y + (x_row + c) * a.out + w_row;
    for (int r = 0; r < RW; ++r) {
      float v = sums[r][c] + (a.bias ? a.bias[w_row + r] : 0.0f);
      y[r] = a.accumulate ? y[r] + v : v;
    }
  }
}

// Output columns [begin, end) for all x rows.
template <WeightType T>
void matmul_columns(const MatmulArgs& a, int64_t begin, int64_t end) {
  if (a.rows == 1) {
    int64_t j = begin;
    for (; j + 8 <= end; j += 8) tile<T, 8, 1>(a, j, 0);
    for (; j < end; ++j) tile<T, 1, 1>(a, j, 0);
    return;
  }
  int64_t j = begin;
  for (; j + 4 <= end; j += 4) {
    int64_t r = 0;
    for (; r + 3 <= a.rows; r += 3) tile<T, 4, 3>(a, j, r);
    if (a.rows - r == 2) tile<T, 4, 2>(a, j, r);
    if (a.rows - r == 1) tile<T, 4, 1>(a, j, r);
  }
  for (; j < end; ++j)
    for (int64_t r = 0; r < a.rows; ++r) tile<T, 1, 1>(a, j, r);
}

template <WeightType T>
void matmul_typed(const MatmulArgs& a, int threads) {
  // Blocks of 64 output columns: a multiple of every tile width, small enough to balance.
  const int64_t block = 64;
  const int64_t blocks = (a.out + block - 1) / block;
  if (threads <= 1 || blocks < 2) {
    matmul_columns<T>(a, 0, a.out);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t b = 0; b < blocks; ++b) matmul_columns<T>(a, b * block, std::min(a.out, (b + 1) * block));
}

}  // namespace

void matmul(const MatmulArgs& a, int threads) {
  switch (a.type) {
    case WeightType::F32: return matmul_typed<WeightType::F32>(a, threads);
    case WeightType::BF16: return matmul_typed<WeightType::BF16>(a, threads);
    case WeightType::F16: return matmul_typed<WeightType::F16>(a, threads);
  }
}

void widen_row(const void* w, WeightType type, int64_t row, int64_t width, float* out) {
  switch (type) {
    case WeightType::F32:
      std::memcpy(out, static_cast<const float*>(w) + row * width, width * sizeof(float));
      return;
    case WeightType::BF16:
      for (int64_t i = 0; i < width; ++i) out[i] = bf16_to_float(static_cast<const uint16_t*>(w)[row * width + i]);
      return;
    case WeightType::F16:
      for (int64_t i = 0; i < width; ++i) out[i] = half_to_float(static_cast<const uint16_t*>(w)[row * width + i]);
      return;
  }
}

}  // namespace specd::cpu
