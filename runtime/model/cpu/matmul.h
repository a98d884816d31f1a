#pragma once
// y = x W^T (+ bias), or y += x W^T, for the row counts decoding uses (1 to a few dozen): the
// regime where BLAS sgemm is weak (a single row runs 2-2.6x slower than gemv, and 2-16 rows are
// poorly blocked). W is row-major [out, in], so every output is a dot product of two contiguous
// rows; a register tile of W rows x X rows reuses each load several times. W may be stored in
// F32, BF16 or F16 and is widened to float in registers; the arithmetic is float32.
#include <cstdint>

namespace specd::cpu {

enum class WeightType { F32, BF16, F16 };

struct MatmulArgs {
  const float* x;     // [rows, in], row stride in
  const void* w;      // [out, in], row stride in, elements of `type`
  WeightType type;
  const float* bias;  // [out] or nullptr
  float* y;           // [rows, out], row stride out
  int64_t rows, in, out;
  bool accumulate;    // y += instead of y =
};

// Splits the output columns across `threads` OpenMP threads.
void matmul(const MatmulArgs& args, int threads);

// One row of W widened to float (embedding lookups).
void widen_row(const void* w, WeightType type, int64_t row, int64_t width, float* out);

}  // namespace specd::cpu
