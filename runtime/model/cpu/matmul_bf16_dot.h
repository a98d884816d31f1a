#pragma once
// BF16 weights on CPUs with AVX512-BF16 (Zen 4, Sapphire Rapids and later): the activations are
// rounded to BF16 as well and multiplied with the dot-product instruction (vdpbf16ps: 32
// multiply-adds into 16 float32 lanes, no widening of the weights), as llama.cpp does for BF16
// models. Products of two BF16 values are exact and the sums float32, so the only change from
// the float32-activation kernels is the rounding of the activations (relative 2^-9). About 2x
// faster for the few-token forwards that speculative verification runs, and faster at one token.
//
// Layout: panels of 16 outputs, k in pairs: packed[((p * pairs + kp) * 16 + c) * 2 + j] =
// W[p * 16 + c, 2 kp + j], zero past `out` and past `in` (odd `in`).
#include <cstdint>

#include "model/cpu/matmul.h"

namespace specd::cpu {

// Whether this build has the instruction (it is compiled for the build machine's CPU).
bool bf16_dot_supported();

int64_t bf16_pair_elements(int64_t out, int64_t in);
void pack_bf16_pairs(const uint16_t* w, int64_t out, int64_t in, uint16_t* packed);
// How the product runs: vdpbf16ps at every row count (Dot); vdpbf16ps at one row and, from two,
// FMA on the weights widened to float, which gives the instruction's bits (matmul_bf16_dot.cpp,
// widened_tile) and runs faster where the CPU retires more multiply-adds a cycle by FMA; or AMX
// tiles from two rows and FMA in the tiles' order at one row (matmul_bf16_amx.h). Each gives the
// same bits at one row and at many, which a model's lossless speculation rests on; the kernels'
// bits differ from each other.
enum class Bf16Kernel { Dot, Widened, Amx };
// This process's kernel, chosen on the first call: Amx where the CPU has AMX and its check passes;
// else Widened where FMA retires 1.5x the multiply-adds vdpbf16ps does and the widened tiles match
// the instruction bit for bit here; else Dot (Dot, unused, without AVX512-BF16).
Bf16Kernel bf16_kernel();
bool bf16_kernel_usable(Bf16Kernel kernel);
const char* bf16_kernel_name(Bf16Kernel kernel);
// bf16_kernel() in a sentence, for the tools' reports.
const char* bf16_kernel_summary();

// MatmulArgs with type BF16Pairs; x is float32 and rounded here. Runs `kernel` (bf16_kernel()
// unless named).
void matmul_bf16_dot(const MatmulArgs& args, int threads);
void matmul_bf16_dot(const MatmulArgs& args, int threads, Bf16Kernel kernel);

}  // namespace specd::cpu
