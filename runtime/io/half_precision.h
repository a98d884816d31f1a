#pragma once
// IEEE binary16 ("half", safetensors F16) and bfloat16 (BF16) conversions to and from float.
// Float-to-narrow conversions round to nearest, ties to even, as PyTorch does.
#include <cstdint>
#include <cstring>

namespace specd {

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
// Inline: the CPU kernels' portable path widens every weight with it.
inline float bf16_to_float(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
uint16_t float_to_bf16(float f);

}  // namespace specd
