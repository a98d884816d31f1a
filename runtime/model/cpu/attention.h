#pragma once
// One query head's attention over the cached keys and values of its KV head, for head sizes that
// are a multiple of 8 (vectorised) or anything else (scalar). The keys a token sees are a shared
// prefix of rows [0, prefix) plus a few more rows (its tree ancestors and itself).
//
// Both kernels are batch-invariant: a key's score and weight are computed by the same arithmetic
// wherever its row falls (prefix, tree row, tile or not), so a token's output is bit-identical
// whether it is decoded alone or verified among others. Greedy speculative decoding must equal AR
// exactly, and a near-tie decided differently would break that.
//
// Keys and values are of a KV element type E (cpu/kv_element.h: float, Bf16 or Half), widened to
// float as they are loaded; queries, scores and outputs are float.
#include <cstdint>

#include "model/cpu/kv_element.h"

namespace specd::cpu {

template <class E>
struct AttentionKeys {
  const E* keys;    // [rows, head_dim] of one KV head
  const E* values;  // [rows, head_dim]
  int64_t head_dim;
  int64_t prefix;          // rows [0, prefix) are all seen
  const int32_t* extra;    // then these rows
  int64_t extra_count;
};

// out[head_dim] = softmax_c(scale * q . K[c]) V[c] over the seen rows c. `scores` has room for
// prefix + extra_count floats.
template <class E>
void attend_head(const AttentionKeys<E>& kv, const float* q, float scale, float* scores, float* out);

// Several queries of one KV head at once (the heads that share it, for a few tokens), so that each
// key and value row is loaded once for all of them instead of once per query: on a CPU, attention
// over a long context is otherwise the part of a forward that grows fastest with the number of
// tokens verified. Rows [0, shared) are seen by every query; their scores come from key tiles
// (KvCache::key_tiles: blocks of 16 rows, dimension-major, so one vector holds one dimension of
// 16 keys and a broadcast query element multiplies all 16). Each query's further rows (the rest of
// its prefix, then its extra rows) use the row-major keys.
template <class E>
struct QueryBatch {
  const E* tiles;   // this KV head's key tiles, valid for rows [0, shared)
  const E* keys;    // [rows, head_dim] of this KV head
  const E* values;  // [rows, head_dim]
  int64_t head_dim;
  int64_t shared;
  int count;              // queries, at most kMaxBatchQueries
  const float* q[16];     // each head_dim floats
  AttentionKeys<E> own[16];  // each query's rows: prefix (>= shared), extra rows; keys/values unused
  float* out[16];         // each head_dim floats
};
constexpr int kMaxBatchQueries = 16;

// True when this build has the batched kernel for this head size (AVX-512; head_dim 16, 32, 64 or
// 128). Otherwise use attend_head per query.
bool batch_attention_supported(int64_t head_dim);
// Scratch: at least batch_attention_scratch(count, rows) floats, rows = the largest row count a
// query sees.
int64_t batch_attention_scratch(int count, int64_t rows, int64_t head_dim);
template <class E>
void attend_batch(const QueryBatch<E>& batch, float scale, float* scratch);

// Elements of one KV head's key tiles in a cache of `capacity` rows: blocks of 16 rows, each stored
// dimension-major ([blocks, head_dim, 16], the layout of KvCache::key_tiles per head).
inline int64_t key_tiles_per_head(int64_t capacity, int64_t head_dim) { return (capacity + 15) / 16 * head_dim * 16; }

// Copies rows [first, last) of one KV head's keys ([rows, head_dim]) into its tiles.
template <class E>
void write_key_tiles(const E* keys, int64_t head_dim, int64_t first, int64_t last, E* tiles);

}  // namespace specd::cpu
