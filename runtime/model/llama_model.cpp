#include "model/llama_model.h"

#include <ATen/ATen.h>

#include <stdexcept>

#include "model/cpu_threads.h"
#include "model/model_weights.h"

namespace specd {

LlamaModel::LlamaModel(std::string dir, ModelConfig config, c10::Device device, int threads, bool cpu_kernels)
    : dir_(std::move(dir)), config_(std::move(config)), device_(device), threads_(threads), cpu_kernels_(cpu_kernels),
      weights_(std::make_unique<ModelWeights>()) {}

LlamaModel::~LlamaModel() = default;

int64_t LlamaModel::context_length() const {
  if (config_.sliding_window && *config_.sliding_window < config_.max_position_embeddings) return *config_.sliding_window;
  return config_.max_position_embeddings;
}

KvCache LlamaModel::new_cache(int64_t capacity) const {
  if (capacity <= 0 || capacity > context_length()) capacity = context_length();
  return KvCache(config_.num_hidden_layers, config_.num_key_value_heads, capacity, config_.head_dim,
                 at::TensorOptions().dtype(at::kFloat).device(device_));
}

ForwardResult LlamaModel::forward(KvCache& cache, const ForwardRequest& request) const {
  ForwardPlan plan;
  plan.n = static_cast<int64_t>(request.tokens.size());
  plan.past = cache.length();
  const int64_t n = plan.n;
  if (n == 0) throw std::logic_error("LlamaModel::forward: no tokens");
  if (plan.past + n > cache.capacity()) throw std::logic_error("LlamaModel::forward: KV cache full");
  for (int64_t t : request.tokens)
    if (t < 0 || t >= config_.vocab_size) throw std::logic_error("LlamaModel::forward: token id outside the vocabulary");
  if (request.parents.empty()) {
    for (int64_t i = 0; i < n; ++i) plan.parents.push_back(i - 1);
  } else {
    if (static_cast<int64_t>(request.parents.size()) != n) throw std::logic_error("forward: parents size != tokens size");
    plan.parents = request.parents;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (plan.parents[i] >= i || plan.parents[i] < -1) throw std::logic_error("forward: parents[i] must be in [-1, i)");
    plan.chain = plan.chain && plan.parents[i] == i - 1;
  }
  plan.positions = request.positions;
  if (plan.positions.empty()) {
    for (int64_t i = 0; i < n; ++i) plan.positions.push_back(plan.past + i);
  }
  if (static_cast<int64_t>(plan.positions.size()) != n) throw std::logic_error("forward: positions size != tokens size");
  for (int64_t p : plan.positions)
    if (p < 0 || p >= context_length()) throw std::logic_error("forward: position outside the context");

  at::InferenceMode guard;
  ForwardResult result = cpu_kernels_ ? forward_cpu_kernels(config_, *weights_, cache, request, plan, threads_)
                                           : forward_aten(config_, *weights_, cache, request, plan);
  cache.advance(n);
  return result;
}

}  // namespace specd
