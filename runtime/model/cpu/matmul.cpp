#include "model/cpu/matmul.h"

#include <algorithm>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define SPECD_HAVE_AVX2 1
#endif

namespace specd::cpu {
namespace {

#ifdef SPECD_HAVE_AVX2
inline float horizontal_sum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
#endif

// RW rows of W against RX rows of x: RW * RX accumulators + RX x-loads + 1 W-load stay within the
// 16 ymm registers (4x3 or 8x1).
template <int RW, int RX>
inline void tile(const MatmulArgs& a, int64_t w_row, int64_t x_row) {
  const int64_t k = a.in;
  const float* w = a.w + w_row * k;
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
      __m256 wv = _mm256_loadu_ps(w + r * k + i);
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
      for (int c = 0; c < RX; ++c) sums[r][c] += w[r * k + i] * x[c * k + i];
  for (int c = 0; c < RX; ++c) {
    float* y = a.y + (x_row + c) * a.out + w_row;
    for (int r = 0; r < RW; ++r) {
      float v = sums[r][c] + (a.bias ? a.bias[w_row + r] : 0.0f);
      y[r] = a.accumulate ? y[r] + v : v;
    }
  }
}

// Output columns [begin, end) for all x rows.
void matmul_columns(const MatmulArgs& a, int64_t begin, int64_t end) {
  if (a.rows == 1) {
    int64_t j = begin;
    for (; j + 8 <= end; j += 8) tile<8, 1>(a, j, 0);
    for (; j < end; ++j) tile<1, 1>(a, j, 0);
    return;
  }
  int64_t j = begin;
  for (; j + 4 <= end; j += 4) {
    int64_t r = 0;
    for (; r + 3 <= a.rows; r += 3) tile<4, 3>(a, j, r);
    for (; r < a.rows; ++r) tile<4, 1>(a, j, r);
  }
  for (; j < end; ++j)
    for (int64_t r = 0; r < a.rows; ++r) tile<1, 1>(a, j, r);
}

}  // namespace

void matmul(const MatmulArgs& a, int threads) {
  // Blocks of 64 output columns: a multiple of every tile width, small enough to balance.
  const int64_t block = 64;
  const int64_t blocks = (a.out + block - 1) / block;
  if (threads <= 1 || blocks < 2) {
    matmul_columns(a, 0, a.out);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t b = 0; b < blocks; ++b) matmul_columns(a, b * block, std::min(a.out, (b + 1) * block));
}

}  // namespace specd::cpu
