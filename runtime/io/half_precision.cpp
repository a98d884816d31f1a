#include "io/half_precision.h"

#include <cmath>
#include <cstring>

namespace specd {
namespace {

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Drops the low `shift` bits of `value`, rounding to nearest with ties to even.
uint32_t shift_right_rne(uint32_t value, int shift) {
  const uint32_t kept = value >> shift;
  const uint32_t rest = value & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
}

}  // namespace

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1f;
  const uint32_t mantissa = h & 0x3ff;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return bits_float(sign | 0x7f800000 | (mantissa << 13));  // inf or nan
  return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t float_to_half(float f) {
  const uint32_t x = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t ax = x & 0x7fffffff;
  if (ax > 0x7f800000) {  // nan: keep the top payload bits and make sure it stays a (quiet) nan
    return sign | 0x7e00 | static_cast<uint16_t>((ax >> 13) & 0x3ff);
  }
  if (ax >= 0x477ff000) return sign | 0x7c00;  // >= 65520 (halfway past the largest half) or inf
  if (ax >= 0x38800000) {                      // normal half: rebias the exponent by 127-15
    return sign | static_cast<uint16_t>(shift_right_rne(ax - 0x38000000, 13));
  }
  if (ax <= 0x33000000) return sign;  // <= 2^-25, half the smallest subnormal: rounds to zero
  // Subnormal half: the value in units of 2^-24 is the full float mantissa shifted right.
  const uint32_t mantissa = (ax & 0x7fffff) | 0x800000;
  const int shift = 126 - static_cast<int>(ax >> 23);
  return sign | static_cast<uint16_t>(shift_right_rne(mantissa, shift));
}

uint16_t float_to_bf16(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x0040);  // quiet nan
  return static_cast<uint16_t>(shift_right_rne(x, 16));
}

}  // namespace specd
