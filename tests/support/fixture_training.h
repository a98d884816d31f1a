#pragma once
// Small training modules for the training tool's tests.
#include <cstdint>

#include "train_llama.h"
#include "trainer.h"

namespace specd::test {

// Two layers, hidden 64, four heads over two kv heads, vocabulary 301 (end of text 300).
inline training::ModelShape tiny_training_shape() {
  training::ModelShape shape;
  shape.layers = 2;
  shape.hidden = 64;
  shape.heads = 4;
  shape.kv_heads = 2;
  shape.ffn = 96;
  shape.context = 64;
  return shape;
}

inline ModelConfig tiny_training_config() { return training::make_model_config(tiny_training_shape(), 301, 300); }

// Weights far from initialization (larger, with uneven norm gains) so that a wrong rotation, mask,
// head grouping or copy read in the wrong place shows in the logits.
inline training::TrainLlama perturbed_model(const ModelConfig& cfg, uint64_t seed = 3) {
  torch::manual_seed(seed);
  training::TrainLlama model(cfg);
  torch::NoGradGuard no_grad;
  for (auto& p : model->parameters()) {
    if (p.dim() == 1) {
      p.normal_(1.0, 0.2);
    } else {
      p.normal_(0.0, 0.2);
    }
  }
  return model;
}

}  // namespace specd::test
