#pragma once
// What one forward must read from memory and compute, for specd bench's bandwidth and FLOP/s
// columns: pure arithmetic from the model's shape and the byte sizes the model reports.
//
// Bytes read: every weight matrix once (LlamaModel::weight_bytes()), except the embedding table,
// of which only the n new tokens' rows are read (and lm_head only when some logits are wanted);
// plus, per layer, the keys and values of every cached row the new tokens attend to (past + n:
// the new rows are written, then read back). The CPU kernels keep a second, tiled copy of the keys
// (kv_bytes counts it), but attention reads each key row in one form only: the tiles for the
// prefix all of a batch of queries share, the row-major keys after it. Norm gains, biases,
// activations and the writes of new rows are left out: they are small beside the matrices.
//
// FLOPs: 2 per multiply-add of each projection (q/k/v, o, gate/up, down) for the n rows and of
// lm_head for the logits rows, and attention's QK^T and PV over the rows each token sees (token i
// of a chain sees past + i + 1). Norms, RoPE, softmax and SiLU are left out.
#include <cstdint>
#include <vector>

#include "io/model_config.h"

namespace specd {

struct ModelByteSizes {
  int64_t weight_bytes = 0;         // LlamaModel::weight_bytes()
  int weight_element_bytes = 0;     // of the matrices and the embedding table (one checkpoint dtype)
  int64_t kv_read_bytes_per_row = 0;  // keys (or their tiles) and values of one row, all layers
};

struct ForwardTraffic {
  double bytes = 0;
  double flops = 0;
};

// Attention's bytes read per cached row from LlamaModel::kv_bytes(16) (keys, values and, with
// key_tiles, the tiled key copy, of 16 rows: one whole tile block): keys and values only.
int64_t kv_read_bytes_per_row(int64_t kv_bytes_of_16_rows, bool key_tiles);

// One forward of a chain of n new tokens on `past` cached rows with logits for `logit_rows` rows.
ForwardTraffic forward_traffic(const ModelConfig& cfg, const ModelByteSizes& sizes, int64_t n, int64_t past,
                               int64_t logit_rows);

// The mean per decoded token of autoregressive decoding of `new_tokens` tokens after each prompt
// length, as specd bench times it: the first token comes from the prefill, then new_tokens - 1
// one-token forwards on prompt, prompt + 1, ... cached rows, one logits row each.
ForwardTraffic decode_traffic(const ModelConfig& cfg, const ModelByteSizes& sizes, const std::vector<int64_t>& prompt_lengths,
                              int64_t new_tokens);

}  // namespace specd
