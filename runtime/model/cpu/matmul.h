#pragma once
// y = x W^T (+ bias), or y += x W^T, for the row counts decoding uses (1 to a few dozen): the
// regime where BLAS sgemm is weak (a single row runs 2-2.6x slower than gemv, and 2-16 rows are
// poorly blocked). W [out, in] is packed once, at load time, into panels of 16 output rows stored
// k-major, so a register tile multiplies a broadcast element of x into two 8-wide vectors of W and
// writes 16 contiguous outputs: no horizontal sums, and each W load serves every row of the tile.
// W may be stored in F32, BF16 or F16 and is widened to float in registers; the arithmetic is
// float32.
#include <cstdint>

namespace specd::cpu {

enum class WeightType {
  F32,
  BF16,
  F16,
  BF16Pairs,  // BF16 in the k-pair layout of matmul_bf16_dot.h (activations rounded to BF16)
};

constexpr int64_t kPanelWidth = 16;

inline int64_t panel_count(int64_t out) { return (out + kPanelWidth - 1) / kPanelWidth; }
// Elements of a packed [out, in] matrix: whole panels, zero-padded past `out` (and, for
// BF16Pairs, past an odd `in`).
int64_t packed_elements(WeightType type, int64_t out, int64_t in);

// Where column c (0-15) of a panel row is stored: in place, except BF16, which interleaves the two
// halves (columns j and 8 + j side by side) so that the kernel widens them with a shift and a mask.
inline int64_t panel_slot(WeightType type, int64_t c) { return type == WeightType::BF16 ? (c % 8) * 2 + c / 8 : c; }

// The x rows of one product in as few near-equal tiles of at most `most` rows as possible, so that
// W is streamed once per tile: 8 rows at most 6 -> 4 + 4, 16 -> 6 + 5 + 5.
struct RowTiles {
  int64_t count, base, larger;  // `larger` tiles of base + 1 rows, then base-row tiles
  RowTiles(int64_t rows, int64_t most) : count((rows + most - 1) / most), base(rows / count), larger(rows % count) {}
  int64_t rows(int64_t tile) const { return base + (tile < larger ? 1 : 0); }
};

// packed[(p * in + k) * 16 + panel_slot(c)] = w[(p * 16 + c) * in + k], or 0 where p * 16 + c >= out.
// Both buffers hold elements of `type`.
void pack_panels(const void* w, WeightType type, int64_t out, int64_t in, void* packed);

struct MatmulArgs {
  const float* x;     // [rows, in], row stride in
  const void* w;      // W [out, in] packed by pack_panels, elements of `type`
  WeightType type;
  const float* bias;  // [out] or nullptr
  float* y;           // [rows, out], row stride out
  int64_t rows, in, out;
  bool accumulate;    // y += instead of y =
};

// Splits the panels across `threads` OpenMP threads.
void matmul(const MatmulArgs& args, int threads);

// One row of an unpacked W [rows, width] widened to float (embedding lookups).
void widen_row(const void* w, WeightType type, int64_t row, int64_t width, float* out);

}  // namespace specd::cpu
