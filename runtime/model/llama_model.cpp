#include "model/llama_model.h"

#include <cmath>
#include <stdexcept>

#include "io/checkpoint.h"
#include "io/expected_tensors.h"
#include "io/rope_frequencies.h"
#include "model/model_backend.h"
#include "util/error.h"

namespace specd {

AtenBackendLoader& aten_backend_loader() {
  static AtenBackendLoader loader = nullptr;
  return loader;
}

std::shared_ptr<LlamaModel> LlamaModel::load(const std::string& dir, const DeviceSpec& device) {
  check_device(device);
  if (needs_aten(device) && !aten_backend_loader())
    input_error("--device", "'" + device.name + (device.aten_on_cpu ? "' with --aten" : "'") +
                                " needs the ATen forward: this binary runs specd's CPU kernels only (run specd-aten, which a build "
                                "with -DSPECD_WITH_TORCH=ON makes)");
  ModelConfig cfg = ModelConfig::from_file(dir + "/config.json");
  Checkpoint checkpoint = Checkpoint::open_dir(dir);
  check_checkpoint(cfg, checkpoint);
  std::unique_ptr<ModelBackend> backend =
      needs_aten(device) ? aten_backend_loader()(cfg, checkpoint, device) : load_cpu_backend(cfg, checkpoint, device);
  return std::shared_ptr<LlamaModel>(new LlamaModel(dir, std::move(cfg), std::move(backend), device.kv_type));
}

LlamaModel::LlamaModel(std::string dir, ModelConfig config, std::unique_ptr<ModelBackend> backend, KvType kv_type)
    : dir_(std::move(dir)), config_(std::move(config)), kv_type_(kv_type), rope_inv_freq_(rope_inverse_frequencies(config_)),
      backend_(std::move(backend)) {}

LlamaModel::~LlamaModel() = default;

std::string LlamaModel::device() const { return backend_->device(); }
bool LlamaModel::uses_cpu_kernels() const { return backend_->cpu_kernels(); }

int64_t LlamaModel::context_length() const {
  if (config_.sliding_window && *config_.sliding_window < config_.max_position_embeddings) return *config_.sliding_window;
  return config_.max_position_embeddings;
}

KvCache LlamaModel::new_cache(int64_t capacity) const { return new_cache(capacity, kv_type_); }

KvCache LlamaModel::new_cache(int64_t capacity, KvType type) const {
  // Rows may outnumber positions: a tree's siblings share a position.
  if (capacity <= 0) capacity = context_length();
  return KvCache(std::shared_ptr<KvStorage>(backend_->new_kv(capacity, type)));
}

int64_t LlamaModel::kv_bytes(int64_t rows) const { return backend_->kv_bytes(rows, kv_type_); }
int64_t LlamaModel::weight_bytes() const { return backend_->weight_bytes(); }
int LlamaModel::weight_element_bytes() const { return backend_->weight_element_bytes(); }
bool LlamaModel::bf16_dot_products() const { return backend_->bf16_dot_products(); }

FloatRows LlamaModel::logits_from_hidden(const float* hidden, int64_t rows) const {
  if (rows < 0 || (rows > 0 && hidden == nullptr)) throw std::logic_error("LlamaModel::logits_from_hidden: no rows");
  return backend_->logits_from_hidden(hidden, rows);
}

void LlamaModel::embedding_row(int32_t token, float* out) const {
  if (token < 0 || token >= config_.vocab_size) throw std::logic_error("LlamaModel::embedding_row: token id outside the vocabulary");
  backend_->embedding_row(token, out);
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

ForwardPlan LlamaModel::plan_forward(const KvCache& cache, const ForwardRequest& request) const {
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
    for (double inv_freq : rope_inv_freq_) {
      const double angle = static_cast<double>(p) * inv_freq;
      plan.rope_cos.push_back(static_cast<float>(std::cos(angle)));
      plan.rope_sin.push_back(static_cast<float>(std::sin(angle)));
    }
  return plan;
}

ForwardResult LlamaModel::forward(KvCache& cache, const ForwardRequest& request) const {
  const ForwardPlan plan = plan_forward(cache, request);
  ForwardResult result = backend_->forward(cache, request, plan);
  cache.advance(plan.n);
  return result;
}

std::vector<ForwardResult> LlamaModel::forward_batch(const std::vector<KvCache*>& caches,
                                                     const std::vector<const ForwardRequest*>& requests) const {
  if (caches.size() != requests.size()) throw std::logic_error("LlamaModel::forward_batch: one cache per request");
  for (size_t i = 0; i < caches.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (&caches[i]->storage() == &caches[j]->storage()) throw std::logic_error("LlamaModel::forward_batch: a cache twice in one batch");
  std::vector<ForwardPlan> plans;
  for (size_t i = 0; i < caches.size(); ++i) plans.push_back(plan_forward(*caches[i], *requests[i]));
  std::vector<ForwardResult> results = backend_->forward_batch(caches, requests, plans);
  for (size_t i = 0; i < caches.size(); ++i) caches[i]->advance(plans[i].n);
  return results;
}

}  // namespace specd
