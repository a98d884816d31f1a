#pragma once
// The BPE merge loop: repeatedly fuse the adjacent pair with the lowest merge rank (leftmost
// first among equal ranks) until no listed pair remains, as Hugging Face's BPE model does.
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace specd {

struct MergeRule {
  int32_t rank;    // position in the merges list: lower merges first
  int32_t new_id;  // id of the fused token
};

inline uint64_t merge_pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

using MergeTable = std::unordered_map<uint64_t, MergeRule>;

// Rewrites `ids` (the symbols of one word) into their merged tokens.
void apply_merges(std::vector<int32_t>& ids, const MergeTable& merges);

}  // namespace specd
