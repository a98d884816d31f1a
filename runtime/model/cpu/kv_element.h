#pragma once
// The element types of the CPU kernels' KV rows (KvType): float32, or BF16 / F16 bits that the
// attention kernels widen to float32 as they load them. Widening is exact, so a key read by any
// of the kernels' paths (8- or 16-wide vectors, scalar, key tiles) is the same float, and the
// kernels stay batch-invariant at every precision (cpu/attention.h).
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "io/half_precision.h"
#include "model/kv_cache.h"
#include "util/simd.h"

namespace specd::cpu {

struct Bf16 {
  uint16_t bits;
};
struct Half {
  uint16_t bits;
};

template <class E>
struct KvElement;

template <>
struct KvElement<float> {
  static constexpr KvType type = KvType::F32;
  static float widen(float x) { return x; }
  static float narrow(float x) { return x; }
#ifdef SPECD_HAVE_AVX2
  static __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
#endif
#ifdef __AVX512F__
  static __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
#endif
};

template <>
struct KvElement<Bf16> {
  static constexpr KvType type = KvType::BF16;
  static float widen(Bf16 x) {
    const uint32_t bits = static_cast<uint32_t>(x.bits) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  static Bf16 narrow(float x) { return {float_to_bf16(x)}; }
#ifdef SPECD_HAVE_AVX2
  static __m256 load8(const Bf16* p) {
    const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
  }
#endif
#ifdef __AVX512F__
  static __m512 load16(const Bf16* p) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
  }
#endif
};

template <>
struct KvElement<Half> {
  static constexpr KvType type = KvType::F16;
  static float widen(Half x) { return half_to_float(x.bits); }
  static Half narrow(float x) { return {float_to_half(x)}; }
#ifdef SPECD_HAVE_AVX2
  static __m256 load8(const Half* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
#endif
#ifdef __AVX512F__
  static __m512 load16(const Half* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
#endif
};

// dst[i] = src[i] rounded to E.
template <class E>
void narrow_kv_row(const float* src, int64_t n, E* dst) {
  if constexpr (std::is_same_v<E, float>) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = KvElement<E>::narrow(src[i]);
  }
}

// dst[i] = src[i] as float.
template <class E>
void widen_kv_row(const E* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = KvElement<E>::widen(src[i]);
}

// Calls f(E{}) with E the element type of `type`.
template <class F>
decltype(auto) with_kv_element(KvType type, F&& f) {
  switch (type) {
    case KvType::BF16: return f(Bf16{});
    case KvType::F16: return f(Half{});
    case KvType::F32: break;
  }
  return f(0.0f);
}

}  // namespace specd::cpu
