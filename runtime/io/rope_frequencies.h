#pragma once
// Rotary-embedding inverse frequencies, one per pair of head dimensions, computed as Hugging Face
// transformers does (modeling_rope_utils.py) for no scaling, linear scaling and Llama 3 scaling.
#include <vector>

#include "io/model_config.h"

namespace specd {

// head_dim / 2 values: theta^(-2i/head_dim), then scaled per config.rope_scaling.
std::vector<double> rope_inverse_frequencies(const ModelConfig& config);

}  // namespace specd
