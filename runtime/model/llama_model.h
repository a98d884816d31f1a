#pragma once
// A Llama-family decoder (Llama, Mistral, Qwen2). One forward takes new tokens with their
// positions and, optionally, a tree over them; each new token attends to the cached prefix and to
// its own ancestors. It runs on specd's CPU kernels (no libtorch in the process) or, in a binary
// that links libtorch (specd-aten, the tests), on the ATen forward on any device libtorch has.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/model_config.h"
#include "model/device.h"
#include "model/kv_cache.h"

namespace specd {

enum class LogitsWanted { All, Last, None };

struct ForwardRequest {
  std::vector<int64_t> tokens;
  // Absolute positions; empty means cache.length() + i (a chain continuing the prefix).
  std::vector<int64_t> positions;
  // Tree over the new tokens: parents[i] < i is the index of token i's parent in this batch, or -1
  // when its parent is the last cached token. Empty means a chain (parents[i] = i - 1).
  std::vector<int64_t> parents;
  // A tree continued across forwards (a drafter expanding a tree level by level): when
  // tree_base >= 0, cache rows [tree_base, cache.length()) are earlier nodes of the tree, every
  // new token sees rows [0, tree_base) and then only its ancestors, and `parents` holds cache rows
  // instead of batch indices (new token i is row cache.length() + i; -1: hangs off the prefix).
  // cached_parents[r - tree_base] is the parent row of cached tree row r, or -1.
  int64_t tree_base = -1;
  std::vector<int64_t> cached_parents;
  LogitsWanted logits = LogitsWanted::All;
  // With LogitsWanted::Last: how many of the last tokens get logits rows (at most all of them).
  int64_t last_rows = 1;
  // Hidden states to return (in increasing layer order), numbered as Hugging Face's hidden_states: 0 is the embedding output,
  // l is the output of decoder layer l (before the final norm).
  std::vector<int> hidden_layers;
};

// A row-major float32 matrix in host memory.
struct FloatRows {
  int64_t rows = 0, cols = 0;
  std::vector<float> values;  // rows * cols

  FloatRows() = default;
  FloatRows(int64_t rows, int64_t cols) : rows(rows), cols(cols), values(static_cast<size_t>(rows * cols)) {}
  bool empty() const { return rows == 0; }
  float* row(int64_t r) { return values.data() + r * cols; }
  const float* row(int64_t r) const { return values.data() + r * cols; }
  const float* data() const { return values.data(); }
};

struct ForwardResult {
  FloatRows logits;               // [n, vocab]: n = tokens, last_rows or 0 by LogitsWanted
  std::vector<FloatRows> hidden;  // one [tokens, hidden] per requested layer
};

class ModelBackend;
struct ForwardPlan;

class LlamaModel {
 public:
  // Loads a Hugging Face directory (config.json + model.safetensors or its sharded index),
  // checking every tensor against the config. Throws InputError naming the file and problem.
  static std::shared_ptr<LlamaModel> load(const std::string& dir, const DeviceSpec& device);
  ~LlamaModel();

  const ModelConfig& config() const { return config_; }
  const std::string& dir() const { return dir_; }
  // "cpu", "cuda:0": where the forward runs.
  std::string device() const;
  // Positions a sequence may use. With a sliding window (Mistral v0.1) we stop at the window, within
  // which full attention is exact.
  int64_t context_length() const;

  // A cache of `capacity` rows (0: the model's context length). Rows can exceed positions when
  // tree nodes share positions. Its memory counts against the KV memory limit (model/kv_memory.h).
  // Its rows are of the model's KV type (DeviceSpec::kv_type) unless `type` is given.
  KvCache new_cache(int64_t capacity = 0) const;
  KvCache new_cache(int64_t capacity, KvType type) const;
  KvType kv_type() const { return kv_type_; }
  // Bytes a cache of `rows` rows of the model's KV type takes once used: keys, values and, on the
  // CPU kernels, the tiled copy of the keys (INT64_MAX when that overflows).
  int64_t kv_bytes(int64_t rows) const;

  // Runs the new tokens on top of the cache, writes their keys and values at
  // [cache.length(), cache.length() + n) and advances the cache by n.
  ForwardResult forward(KvCache& cache, const ForwardRequest& request) const;
  // Several requests in one forward, each on its own cache (no cache twice): on the CPU kernels
  // their rows go through the weights together, which a memory-bound decode reads once for all
  // of them; each result equals that request's forward() alone, bit for bit.
  std::vector<ForwardResult> forward_batch(const std::vector<KvCache*>& caches, const std::vector<const ForwardRequest*>& requests) const;

  // True when forward runs on specd's CPU kernels, false for the ATen forward.
  bool uses_cpu_kernels() const;
  // Bytes of the weights as the forward holds them (matrices in their packed or folded layout,
  // the embedding table, gains and biases; a tied embedding's separate lm_head copy included).
  int64_t weight_bytes() const;
  // Bytes of one element of the matrices as the forward reads them (4 for float32, 2 for BF16/F16).
  int weight_element_bytes() const;
  // True when the CPU kernels multiply BF16 matrices with BF16 dot-product instructions
  // (activations rounded to BF16; cpu/matmul_bf16_dot.h), false for float32 arithmetic.
  bool bf16_dot_products() const;

  // Row `token` of the input embedding table as float32 into out[0, hidden_size) (ARC's whitening
  // and embedding-side bound read the table this way).
  void embedding_row(int32_t token, float* out) const;
  // The logits of `rows` rows of the last decoder layer's output (hidden states of layer
  // num_hidden_layers, before the final norm, as ForwardRequest::hidden_layers returns them): the
  // final norm and lm_head, with the arithmetic of forward()'s logits, so the same row gives the
  // same logits bit for bit. A drafter that keeps those states can get a position's logits when it
  // needs them instead of projecting every prompt row at the prefill.
  FloatRows logits_from_hidden(const float* hidden, int64_t rows) const;

 private:
  // Validates a request against the cache and fills in its positions, visibility and RoPE angles.
  ForwardPlan plan_forward(const KvCache& cache, const ForwardRequest& request) const;
  LlamaModel(std::string dir, ModelConfig config, std::unique_ptr<ModelBackend> backend, KvType kv_type);

  std::string dir_;
  ModelConfig config_;
  KvType kv_type_;
  std::vector<double> rope_inv_freq_;  // [head_dim / 2]: RoPE's inverse frequencies
  std::unique_ptr<ModelBackend> backend_;
};

}  // namespace specd
