#pragma once
// BF16 weights on CPUs with AMX (Intel Sapphire Rapids and later): a tile instruction (tdpbf16ps)
// multiplies up to 16 rows by 16 outputs over 32 k at once, 16x what a vector instruction does,
// so verifying 2-32 tokens costs little more than one token's read of the weights.
//
// Its sums are not vdpbf16ps's. On a Sapphire Rapids, each output of one tile instruction is
// acc + (E + O): E the even-k products of its 16 k-pairs added in k order from zero, O the odd-k
// ones, float32 with round-to-nearest-even (the one order of those tried that matched; the
// startup check in matmul_bf16_dot.cpp confirms it on each CPU). One row runs FMA on widened
// weights in that order (the tiles gain nothing there), so a model's one-token and many-token
// forwards agree bit for bit.
//
// Both take the weights in the BF16 pair layout (matmul_bf16_dot.h): a panel's 16 k-pairs are
// one 1 KiB tile of the instruction's B operand as stored.
#include <cstdint>

#include "model/cpu/matmul.h"

namespace specd::cpu {

// Compiled in, and the operating system lets this process use the tiles (Linux asks each process
// to request them: arch_prctl ARCH_REQ_XCOMP_PERM).
bool amx_bf16_usable();

// The pairs of one row of x as the tiles read them: pairs rounded up to whole 16-pair tiles.
int64_t amx_row_stride(int64_t pairs);

// Panels [begin, end) of 2 or more rows. x: the rows rounded to BF16, a row every
// amx_row_stride(pairs) 32-bit pairs, zero past `in`.
void amx_panels(const MatmulArgs& a, const uint32_t* x, int64_t pairs, int64_t begin, int64_t end);

// Panels [begin, end) of one row, with the tiles' bits. x: the row rounded to BF16 and widened
// back, 2 * pairs floats.
void amx_order_row_panels(const MatmulArgs& a, const float* x, int64_t pairs, int64_t begin, int64_t end);

}  // namespace specd::cpu
