#pragma once
// The forward pass on specd's CPU kernels (cpu_forward.cpp).
#include "model/cpu/cpu_kv_storage.h"
#include "model/cpu/cpu_weights.h"
#include "model/model_backend.h"

namespace specd {

ForwardResult forward_cpu_kernels(const ModelConfig& cfg, const CpuWeights& weights, CpuKvStorage& cache,
                                  const ForwardRequest& request, const ForwardPlan& plan, int threads);

// The final norm and lm_head over `rows` rows of the last layer's output (LlamaModel::logits_from_hidden).
FloatRows logits_cpu_kernels(const ModelConfig& cfg, const CpuWeights& weights, const float* hidden, int64_t rows, int threads);

}  // namespace specd
