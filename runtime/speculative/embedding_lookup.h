#pragma once
// The target's input embeddings without torch (ARC's LTS, AdaPLD's semantic fallback).
#include <cstdint>
#include <functional>

namespace specd {

// row(token, out) writes hidden_size floats: the embedding table's row of `token`.
struct EmbeddingLookup {
  int64_t hidden_size = 0;
  std::function<void(int32_t token, float* out)> row;
};

}  // namespace specd
