#pragma once
// How far a 16-bit KV cache moves a model's outputs from a float32 cache's: both caches run the
// same tokens (forwards of 64 tokens, every position's logits; on the batch-invariant CPU kernels
// that is one full forward's logits), and each position's next-token distribution is compared.
// specd bench reports it beside the speed of the cache type.
#include <cstdint>
#include <vector>

#include "model/kv_cache.h"

namespace specd {

class LlamaModel;

struct KvPrecisionDistance {
  int64_t positions = 0;
  double max_abs_logit = 0;   // largest |logit - float32 cache's logit| over positions and vocabulary
  double mean_abs_logit = 0;  // mean of the same over positions and vocabulary
  double mean_kl = 0;         // mean over positions of KL(float32 cache's softmax || this cache's), nats
  double max_kl = 0;
  double top1_agreement = 0;  // fraction of positions whose argmax is the float32 cache's
};

// The logits of `tokens` with a cache of `type` against a float32 cache, on the same model.
KvPrecisionDistance kv_precision_distance(const LlamaModel& model, KvType type, const std::vector<int32_t>& tokens);

}  // namespace specd
