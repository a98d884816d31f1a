#pragma once
// The forward pass on specd's CPU kernels (cpu_forward.cpp).
#include "model/cpu/cpu_kv_storage.h"
#include "model/cpu/cpu_weights.h"
#include "model/model_backend.h"

namespace specd {

ForwardResult forward_cpu_kernels(const ModelConfig& cfg, const CpuWeights& weights, CpuKvStorage& cache,
                                  const ForwardRequest& request, const ForwardPlan& plan, int threads);

}  // namespace specd
