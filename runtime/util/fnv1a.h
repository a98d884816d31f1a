#pragma once
// FNV-1a 64, the hash of the project's fingerprints (output token ids in traces, a tokenizer file
// in a SAM corpus), fed byte by byte and printed as 16 lowercase hex digits.
#include <cstdint>
#include <string>

namespace specd {

constexpr uint64_t kFnv1aOffset = 0xcbf29ce484222325ULL;

inline uint64_t fnv1a_byte(uint64_t hash, unsigned char byte) { return (hash ^ byte) * 0x100000001b3ULL; }

// 16 lowercase hex digits.
std::string hash_hex(uint64_t hash);

}  // namespace specd
