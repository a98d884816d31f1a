#pragma once
// One query head's attention over the cached keys and values of its KV head, for head sizes that
// are a multiple of 8 (vectorised) or anything else (scalar). The keys a token sees are a shared
// prefix of rows [0, prefix) plus a few more rows (its tree ancestors and itself).
#include <cstdint>

namespace specd::cpu {

struct AttentionKeys {
  const float* keys;    // [rows, head_dim] of one KV head
  const float* values;  // [rows, head_dim]
  int64_t head_dim;
  int64_t prefix;          // rows [0, prefix) are all seen
  const int32_t* extra;    // then these rows
  int64_t extra_count;
};

// out[head_dim] = softmax_c(scale * q . K[c]) V[c] over the seen rows c. `scores` has room for
// prefix + extra_count floats.
void attend_head(const AttentionKeys& kv, const float* q, float scale, float* scores, float* out);

}  // namespace specd::cpu
