#pragma once
// AVX2/FMA/F16C intrinsics when the build targets them (-march=native on such a CPU); the kernels
// fall back to scalar loops otherwise.
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define SPECD_HAVE_AVX2 1
#endif

// Fully unrolled loops over arrays of vector registers: GCC 12 otherwise keeps such arrays on the
// stack and stores them on every iteration of the enclosing loop.
#define SPECD_UNROLL _Pragma("GCC unroll 16")

#if defined(__AVX512F__)
#include <immintrin.h>
namespace specd {
// The sum of a vector's 16 lanes. Not _mm512_reduce_add_ps: GCC 12 warns of an uninitialised
// operand inside it (a false positive).
inline float lane_sum(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float total = 0;
  for (float x : lanes) total += x;
  return total;
}
}  // namespace specd
#endif
