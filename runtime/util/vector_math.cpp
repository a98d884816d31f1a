#include "util/vector_math.h"
#include "util/simd.h"

#include <algorithm>
#include <cmath>


namespace specd::cpu {
namespace {

#ifdef SPECD_HAVE_AVX2
inline float horizontal_sum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// exp(x) for 8 lanes: x = k ln2 + r with |r| <= ln2/2, exp(r) by a degree-6 polynomial
// (Cephes' expf coefficients, relative error ~2e-7), times 2^k built in the exponent bits. Inputs below -87 give 0.
inline __m256 exp8(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.0f), hi = _mm256_set1_ps(88.0f);
  x = _mm256_max_ps(_mm256_min_ps(x, hi), lo);
  const __m256 log2e = _mm256_set1_ps(1.44269504088896341f);
  __m256 k = _mm256_round_ps(_mm256_mul_ps(x, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // r = x - k ln2, with ln2 split in two for precision.
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  __m256 r2 = _mm256_mul_ps(r, r);
  p = _mm256_fmadd_ps(p, r2, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  __m256i exponent = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(exponent));
}
#endif

}  // namespace

float dot(const float* a, const float* b, int64_t n) {
  int64_t i = 0;
  float sum = 0.0f;
#ifdef SPECD_HAVE_AVX2
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  sum = horizontal_sum(_mm256_add_ps(acc0, acc1));
#endif
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

float max_value(const float* v, int64_t n) {
  int64_t i = 0;
  float best = v[0];
#ifdef SPECD_HAVE_AVX2
  if (n >= 8) {
    // Four independent chains: a single running max waits on each comparison's latency.
    __m256 m[4] = {_mm256_loadu_ps(v), _mm256_loadu_ps(v), _mm256_loadu_ps(v), _mm256_loadu_ps(v)};
    for (; i + 32 <= n; i += 32)
      SPECD_UNROLL for (int c = 0; c < 4; ++c) m[c] = _mm256_max_ps(m[c], _mm256_loadu_ps(v + i + 8 * c));
    for (; i + 8 <= n; i += 8) m[0] = _mm256_max_ps(m[0], _mm256_loadu_ps(v + i));
    __m256 all = _mm256_max_ps(_mm256_max_ps(m[0], m[1]), _mm256_max_ps(m[2], m[3]));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(all), _mm256_extractf128_ps(all, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    best = _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
  }
#endif
  for (; i < n; ++i) best = std::max(best, v[i]);
  return best;
}

int64_t first_max_index(const float* v, int64_t n) {
  const float best = max_value(v, n);
  int64_t i = 0;
#ifdef SPECD_HAVE_AVX2
  const __m256 target = _mm256_set1_ps(best);
  for (; i + 8 <= n; i += 8) {
    const int hits = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(v + i), target, _CMP_EQ_OQ));
    if (hits) return i + __builtin_ctz(static_cast<unsigned>(hits));
  }
#endif
  for (; i < n; ++i)
    if (v[i] == best) return i;
  return std::max_element(v, v + n) - v;  // NaNs: keep std::max_element's answer
}

float exp_shifted_sum(float* v, int64_t n, float shift) {
  int64_t i = 0;
#ifdef SPECD_HAVE_AVX2
  __m256 acc = _mm256_setzero_ps();
  const __m256 s = _mm256_set1_ps(shift);
  for (; i + 8 <= n; i += 8) {
    __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(v + i), s));
    _mm256_storeu_ps(v + i, e);
    acc = _mm256_add_ps(acc, e);
  }
  float sum = horizontal_sum(acc);
  for (; i < n; ++i) sum += v[i] = std::exp(v[i] - shift);
  return sum;
#else
  // One float accumulator over a whole vocabulary drifts by ~1e-4 relative (32k terms); the vector
  // path keeps 8 partial sums, and the scalar one a double.
  double total = 0.0;
  for (; i < n; ++i) total += v[i] = std::exp(v[i] - shift);
  return static_cast<float>(total);
#endif
}

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
#ifdef SPECD_HAVE_AVX2
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (; i + 8 <= n; i += 8) {
    __m256 g = _mm256_loadu_ps(gate + i);
    __m256 sigmoid = _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_xor_ps(g, sign))));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_mul_ps(g, sigmoid), _mm256_loadu_ps(up + i)));
  }
#endif
  for (; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void rms_normalize(const float* x, float* out, int64_t n, float eps) {
  float scale = 1.0f / std::sqrt(dot(x, x, n) / static_cast<float>(n) + eps);
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * scale;
}

}  // namespace specd::cpu
