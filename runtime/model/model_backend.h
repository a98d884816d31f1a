#pragma once
// What runs a LlamaModel's forward: specd's CPU kernels (cpu/cpu_backend.h; no libtorch) or the
// ATen forward (aten/; any device libtorch has), which only binaries linking libtorch contain.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/llama_model.h"

namespace specd {

class Checkpoint;

// A forward call after validation: positions filled in, and who sees whom.
struct ForwardPlan {
  int64_t n = 0;       // new tokens
  int64_t past = 0;    // cached rows before them
  int64_t shared = 0;  // rows [0, shared) are seen by every new token
  bool causal = true;  // a plain chain: shared == past and each token sees all before it
  std::vector<int64_t> positions;
  // RoPE's cos and sin of each new token's position, [n, head_dim / 2]. Made per forward (a few
  // hundred cosines a step) rather than tabled for every position the config allows (a
  // max_position_embeddings of 2e9 would take hundreds of GB).
  std::vector<float> rope_cos, rope_sin;
  // visible[i * span + c]: new token i sees row shared + c, where span = past + n - shared.
  std::vector<uint8_t> visible;
  int64_t span() const { return past + n - shared; }
};

class ModelBackend {
 public:
  virtual ~ModelBackend() = default;
  virtual std::string device() const = 0;
  virtual bool cpu_kernels() const = 0;
  virtual std::unique_ptr<KvStorage> new_kv(int64_t capacity, KvType type) const = 0;
  // See LlamaModel::kv_bytes.
  virtual int64_t kv_bytes(int64_t rows, KvType type) const = 0;
  // Writes the new rows at [cache.length(), + n); the model advances the cache after.
  virtual ForwardResult forward(KvCache& cache, const ForwardRequest& request, const ForwardPlan& plan) const = 0;
  // Several requests, each on its own cache (LlamaModel::forward_batch). This default runs them
  // one after another; the CPU kernels stack their rows through the weights in one pass.
  virtual std::vector<ForwardResult> forward_batch(const std::vector<KvCache*>& caches, const std::vector<const ForwardRequest*>& requests,
                                                   const std::vector<ForwardPlan>& plans) const {
    std::vector<ForwardResult> results;
    for (size_t i = 0; i < caches.size(); ++i) results.push_back(forward(*caches[i], *requests[i], plans[i]));
    return results;
  }
  virtual void embedding_row(int32_t token, float* out) const = 0;
  // See LlamaModel::logits_from_hidden.
  virtual FloatRows logits_from_hidden(const float* hidden, int64_t rows) const = 0;
  virtual int64_t weight_bytes() const = 0;
  virtual int weight_element_bytes() const = 0;
  virtual bool bf16_dot_products() const = 0;
};

// Builds the ATen backend for a checked checkpoint. Set by the ATen library (aten/) when a binary
// links it; null in specd's torch-free binary.
using AtenBackendLoader = std::unique_ptr<ModelBackend> (*)(const ModelConfig& cfg, const Checkpoint& checkpoint,
                                                           const DeviceSpec& device);
AtenBackendLoader& aten_backend_loader();

// The CPU kernels' backend (cpu/cpu_backend.cpp).
std::unique_ptr<ModelBackend> load_cpu_backend(const ModelConfig& cfg, const Checkpoint& checkpoint, const DeviceSpec& device);

}  // namespace specd
