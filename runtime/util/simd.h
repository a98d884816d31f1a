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
