// The CPU kernels as a ModelBackend: weights and KV rows in host memory, no libtorch.
#include <stdexcept>

#include "model/cpu/cpu_forward.h"
#include "model/cpu/matmul_bf16_dot.h"
#include "model/cpu_threads.h"

namespace specd {
namespace {

CpuKvStorage* rows_of(KvCache& cache) {
  auto* rows = dynamic_cast<CpuKvStorage*>(&cache.storage());
  if (rows == nullptr) throw std::logic_error("CPU kernels: a KV cache made by another backend");
  return rows;
}

class CpuBackend final : public ModelBackend {
 public:
  CpuBackend(const ModelConfig& cfg, CpuWeights weights, int threads)
      : cfg_(cfg), weights_(std::move(weights)), threads_(threads) {}

  std::string device() const override { return "cpu"; }
  bool cpu_kernels() const override { return true; }

  std::unique_ptr<KvStorage> new_kv(int64_t capacity, KvType type) const override {
    return std::make_unique<CpuKvStorage>(cfg_.num_hidden_layers, cfg_.num_key_value_heads, capacity, cfg_.head_dim, type);
  }
  int64_t kv_bytes(int64_t rows, KvType type) const override {
    return CpuKvStorage::bytes_for(cfg_.num_hidden_layers, cfg_.num_key_value_heads, cfg_.head_dim, rows, type);
  }

  ForwardResult forward(KvCache& cache, const ForwardRequest& request, const ForwardPlan& plan) const override {
    return std::move(forward_cpu_kernels(cfg_, weights_, {CpuForwardPart{rows_of(cache), &request, &plan}}, threads_).front());
  }

  std::vector<ForwardResult> forward_batch(const std::vector<KvCache*>& caches, const std::vector<const ForwardRequest*>& requests,
                                           const std::vector<ForwardPlan>& plans) const override {
    std::vector<CpuForwardPart> batch;
    for (size_t i = 0; i < caches.size(); ++i) batch.push_back(CpuForwardPart{rows_of(*caches[i]), requests[i], &plans[i]});
    return forward_cpu_kernels(cfg_, weights_, batch, threads_);
  }

  FloatRows logits_from_hidden(const float* hidden, int64_t rows) const override {
    return logits_cpu_kernels(cfg_, weights_, hidden, rows, threads_);
  }

  void embedding_row(int32_t token, float* out) const override {
    cpu::widen_row(weights_.embed.data(), weights_.embed_type, token, cfg_.hidden_size, out);
  }

  int64_t weight_bytes() const override { return weights_.bytes(); }
  int weight_element_bytes() const override { return weights_.layers.at(0).qkv.type == cpu::WeightType::F32 ? 4 : 2; }
  bool bf16_dot_products() const override { return weights_.layers.at(0).qkv.type == cpu::WeightType::BF16Pairs; }

 private:
  ModelConfig cfg_;
  CpuWeights weights_;
  int threads_;
};

}  // namespace

std::unique_ptr<ModelBackend> load_cpu_backend(const ModelConfig& cfg, const Checkpoint& checkpoint, const DeviceSpec& device) {
  const bool bf16_pairs = !device.fp32_activations && cpu::bf16_dot_supported();
  return std::make_unique<CpuBackend>(cfg, load_cpu_weights(cfg, checkpoint, bf16_pairs), resolve_thread_count(device.threads));
}

}  // namespace specd
