#pragma once
// Small vectorised loops of the CPU forward pass and of per-step metrics (AVX2/FMA when the
// build has them).
#include <cstdint>

namespace specd::cpu {

float dot(const float* a, const float* b, int64_t n);
// max_i v[i] for n >= 1.
float max_value(const float* v, int64_t n);
// The first i with v[i] == max_value (what std::max_element returns), for n >= 1: greedy
// decoding and acceptance take it once per verified row, over the whole vocabulary.
int64_t first_max_index(const float* v, int64_t n);
// v[i] = exp(v[i] - shift); returns the sum of the results.
float exp_shifted_sum(float* v, int64_t n, float shift);
// out[i] = silu(gate[i]) * up[i]
void silu_mul(const float* gate, const float* up, float* out, int64_t n);
// out = x / sqrt(mean(x^2) + eps)
void rms_normalize(const float* x, float* out, int64_t n, float eps);

}  // namespace specd::cpu
