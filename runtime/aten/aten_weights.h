#pragma once
// Everything the ATen forward reads: float32 tensors on the model's device, q/k/v fused into one
// projection and gate/up into another, RMSNorm gains folded into the projection that follows them
// and 1/sqrt(head_dim) folded into the query rows (fewer operations per step).
#include <ATen/core/Tensor.h>

#include <vector>

#include "model/model_backend.h"

namespace specd {

struct AtenLayerWeights {
  at::Tensor qkv;       // [(heads + 2 * kv_heads) * head_dim, hidden]
  at::Tensor qkv_bias;  // [(heads + 2 * kv_heads) * head_dim], or undefined
  at::Tensor o;         // [hidden, heads * head_dim]
  at::Tensor o_bias;    // [hidden], or undefined
  at::Tensor gate_up;   // [2 * intermediate, hidden]
  at::Tensor down;      // [hidden, intermediate]
};

struct AtenWeights {
  at::Tensor embed;    // [vocab, hidden]
  at::Tensor lm_head;  // [vocab, hidden], the final norm's gain folded in
  std::vector<AtenLayerWeights> layers;
};

// The rows of an AtenKvStorage: per layer, keys and values [kv_heads, capacity, head_dim].
class AtenKvStorage;

// Reads a checked checkpoint onto `device` (aten_loader.cpp).
AtenWeights load_aten_weights(const ModelConfig& cfg, const Checkpoint& checkpoint, c10::Device device);

ForwardResult forward_aten(const ModelConfig& cfg, const AtenWeights& weights, AtenKvStorage& cache,
                           const ForwardRequest& request, const ForwardPlan& plan);
// The final norm and lm_head over host rows of the last layer's output (LlamaModel::logits_from_hidden).
FloatRows logits_aten(const ModelConfig& cfg, const AtenWeights& weights, const float* hidden, int64_t rows, c10::Device device);

}  // namespace specd
