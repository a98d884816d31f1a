#pragma once
// Everything a forward pass reads, in the layout it wants (see LayerWeights), and the validated
// shape of one forward call. Shared by the device-generic ATen forward and the CPU kernels.
#include <ATen/core/Tensor.h>

#include <vector>

#include "io/model_config.h"
#include "model/kv_cache.h"
#include "model/layer_weights.h"
#include "model/llama_model.h"

namespace specd {

struct ModelWeights {
  bool folded = true;   // see LayerWeights
  at::Tensor embed;     // [vocab, hidden]
  at::Tensor lm_head;   // [vocab, hidden] (the embedding itself when tied and not folded)
  at::Tensor final_gain;  // [hidden] float32; undefined when folded into lm_head
  at::Tensor rope_cos;  // [positions, head_dim / 2]
  at::Tensor rope_sin;
  std::vector<LayerWeights> layers;
};

// A forward call after validation: positions filled in, and parents given even for a chain.
struct ForwardPlan {
  int64_t n = 0;     // new tokens
  int64_t past = 0;  // cached tokens before them
  bool chain = true; // parents[i] == i - 1 for all i
  std::vector<int64_t> positions;
  std::vector<int64_t> parents;
};

ForwardResult forward_aten(const ModelConfig& cfg, const ModelWeights& weights, KvCache& cache,
                           const ForwardRequest& request, const ForwardPlan& plan);
ForwardResult forward_cpu_kernels(const ModelConfig& cfg, const ModelWeights& weights, KvCache& cache,
                                  const ForwardRequest& request, const ForwardPlan& plan, int threads);

}  // namespace specd
