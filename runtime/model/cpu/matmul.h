#pragma once
// y = x W^T (+ bias), or y += x W^T, for the row counts decoding uses (1 to a few dozen): the
// regime where BLAS sgemm is weak (a single row runs 2-2.6x slower than gemv, and 2-16 rows are
// poorly blocked). W is row-major [out, in], so every output is a dot product of two contiguous
// rows; a register tile of W rows x X rows reuses each load several times.
#include <cstdint>

namespace specd::cpu {

struct MatmulArgs {
  const float* x;     // [rows, in], row stride in
  const float* w;     // [out, in], row stride in
  const float* bias;  // [out] or nullptr
  float* y;           // [rows, out], row stride out
  int64_t rows, in, out;
  bool accumulate;    // y += instead of y =
};

// Splits the output columns across `threads` OpenMP threads.
void matmul(const MatmulArgs& args, int threads);

}  // namespace specd::cpu
