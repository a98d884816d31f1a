#pragma once
// Loading BF16 weights in the pair layout (matmul_bf16_dot.h), shared by the kernels that run on
// them: vdpbf16ps takes a pair as stored; FMA takes it widened to two float vectors, even k and
// odd k (a shift and a mask).
#include <cstdint>

#if defined(__AVX512F__)
#include <immintrin.h>

#include "util/simd.h"

namespace specd::cpu {

// Weights are prefetched this many k-pairs (64-byte lines) ahead in each panel. A model's weights
// stream from L3, and with 2 or more rows the tile's arithmetic no longer hides the loads: without
// it, a 4-row tile from L3 took twice its time from L2; with it, ~1.25x.
constexpr int64_t kPrefetchPairs = 48;

// Each 32-bit lane shifted left by 16: a BF16 in the low half becomes its float. (A vector shift,
// not _mm512_slli_epi32, whose _mm512_undefined_epi32 GCC 12 warns about.)
inline __m512i shift_up(__m512i v) {
  using Lanes = unsigned int __attribute__((vector_size(64)));
  return (__m512i)((Lanes)v << 16);
}

// k-pair `kp` of P panels (`panel_stride` elements apart, from w), widened: even[p], odd[p].
template <int P>
inline void load_widened_pairs(const uint16_t* w, int64_t panel_stride, int64_t kp, __m512 (&even)[P], __m512 (&odd)[P]) {
  const __m512i high_half = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
  SPECD_UNROLL for (int p = 0; p < P; ++p) {
    _mm_prefetch(reinterpret_cast<const char*>(w + p * panel_stride + (kp + kPrefetchPairs) * 32), _MM_HINT_T0);
    const __m512i v = _mm512_loadu_si512(w + p * panel_stride + kp * 32);
    even[p] = _mm512_castsi512_ps(shift_up(v));
    odd[p] = _mm512_castsi512_ps(_mm512_and_si512(v, high_half));
  }
}

}  // namespace specd::cpu
#endif
