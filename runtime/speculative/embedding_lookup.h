#pragma once
// The target's input embeddings and output head without torch (ARC's LTS, AdaPLD's semantic
// fallback and its top-K at prompt anchors).
#include <cstdint>
#include <functional>

namespace specd {

// row(token, out) writes hidden_size floats: the embedding table's row of `token`.
struct EmbeddingLookup {
  int64_t hidden_size = 0;
  std::function<void(int32_t token, float* out)> row;
};

// row(hidden, out) writes vocab floats: the target's logits for one row of the last decoder
// layer's output (LlamaModel::logits_from_hidden), which ForwardRequest::hidden_layers returns as
// layer `layer`.
struct LogitsLookup {
  int32_t layer = -1;
  int64_t vocab = 0;
  std::function<void(const float* hidden, float* out)> row;
};

}  // namespace specd
