#include "model/cpu/attention.h"
#include "util/simd.h"

#include <algorithm>
#include <cmath>

#include "util/vector_math.h"


namespace specd::cpu {
namespace {

#ifdef SPECD_HAVE_AVX2
// scores[t] = scale * q . K[t] for 8 consecutive rows: eight dot products reduced together by a
// transpose-add (hadd tree) instead of eight horizontal sums.
inline void score_block8(const float* q, const float* k, int64_t head_dim, float scale, float* scores) {
  __m256 acc[8];
  SPECD_UNROLL for (int t = 0; t < 8; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t d = 0; d < head_dim; d += 8) {
    const __m256 qv = _mm256_loadu_ps(q + d);
    SPECD_UNROLL for (int t = 0; t < 8; ++t) acc[t] = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k + t * head_dim + d), acc[t]);
  }
  const __m256 s01 = _mm256_hadd_ps(acc[0], acc[1]), s23 = _mm256_hadd_ps(acc[2], acc[3]);
  const __m256 s45 = _mm256_hadd_ps(acc[4], acc[5]), s67 = _mm256_hadd_ps(acc[6], acc[7]);
  const __m256 s0123 = _mm256_hadd_ps(s01, s23), s4567 = _mm256_hadd_ps(s45, s67);
  // Lane halves hold the low and high 128-bit partial sums of rows 0-3 and 4-7.
  const __m256 sums = _mm256_add_ps(_mm256_permute2f128_ps(s0123, s4567, 0x20), _mm256_permute2f128_ps(s0123, s4567, 0x31));
  _mm256_storeu_ps(scores, _mm256_mul_ps(sums, _mm256_set1_ps(scale)));
}

// out[0, 32) += sum_t w[t] V[row_t][0, 32) over `count` rows, with two accumulator sets so that
// consecutive rows do not wait on each other's FMAs.
inline void weighted_rows32(const float* w, const float* values, int64_t head_dim, const int32_t* rows, int64_t first,
                            int64_t count, float* out) {
  __m256 a[4], b[4];
  SPECD_UNROLL for (int v = 0; v < 4; ++v) {
    a[v] = _mm256_loadu_ps(out + v * 8);
    b[v] = _mm256_setzero_ps();
  }
  auto row_of = [&](int64_t c) { return rows ? rows[c] : first + c; };
  int64_t c = 0;
  for (; c + 2 <= count; c += 2) {
    const float* v0 = values + row_of(c) * head_dim;
    const float* v1 = values + row_of(c + 1) * head_dim;
    const __m256 w0 = _mm256_set1_ps(w[c]), w1 = _mm256_set1_ps(w[c + 1]);
    SPECD_UNROLL for (int v = 0; v < 4; ++v) {
      a[v] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(v0 + v * 8), a[v]);
      b[v] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(v1 + v * 8), b[v]);
    }
  }
  if (c < count) {
    const float* v0 = values + row_of(c) * head_dim;
    const __m256 w0 = _mm256_set1_ps(w[c]);
    SPECD_UNROLL for (int v = 0; v < 4; ++v) a[v] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(v0 + v * 8), a[v]);
  }
  SPECD_UNROLL for (int v = 0; v < 4; ++v) _mm256_storeu_ps(out + v * 8, _mm256_add_ps(a[v], b[v]));
}
#endif

// out += sum_c w[c] V[row_c] over the prefix rows then the extra rows, 32 columns at a time.
void weighted_sum(const AttentionKeys& kv, const float* w, float* out) {
  const int64_t hd = kv.head_dim;
  std::fill(out, out + hd, 0.0f);
  int64_t d = 0;
#ifdef SPECD_HAVE_AVX2
  for (; d + 32 <= hd; d += 32) {
    weighted_rows32(w, kv.values + d, hd, nullptr, 0, kv.prefix, out + d);
    weighted_rows32(w + kv.prefix, kv.values + d, hd, kv.extra, 0, kv.extra_count, out + d);
  }
#endif
  if (d == hd) return;
  for (int64_t c = 0; c < kv.prefix + kv.extra_count; ++c) {
    const int64_t row = c < kv.prefix ? c : kv.extra[c - kv.prefix];
    const float* v = kv.values + row * hd;
    for (int64_t i = d; i < hd; ++i) out[i] += w[c] * v[i];
  }
}

}  // namespace

void attend_head(const AttentionKeys& kv, const float* q, float scale, float* scores, float* out) {
  const int64_t hd = kv.head_dim, count = kv.prefix + kv.extra_count;
  int64_t c = 0;
#ifdef SPECD_HAVE_AVX2
  if (hd % 8 == 0)
    for (; c + 8 <= kv.prefix; c += 8) score_block8(q, kv.keys + c * hd, hd, scale, scores + c);
#endif
  for (; c < count; ++c) {
    const int64_t row = c < kv.prefix ? c : kv.extra[c - kv.prefix];
    scores[c] = dot(q, kv.keys + row * hd, hd) * scale;
  }
  const float inv_sum = 1.0f / exp_shifted_sum(scores, count, max_value(scores, count));
  weighted_sum(kv, scores, out);
  for (int64_t i = 0; i < hd; ++i) out[i] *= inv_sum;
}

}  // namespace specd::cpu
