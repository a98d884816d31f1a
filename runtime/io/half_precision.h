#pragma once
// IEEE binary16 ("half", safetensors F16) and bfloat16 (BF16) conversions to and from float.
// Float-to-narrow conversions round to nearest, ties to even, as PyTorch does.
#include <cstdint>

namespace specd {

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);

}  // namespace specd
