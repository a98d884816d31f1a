// The ATen forward as a ModelBackend, and its registration: linking this library into a binary
// (specd-aten, the tests) is what makes --aten and CUDA devices available there.
#include <dlfcn.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "aten/aten_kv_storage.h"
#include "aten/aten_weights.h"
#include "io/checkpoint.h"
#include "model/cpu_threads.h"
#include "util/error.h"

namespace specd {
namespace {

// OpenBLAS is reached through the libblas.so.3 alternative, so look its controls up at run time
// rather than linking against it: with another BLAS they are simply absent.
template <typename Fn>
Fn blas_symbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

// On a small CPU libtorch's OpenMP threads and OpenBLAS's threads spin against each other
// (2-5x slower on 2 cores). ATen's intra-op pool keeps one thread and BLAS gets the cores, where
// the time of a small model goes.
void configure_cpu_threads(int threads) {
  at::set_num_threads(1);
  if (auto set = blas_symbol<void (*)(int)>("openblas_set_num_threads")) set(resolve_thread_count(threads));
}

c10::Device resolve(const DeviceSpec& spec) {
  const int index = check_device(spec);
  if (spec.name == "cpu") {
    configure_cpu_threads(spec.threads);
    return c10::Device(c10::DeviceType::CPU);
  }
  if (!at::hasCUDA()) input_error("device", "this libtorch build has no CUDA (Debian's is CPU-only); use the cpu device");
  return c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index));
}

class AtenBackend final : public ModelBackend {
 public:
  AtenBackend(const ModelConfig& cfg, AtenWeights weights, c10::Device device)
      : cfg_(cfg), weights_(std::move(weights)), device_(device) {}

  std::string device() const override { return device_.str(); }
  bool cpu_kernels() const override { return false; }

  std::unique_ptr<KvStorage> new_kv(int64_t capacity, KvType type) const override {
    return std::make_unique<AtenKvStorage>(cfg_.num_hidden_layers, cfg_.num_key_value_heads, capacity, cfg_.head_dim, type,
                                           device_);
  }
  int64_t kv_bytes(int64_t rows, KvType type) const override {
    return kv_array_bytes(2, cfg_.num_hidden_layers, cfg_.num_key_value_heads, rows, cfg_.head_dim, type);
  }

  ForwardResult forward(KvCache& cache, const ForwardRequest& request, const ForwardPlan& plan) const override {
    auto* rows = dynamic_cast<AtenKvStorage*>(&cache.storage());
    if (rows == nullptr) throw std::logic_error("ATen forward: a KV cache made by another backend");
    return forward_aten(cfg_, weights_, *rows, request, plan);
  }

  FloatRows logits_from_hidden(const float* hidden, int64_t rows) const override {
    return logits_aten(cfg_, weights_, hidden, rows, device_);
  }

  void embedding_row(int32_t token, float* out) const override {
    at::Tensor row = weights_.embed[token].to(at::kCPU, at::kFloat).contiguous();
    std::copy(row.data_ptr<float>(), row.data_ptr<float>() + row.numel(), out);
  }

  int64_t weight_bytes() const override {
    int64_t bytes = 0;
    auto add = [&](const at::Tensor& t) {
      if (t.defined()) bytes += static_cast<int64_t>(t.nbytes());
    };
    add(weights_.embed);
    add(weights_.lm_head);
    for (const AtenLayerWeights& l : weights_.layers)
      for (const at::Tensor* t : {&l.qkv, &l.qkv_bias, &l.o, &l.o_bias, &l.gate_up, &l.down}) add(*t);
    return bytes;
  }
  int weight_element_bytes() const override { return 4; }
  bool bf16_dot_products() const override { return false; }

 private:
  ModelConfig cfg_;
  AtenWeights weights_;
  c10::Device device_;
};

std::unique_ptr<ModelBackend> load_aten_backend(const ModelConfig& cfg, const Checkpoint& checkpoint, const DeviceSpec& spec) {
  const c10::Device device = resolve(spec);
  return std::make_unique<AtenBackend>(cfg, load_aten_weights(cfg, checkpoint, device), device);
}

// Runs when the binary starts: this library is linked as objects, so this file always is.
[[maybe_unused]] const bool registered = [] {
  aten_backend_loader() = &load_aten_backend;
  return true;
}();

}  // namespace
}  // namespace specd
