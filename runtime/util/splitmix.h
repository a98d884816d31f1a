#pragma once
// SplitMix64's output function: turns neighbouring seeds (a step, a prompt index) into
// decorrelated 64-bit values, for seed streams that must not depend on the order work is done in.
#include <cstdint>

namespace specd {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace specd
