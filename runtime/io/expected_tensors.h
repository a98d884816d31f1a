#pragma once
// The tensors a Llama-family checkpoint must hold for a config, in Hugging Face's naming, and the
// check of a checkpoint against them.
#include <cstdint>
#include <string>
#include <vector>

#include "io/checkpoint.h"
#include "io/model_config.h"

namespace specd {

struct ExpectedTensor {
  std::string name;
  std::vector<int64_t> shape;
};

// model.embed_tokens.weight, per layer the norms, attention (with biases per config) and MLP
// weights, model.norm.weight, and lm_head.weight unless the embeddings are tied.
std::vector<ExpectedTensor> expected_tensors(const ModelConfig& config);

// Every expected tensor present with its shape and a float dtype (F32, F16, BF16); no other tensor
// except known harmless ones (rotary_emb.inv_freq buffers, lm_head.weight of a tied model with the
// embedding's shape). Throws InputError naming the file and tensor otherwise.
void check_checkpoint(const ModelConfig& config, const Checkpoint& checkpoint);

}  // namespace specd
