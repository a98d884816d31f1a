// The ATen forward on a CUDA device against specd's CPU kernels: the same forward with its float
// sums in another order (cuBLAS, float32 without TF32), so the two agree within the float32
// reordering bound (forward_bounds.h), read from the checkpoint. Skipped without a CUDA device;
// scripts/cuda_check.sh builds against a CUDA libtorch and runs these with the exact oracles of
// test_forward_oracles.cpp on CUDA too (SPECD_TEST_CUDA).
#include "catch_torch.h"
#include "test_skip.h"

#include "fixture_models.h"
#include "forward_bounds.h"

using namespace specd;

namespace {

double max_abs_diff(const FloatRows& a, const FloatRows& b) {
  return (test::tensor(a) - test::tensor(b)).abs().max().item<double>();
}

const test::Backend kCuda{true, KvType::F32, "cuda"};

// The CPU kernels with float32 activations: the ATen forward's arithmetic, in another order.
std::shared_ptr<LlamaModel> load_cpu(const std::string& dir) { return test::load_model(dir, false, 1, true); }

}  // namespace

TEST_CASE("on CUDA the ATen forward computes what the CPU kernels compute", "[model][oracle][cuda]") {
  if (!at::hasCUDA()) SPECD_SKIP("no CUDA device, or a CPU-only libtorch");
  const std::string type = GENERATE(as<std::string>{}, "llama", "qwen2", "mistral");
  const DType dtype = GENERATE(DType::F32, DType::BF16, DType::F16);
  CAPTURE(type, dtype_name(dtype));
  const ModelConfig cfg = test::tiny_config(type);
  const std::string dir = test::write_model("cuda-" + type + "-" + dtype_name(dtype), cfg, dtype);
  auto cpu = load_cpu(dir);
  auto gpu = test::load_model(dir, kCuda);
  REQUIRE(gpu->device().rfind("cuda", 0) == 0);
  at::InferenceMode guard;

  // A prefill, then a tree over it (two roots, branches), with hidden states of two layers.
  auto forward = [&](LlamaModel& model) {
    KvCache cache = model.new_cache();
    ForwardRequest prefill;
    prefill.tokens = test::some_tokens(30, cfg.vocab_size, 9);
    ForwardResult first = model.forward(cache, prefill);
    ForwardRequest tree;
    tree.tokens = {4, 8, 15, 16, 23, 42};
    tree.parents = {-1, 0, 0, 2, -1, 4};
    tree.positions = {30, 31, 31, 32, 30, 31};
    tree.hidden_layers = {1, 3};
    return std::make_pair(std::move(first), model.forward(cache, tree));
  };
  const auto [cpu_prefill, cpu_tree] = forward(*cpu);
  const auto [gpu_prefill, gpu_tree] = forward(*gpu);
  CHECK(max_abs_diff(cpu_prefill.logits, gpu_prefill.logits) <= test::float32_reorder_bound(dir, cfg, 30));
  CHECK(max_abs_diff(cpu_tree.logits, gpu_tree.logits) <= test::float32_reorder_bound(dir, cfg, 36));
  for (size_t i = 0; i < 2; ++i) {
    const at::Tensor a = test::tensor(cpu_tree.hidden[i]), b = test::tensor(gpu_tree.hidden[i]);
    const double largest = std::max(a.abs().max().item<double>(), b.abs().max().item<double>());
    CHECK((a - b).abs().max().item<double>() <=
          test::float32_reorder_bound_state(test::float32_layers_error(cfg, 36, i == 0 ? 1 : 3), cfg.hidden_size, largest));
  }
}

// The trained demo target, token by token as decoding runs it: every step's logits within the
// bound, and the greedy token the same wherever the CPU's top two are further apart than twice
// the bound (closer ones may rank either way on either device, and are counted, not failed).
TEST_CASE("on CUDA the demo target decodes what the CPU kernels decode", "[model][oracle][cuda]") {
  if (!at::hasCUDA()) SPECD_SKIP("no CUDA device, or a CPU-only libtorch");
  const std::string dir = std::string(SPECD_SOURCE_DIR) + "/data/models/demo-target";
  auto cpu = load_cpu(dir);
  auto gpu = test::load_model(dir, kCuda);
  const ModelConfig& cfg = cpu->config();
  at::InferenceMode guard;
  KvCache cpu_cache = cpu->new_cache(), gpu_cache = gpu->new_cache();
  std::vector<int64_t> next = test::some_tokens(48, cfg.vocab_size, 2);
  int64_t decided = 0, near_ties = 0;
  for (int step = 0; step < 48; ++step) {
    CAPTURE(step);
    ForwardRequest request;
    request.tokens = next;
    const FloatRows a = cpu->forward(cpu_cache, request).logits, b = gpu->forward(gpu_cache, request).logits;
    const double bound = test::float32_reorder_bound(dir, cfg, cpu_cache.length());
    REQUIRE(max_abs_diff(a, b) <= bound);
    const at::Tensor last_a = test::tensor(a)[a.rows - 1], last_b = test::tensor(b)[b.rows - 1];
    const auto top = last_a.topk(2);
    const int64_t token = std::get<1>(top)[0].item<int64_t>();
    if ((std::get<0>(top)[0] - std::get<0>(top)[1]).item<double>() > 2 * bound) {
      CHECK(last_b.argmax().item<int64_t>() == token);
      ++decided;
    } else {
      ++near_ties;
    }
    next = {token};
  }
  CAPTURE(decided, near_ties);
  CHECK(decided > 24);  // the comparison decides most steps (not vacuous)
}
