#pragma once
// The forward pass on specd's CPU kernels (cpu_forward.cpp).
#include <vector>

#include "model/cpu/cpu_kv_storage.h"
#include "model/cpu/cpu_weights.h"
#include "model/model_backend.h"

namespace specd {

// One request of a batched forward: its new tokens, its plan, the cache it attends over and extends.
struct CpuForwardPart {
  CpuKvStorage* cache;
  const ForwardRequest* request;
  const ForwardPlan* plan;
};

// Every request's new tokens through the weights together (the matmuls see their rows stacked;
// a row's arithmetic does not depend on the others, so each result equals its request's forward
// alone, bit for bit), attention per request over its own cache. Results in the batch's order.
std::vector<ForwardResult> forward_cpu_kernels(const ModelConfig& cfg, const CpuWeights& weights, const std::vector<CpuForwardPart>& batch,
                                               int threads);

// The final norm and lm_head over `rows` rows of the last layer's output (LlamaModel::logits_from_hidden).
FloatRows logits_cpu_kernels(const ModelConfig& cfg, const CpuWeights& weights, const float* hidden, int64_t rows, int threads);

}  // namespace specd
