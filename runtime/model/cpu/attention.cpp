#include "model/cpu/attention.h"
#include "util/simd.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "util/vector_math.h"

#if defined(__AVX512F__)
#define SPECD_HAVE_AVX512 1
#endif


namespace specd::cpu {
namespace {

// Row c of the rows a query sees: the prefix rows, then the extra rows.
template <class E>
inline int64_t seen_row(const AttentionKeys<E>& kv, int64_t c) { return c < kv.prefix ? c : kv.extra[c - kv.prefix]; }

// Every row's score and weight is computed by the same arithmetic wherever the row falls (in a
// block of 8 or not, prefix or extra row), so a token's logits do not depend on how many tokens
// share its forward (greedy identity of speculative decoding with AR; see attend_batch).
#ifdef SPECD_HAVE_AVX2
// scores[t] = scale * q . K[row t] for 8 rows: eight dot products reduced together by a
// transpose-add (hadd tree) instead of eight horizontal sums. Each row's result depends on its
// own products only.
template <class E>
inline void score_block8(const float* q, const E* const* k, int64_t head_dim, float scale, float* scores) {
  __m256 acc[8];
  SPECD_UNROLL for (int t = 0; t < 8; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t d = 0; d < head_dim; d += 8) {
    const __m256 qv = _mm256_loadu_ps(q + d);
    SPECD_UNROLL for (int t = 0; t < 8; ++t) acc[t] = _mm256_fmadd_ps(qv, KvElement<E>::load8(k[t] + d), acc[t]);
  }
  const __m256 s01 = _mm256_hadd_ps(acc[0], acc[1]), s23 = _mm256_hadd_ps(acc[2], acc[3]);
  const __m256 s45 = _mm256_hadd_ps(acc[4], acc[5]), s67 = _mm256_hadd_ps(acc[6], acc[7]);
  const __m256 s0123 = _mm256_hadd_ps(s01, s23), s4567 = _mm256_hadd_ps(s45, s67);
  // Lane halves hold the low and high 128-bit partial sums of rows 0-3 and 4-7.
  const __m256 sums = _mm256_add_ps(_mm256_permute2f128_ps(s0123, s4567, 0x20), _mm256_permute2f128_ps(s0123, s4567, 0x31));
  _mm256_storeu_ps(scores, _mm256_mul_ps(sums, _mm256_set1_ps(scale)));
}

// out[0, 32) += sum_c w[c] V[row c][0, 32) over all seen rows, in order, with two accumulator
// sets (even and odd c) so that consecutive rows do not wait on each other's FMAs.
template <class E>
inline void weighted_rows32(const AttentionKeys<E>& kv, const float* w, int64_t column, float* out) {
  const int64_t hd = kv.head_dim, count = kv.prefix + kv.extra_count;
  __m256 a[4], b[4];
  SPECD_UNROLL for (int v = 0; v < 4; ++v) {
    a[v] = _mm256_setzero_ps();
    b[v] = _mm256_setzero_ps();
  }
  int64_t c = 0;
  for (; c + 2 <= count; c += 2) {
    const E* v0 = kv.values + seen_row(kv, c) * hd + column;
    const E* v1 = kv.values + seen_row(kv, c + 1) * hd + column;
    const __m256 w0 = _mm256_set1_ps(w[c]), w1 = _mm256_set1_ps(w[c + 1]);
    SPECD_UNROLL for (int v = 0; v < 4; ++v) {
      a[v] = _mm256_fmadd_ps(w0, KvElement<E>::load8(v0 + v * 8), a[v]);
      b[v] = _mm256_fmadd_ps(w1, KvElement<E>::load8(v1 + v * 8), b[v]);
    }
  }
  if (c < count) {
    const E* v0 = kv.values + seen_row(kv, c) * hd + column;
    const __m256 w0 = _mm256_set1_ps(w[c]);
    SPECD_UNROLL for (int v = 0; v < 4; ++v) a[v] = _mm256_fmadd_ps(w0, KvElement<E>::load8(v0 + v * 8), a[v]);
  }
  SPECD_UNROLL for (int v = 0; v < 4; ++v) _mm256_storeu_ps(out + column + v * 8, _mm256_add_ps(a[v], b[v]));
}
#endif

// out = sum_c w[c] V[row c] over the seen rows, 32 columns at a time.
template <class E>
void weighted_sum(const AttentionKeys<E>& kv, const float* w, float* out) {
  const int64_t hd = kv.head_dim;
  int64_t d = 0;
#ifdef SPECD_HAVE_AVX2
  for (; d + 32 <= hd; d += 32) weighted_rows32(kv, w, d, out);
#endif
  std::fill(out + d, out + hd, 0.0f);
  for (int64_t c = 0; c < kv.prefix + kv.extra_count; ++c) {
    const E* v = kv.values + seen_row(kv, c) * hd;
    for (int64_t i = d; i < hd; ++i) out[i] += w[c] * KvElement<E>::widen(v[i]);
  }
}

// q . K[row] for the scalar path: float keys as they are, others widened first (exactly), so
// that the dot product's arithmetic is the same at every precision.
template <class E>
float scalar_score(const float* q, const E* k, int64_t hd) {
  if constexpr (std::is_same_v<E, float>) {
    return dot(q, k, hd);
  } else {
    float row[512];
    float sum = 0.0f;
    for (int64_t d0 = 0; d0 < hd; d0 += 512) {  // head sizes past 512 in pieces (no such model is known)
      const int64_t len = std::min<int64_t>(512, hd - d0);
      widen_kv_row(k + d0, len, row);
      sum += dot(q + d0, row, len);
    }
    return sum;
  }
}

}  // namespace

template <class E>
void attend_head(const AttentionKeys<E>& kv, const float* q, float scale, float* scores, float* out) {
  const int64_t hd = kv.head_dim, count = kv.prefix + kv.extra_count;
  int64_t c = 0;
#ifdef SPECD_HAVE_AVX2
  if (hd % 8 == 0) {
    const E* rows[8];
    for (; c < count; c += 8) {
      // A short last block repeats its last row; only the real rows' scores are kept.
      const int64_t valid = std::min<int64_t>(8, count - c);
      for (int64_t t = 0; t < 8; ++t) rows[t] = kv.keys + seen_row(kv, c + std::min(t, valid - 1)) * hd;
      float block[8];
      score_block8(q, rows, hd, scale, block);
      std::copy(block, block + valid, scores + c);
    }
  }
#endif
  for (; c < count; ++c) scores[c] = scalar_score(q, kv.keys + seen_row(kv, c) * hd, hd) * scale;
  const float inv_sum = 1.0f / exp_shifted_sum(scores, count, max_value(scores, count));
  weighted_sum(kv, scores, out);
  for (int64_t i = 0; i < hd; ++i) out[i] *= inv_sum;
}

template <class E>
void write_key_tiles(const E* keys, int64_t head_dim, int64_t first, int64_t last, E* tiles) {
  for (int64_t r = first; r < last; ++r) {
    E* column = tiles + (r / 16) * head_dim * 16 + r % 16;
    const E* k = keys + r * head_dim;
    for (int64_t d = 0; d < head_dim; ++d) column[d * 16] = k[d];
  }
}

int64_t batch_attention_scratch(int count, int64_t rows, int64_t head_dim) { return count * (rows + 16 + head_dim); }

#ifdef SPECD_HAVE_AVX512

bool batch_attention_supported(int64_t head_dim) {
  return head_dim == 16 || head_dim == 32 || head_dim == 64 || head_dim == 128;
}

namespace {

// Scores of Q queries (scaled, qs[q * head_dim + d]) against T consecutive tiles from `block`:
// per dimension, T tile loads serve Q broadcasts, and the Q x T accumulators are independent
// chains (Q x T >= 6 keeps the FMA pipes busy).
template <class E, int Q, int T>
void score_tiles(const E* tiles, int64_t head_dim, const float* qs, int64_t block, float* scores, int64_t stride) {
  __m512 acc[Q][T];
  SPECD_UNROLL for (int q = 0; q < Q; ++q)
    SPECD_UNROLL for (int t = 0; t < T; ++t) acc[q][t] = _mm512_setzero_ps();
  const E* tile = tiles + block * head_dim * 16;
  for (int64_t d = 0; d < head_dim; ++d) {
    __m512 k[T];
    SPECD_UNROLL for (int t = 0; t < T; ++t) k[t] = KvElement<E>::load16(tile + (t * head_dim + d) * 16);
    SPECD_UNROLL for (int q = 0; q < Q; ++q) {
      const __m512 x = _mm512_set1_ps(qs[q * head_dim + d]);
      SPECD_UNROLL for (int t = 0; t < T; ++t) acc[q][t] = _mm512_fmadd_ps(x, k[t], acc[q][t]);
    }
  }
  SPECD_UNROLL for (int q = 0; q < Q; ++q)
    SPECD_UNROLL for (int t = 0; t < T; ++t) _mm512_storeu_ps(scores + q * stride + (block + t) * 16, acc[q][t]);
}

template <class E, int Q>
void score_all_tiles(const E* tiles, int64_t head_dim, const float* qs, int64_t blocks, float* scores, int64_t stride) {
  constexpr int T = Q == 1 ? 8 : Q == 2 ? 4 : Q <= 4 ? 2 : 1;
  int64_t b = 0;
  for (; b + T <= blocks; b += T) score_tiles<E, Q, T>(tiles, head_dim, qs, b, scores, stride);
  for (; b < blocks; ++b) score_tiles<E, Q, 1>(tiles, head_dim, qs, b, scores, stride);
}

template <class E>
void score_tiles_for(int queries, const E* tiles, int64_t head_dim, const float* qs, int64_t blocks, float* scores,
                     int64_t stride) {
  switch (queries) {
    case 1: return score_all_tiles<E, 1>(tiles, head_dim, qs, blocks, scores, stride);
    case 2: return score_all_tiles<E, 2>(tiles, head_dim, qs, blocks, scores, stride);
    case 3: return score_all_tiles<E, 3>(tiles, head_dim, qs, blocks, scores, stride);
    case 4: return score_all_tiles<E, 4>(tiles, head_dim, qs, blocks, scores, stride);
    case 5: return score_all_tiles<E, 5>(tiles, head_dim, qs, blocks, scores, stride);
    case 6: return score_all_tiles<E, 6>(tiles, head_dim, qs, blocks, scores, stride);
    case 7: return score_all_tiles<E, 7>(tiles, head_dim, qs, blocks, scores, stride);
    case 8: return score_all_tiles<E, 8>(tiles, head_dim, qs, blocks, scores, stride);
  }
  throw std::logic_error("score_tiles_for: 1 to 8 queries");
}

// out[q] = sum_c w[q * stride + c] V[c] over rows [0, rows), D vectors of 16 per row: each value
// row is loaded once for the Q queries.
template <class E, int Q, int D>
void weigh_values(const E* values, int64_t rows, const float* w, int64_t stride, float* const* out) {
  __m512 acc[Q][D];
  SPECD_UNROLL for (int q = 0; q < Q; ++q)
    SPECD_UNROLL for (int j = 0; j < D; ++j) acc[q][j] = _mm512_setzero_ps();
  for (int64_t c = 0; c < rows; ++c) {
    __m512 v[D];
    SPECD_UNROLL for (int j = 0; j < D; ++j) v[j] = KvElement<E>::load16(values + (c * D + j) * 16);
    SPECD_UNROLL for (int q = 0; q < Q; ++q) {
      const __m512 x = _mm512_set1_ps(w[q * stride + c]);
      SPECD_UNROLL for (int j = 0; j < D; ++j) acc[q][j] = _mm512_fmadd_ps(x, v[j], acc[q][j]);
    }
  }
  SPECD_UNROLL for (int q = 0; q < Q; ++q)
    SPECD_UNROLL for (int j = 0; j < D; ++j) _mm512_storeu_ps(out[q] + j * 16, acc[q][j]);
}

// Queries per pass of weigh_values: Q x D accumulators within 16 of the 32 registers.
template <int D>
constexpr int values_pass() { return D <= 2 ? 8 : 16 / D; }

template <class E, int D>
void weigh_values_for(int queries, const E* values, int64_t rows, const float* w, int64_t stride, float* const* out) {
  for (int first = 0; first < queries; first += values_pass<D>()) {
    const int count = std::min(values_pass<D>(), queries - first);
    const float* wq = w + first * stride;
    float* const* oq = out + first;
    switch (count) {
      case 1: weigh_values<E, 1, D>(values, rows, wq, stride, oq); break;
      case 2: weigh_values<E, 2, D>(values, rows, wq, stride, oq); break;
      case 3: if constexpr (values_pass<D>() >= 3) weigh_values<E, 3, D>(values, rows, wq, stride, oq); break;
      case 4: if constexpr (values_pass<D>() >= 4) weigh_values<E, 4, D>(values, rows, wq, stride, oq); break;
      case 5: if constexpr (values_pass<D>() >= 5) weigh_values<E, 5, D>(values, rows, wq, stride, oq); break;
      case 6: if constexpr (values_pass<D>() >= 6) weigh_values<E, 6, D>(values, rows, wq, stride, oq); break;
      case 7: if constexpr (values_pass<D>() >= 7) weigh_values<E, 7, D>(values, rows, wq, stride, oq); break;
      case 8: if constexpr (values_pass<D>() >= 8) weigh_values<E, 8, D>(values, rows, wq, stride, oq); break;
    }
  }
}

// q . k with the arithmetic of one lane of score_tiles: a fused multiply-add per dimension, in
// order. A key's score must not depend on whether it came from the tiles or from a query's own
// rows: the same token verified in a batch or decoded alone must get bit-identical logits, or a
// near-tie could make a speculative method's greedy output differ from AR's.
template <class E>
float tile_order_dot(const float* q, const E* k, int64_t n) {
  float acc = 0.0f;
  for (int64_t d = 0; d < n; ++d) acc = std::fma(q[d], KvElement<E>::widen(k[d]), acc);
  return acc;
}

template <class E>
void add_scaled16(float w, const E* x, float* y, int64_t n) {
  const __m512 s = _mm512_set1_ps(w);
  for (int64_t i = 0; i < n; i += 16) _mm512_storeu_ps(y + i, _mm512_fmadd_ps(s, KvElement<E>::load16(x + i), _mm512_loadu_ps(y + i)));
}

// Query q's own row number j: the rest of its prefix, then its extra rows.
template <class E>
int64_t own_row(const AttentionKeys<E>& own, int64_t shared, int64_t j) {
  const int64_t tail = own.prefix - shared;
  return j < tail ? shared + j : own.extra[j - tail];
}

}  // namespace

template <class E>
void attend_batch(const QueryBatch<E>& b, float scale, float* scratch) {
  const int64_t hd = b.head_dim, shared = b.shared, blocks = (shared + 15) / 16;
  int64_t rows = 0;
  for (int q = 0; q < b.count; ++q) rows = std::max(rows, b.own[q].prefix + b.own[q].extra_count);
  const int64_t stride = rows + 16;  // a query's scores: [0, shared) from tiles, then its own rows
  float* scores = scratch;
  float* qs = scratch + b.count * stride;
  for (int q = 0; q < b.count; ++q)
    for (int64_t d = 0; d < hd; ++d) qs[q * hd + d] = b.q[q][d] * scale;

  for (int first = 0; first < b.count; first += 8)
    score_tiles_for(std::min(8, b.count - first), b.tiles, hd, qs + first * hd, blocks, scores + first * stride, stride);
  float inv_sum[kMaxBatchQueries];
  for (int q = 0; q < b.count; ++q) {
    const AttentionKeys<E>& own = b.own[q];
    float* s = scores + q * stride;
    const int64_t own_rows = own.prefix - shared + own.extra_count;
    for (int64_t j = 0; j < own_rows; ++j) s[shared + j] = tile_order_dot(qs + q * hd, b.keys + own_row(own, shared, j) * hd, hd);
    const int64_t count = shared + own_rows;
    inv_sum[q] = 1.0f / exp_shifted_sum(s, count, max_value(s, count));
  }

  switch (hd / 16) {
    case 1: weigh_values_for<E, 1>(b.count, b.values, shared, scores, stride, b.out); break;
    case 2: weigh_values_for<E, 2>(b.count, b.values, shared, scores, stride, b.out); break;
    case 4: weigh_values_for<E, 4>(b.count, b.values, shared, scores, stride, b.out); break;
    case 8: weigh_values_for<E, 8>(b.count, b.values, shared, scores, stride, b.out); break;
    default: throw std::logic_error("attend_batch: unsupported head size");
  }
  for (int q = 0; q < b.count; ++q) {
    const AttentionKeys<E>& own = b.own[q];
    const float* s = scores + q * stride;
    const int64_t own_rows = own.prefix - shared + own.extra_count;
    for (int64_t j = 0; j < own_rows; ++j) add_scaled16(s[shared + j], b.values + own_row(own, shared, j) * hd, b.out[q], hd);
    for (int64_t d = 0; d < hd; ++d) b.out[q][d] *= inv_sum[q];
  }
}

#else

bool batch_attention_supported(int64_t) { return false; }

template <class E>
void attend_batch(const QueryBatch<E>&, float, float*) { throw std::logic_error("this build has no batched attention kernel"); }

#endif

#define SPECD_ATTENTION_FOR(E)                                                                           \
  template void attend_head<E>(const AttentionKeys<E>&, const float*, float, float*, float*);          \
  template void attend_batch<E>(const QueryBatch<E>&, float, float*);                                   \
  template void write_key_tiles<E>(const E*, int64_t, int64_t, int64_t, E*);
SPECD_ATTENTION_FOR(float)
SPECD_ATTENTION_FOR(Bf16)
SPECD_ATTENTION_FOR(Half)
#undef SPECD_ATTENTION_FOR

}  // namespace specd::cpu
