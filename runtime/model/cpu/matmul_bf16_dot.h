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
// How tiles of 2 or more rows multiply: with vdpbf16ps, or with the weights widened to float and
// FMA, which gives the instruction's bits (matmul_bf16_dot.cpp, widened_tile) and runs faster
// where the CPU retires more multiply-adds a cycle by FMA (the Intel Xeon kind).
enum class Bf16Rows { Dot, Widened };
// Widened where this CPU's FMA retires 1.5x the multiply-adds vdpbf16ps does and the widened tiles
// match the instruction bit for bit here (checked once per process, on the first call); Dot
// without AVX512-BF16.
Bf16Rows bf16_rows_kernel();

// MatmulArgs with type BF16Pairs; x is float32 and rounded here. One row always runs vdpbf16ps;
// 2 or more run `rows_kernel` (bf16_rows_kernel() unless named).
void matmul_bf16_dot(const MatmulArgs& args, int threads);
void matmul_bf16_dot(const MatmulArgs& args, int threads, Bf16Rows rows_kernel);

}  // namespace specd::cpu
