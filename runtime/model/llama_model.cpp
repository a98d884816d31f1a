#include "model/llama_model.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstring>
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
  // Rows may outnumber positions: a tree's siblings share a position.
  if (capacity <= 0) capacity = context_length();
  return KvCache(config_.num_hidden_layers, config_.num_key_value_heads, capacity, config_.head_dim,
                 at::TensorOptions().dtype(at::kFloat).device(device_));
}

int64_t LlamaModel::kv_bytes(int64_t rows) const {
  // Keys and values, plus the key tiles (rows rounded up to blocks of 16) on the CPU kernels.
  const int64_t tiled_rows = cpu_kernels_ ? (rows + 15) / 16 * 16 : 0;
  int64_t per_row = static_cast<int64_t>(sizeof(float));
  for (int64_t factor : {config_.num_hidden_layers, config_.num_key_value_heads, config_.head_dim})
    if (__builtin_mul_overflow(per_row, factor, &per_row)) return INT64_MAX;
  int64_t total = 0, part = 0;
  if (__builtin_mul_overflow(per_row, 2 * rows, &total) || __builtin_mul_overflow(per_row, tiled_rows, &part) ||
      __builtin_add_overflow(total, part, &total))
    return INT64_MAX;
  return total;
}

int64_t LlamaModel::weight_bytes() const {
  const ModelWeights& w = *weights_;
  int64_t bytes = 0;
  auto add = [&](const at::Tensor& t) {
    if (t.defined()) bytes += static_cast<int64_t>(t.nbytes());
  };
  add(w.embed);
  if (!w.lm_head.is_same(w.embed)) add(w.lm_head);
  add(w.final_gain);
  for (const LayerWeights& l : w.layers)
    for (const at::Tensor* t : {&l.qkv, &l.qkv_bias, &l.o, &l.o_bias, &l.gate_up, &l.down, &l.input_gain, &l.post_gain}) add(*t);
  return bytes;
}

int LlamaModel::weight_element_bytes() const { return static_cast<int>(weights_->layers.at(0).qkv.element_size()); }

bool LlamaModel::bf16_dot_products() const { return weights_->bf16_pairs; }

at::Tensor LlamaModel::input_embeddings() const { return weights_->embed; }

void LlamaModel::embedding_row(int32_t token, float* out) const {
  if (token < 0 || token >= config_.vocab_size) throw std::logic_error("LlamaModel::embedding_row: token id outside the vocabulary");
  at::Tensor row = weights_->embed[token].to(at::kCPU, at::kFloat).contiguous();
  std::memcpy(out, row.data_ptr<float>(), sizeof(float) * static_cast<size_t>(row.numel()));
}

namespace {

// Who sees whom: every new token sees the shared rows, itself and its ancestors (walking parent
// rows up to the shared prefix).
void plan_visibility(const ForwardRequest& request, ForwardPlan& plan) {
  const int64_t n = plan.n, past = plan.past;
  const bool continued = request.tree_base >= 0;
  plan.shared = continued ? request.tree_base : past;
  if (plan.shared > past) throw std::logic_error("forward: tree_base beyond the cache");
  if (continued && static_cast<int64_t>(request.cached_parents.size()) != past - plan.shared)
    throw std::logic_error("forward: cached_parents must cover rows [tree_base, cache length)");
  if (!request.parents.empty() && static_cast<int64_t>(request.parents.size()) != n)
    throw std::logic_error("forward: parents size != tokens size");
  if (continued && request.parents.empty()) throw std::logic_error("forward: tree_base needs parents");

  // parent_row(r) for rows r in [shared, past + n): an absolute row, or -1.
  auto parent_row = [&](int64_t row) -> int64_t {
    if (row < past) return request.cached_parents[row - plan.shared];
    int64_t i = row - past;
    if (request.parents.empty()) return i == 0 ? -1 : row - 1;
    int64_t p = request.parents[i];
    if (continued) return p;
    return p == -1 ? -1 : past + p;
  };
  plan.causal = !continued;
  for (int64_t row = plan.shared; row < past + n; ++row) {
    int64_t p = parent_row(row);
    if (p != -1 && (p < plan.shared || p >= row)) throw std::logic_error("forward: a parent must be an earlier tree row");
    if (row >= past) plan.causal = plan.causal && p == (row == past ? -1 : row - 1);
  }
  const int64_t span = plan.span();
  plan.visible.assign(static_cast<size_t>(n * span), 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t row = past + i; row != -1; row = parent_row(row)) plan.visible[i * span + (row - plan.shared)] = 1;
}

}  // namespace

ForwardResult LlamaModel::forward(KvCache& cache, const ForwardRequest& request) const {
  ForwardPlan plan;
  plan.n = static_cast<int64_t>(request.tokens.size());
  plan.past = cache.length();
  const int64_t n = plan.n;
  if (n == 0) throw std::logic_error("LlamaModel::forward: no tokens");
  if (plan.past + n > cache.capacity()) throw std::logic_error("LlamaModel::forward: KV cache full");
  for (int64_t t : request.tokens)
    if (t < 0 || t >= config_.vocab_size) throw std::logic_error("LlamaModel::forward: token id outside the vocabulary");
  plan_visibility(request, plan);
  plan.positions = request.positions;
  if (plan.positions.empty()) {
    for (int64_t i = 0; i < n; ++i) plan.positions.push_back(plan.past + i);
  }
  if (static_cast<int64_t>(plan.positions.size()) != n) throw std::logic_error("forward: positions size != tokens size");
  for (int64_t p : plan.positions)
    if (p < 0 || p >= context_length()) throw std::logic_error("forward: position outside the context");
  // Angles in double, as Hugging Face's float64 inverse frequencies, rounded to float after.
  for (int64_t p : plan.positions)
    for (double inv_freq : weights_->rope_inv_freq) {
      const double angle = static_cast<double>(p) * inv_freq;
      plan.rope_cos.push_back(static_cast<float>(std::cos(angle)));
      plan.rope_sin.push_back(static_cast<float>(std::sin(angle)));
    }

  at::InferenceMode guard;
  ForwardResult result = cpu_kernels_ ? forward_cpu_kernels(config_, *weights_, cache, request, plan, threads_)
                                           : forward_aten(config_, *weights_, cache, request, plan);
  cache.advance(n);
  return result;
}

}  // namespace specd
