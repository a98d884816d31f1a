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
  bool bf16_pairs = false;  // BF16 matrices packed for the BF16 dot-product kernels (cpu/matmul_bf16_dot.h)
  at::Tensor embed;     // [vocab, hidden]
  at::Tensor lm_head;   // [vocab, hidden], or packed (see LayerWeights)
  at::Tensor final_gain;  // [hidden] float32; undefined when folded into lm_head
  std::vector<double> rope_inv_freq;  // [head_dim / 2]: RoPE's inverse frequencies
  std::vector<LayerWeights> layers;
};

// A forward call after validation: positions filled in, and who sees whom.
struct ForwardPlan {
  int64_t n = 0;       // new tokens
  int64_t past = 0;    // cached rows before them
  int64_t shared = 0;  // rows [0, shared) are seen by every new token
  bool causal = true;  // a plain chain: shared == past and each token sees all before it
  std::vector<int64_t> positions;
  // RoPE's cos and sin of each new token's position, [n, head_dim / 2]. Made per forward (a few
  // hundred cosines a step) rather than tabled for every position the config allows (a
  // max_position_embeddings of 2e9 would take hundreds of GB).
  std::vector<float> rope_cos, rope_sin;
  // visible[i * span + c]: new token i sees row shared + c, where span = past + n - shared.
  std::vector<uint8_t> visible;
  int64_t span() const { return past + n - shared; }
};

ForwardResult forward_aten(const ModelConfig& cfg, const ModelWeights& weights, KvCache& cache,
                           const ForwardRequest& request, const ForwardPlan& plan);
// W [out, in] in the panel layout the CPU kernels read (cpu/matmul.h), flat; BF16 in the k-pair
// layout of the BF16 dot-product kernels when bf16_pairs.
at::Tensor pack_for_cpu_kernels(const at::Tensor& w, bool bf16_pairs);
ForwardResult forward_cpu_kernels(const ModelConfig& cfg, const ModelWeights& weights, KvCache& cache,
                                  const ForwardRequest& request, const ForwardPlan& plan, int threads);

}  // namespace specd
