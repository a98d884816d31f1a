// The same weights stored as F32, F16 or BF16, whole or sharded, load to the same model.
#include "catch_torch.h"

#include "fixture_models.h"

using namespace specd;

namespace {

at::Tensor logits_of(const std::string& dir) {
  auto model = test::load_model(dir);
  at::InferenceMode guard;
  KvCache cache = model->new_cache();
  ForwardRequest request;
  for (int64_t i = 0; i < 24; ++i) request.tokens.push_back((i * 37 + 11) % model->config().vocab_size);
  return test::tensor(model->forward(cache, request).logits);
}

double relative_error(const at::Tensor& got, const at::Tensor& want) {
  return ((got - want).abs().max() / want.abs().max()).item<double>();
}

}  // namespace

TEST_CASE("F32, F16 and BF16 checkpoints of the same weights give the same logits within the dtype's precision", "[model][dtype]") {
  auto cfg = test::tiny_config("llama");
  at::Tensor f32 = logits_of(test::write_model("dtype-f32", cfg, DType::F32, 11));
  at::Tensor f16 = logits_of(test::write_model("dtype-f16", cfg, DType::F16, 11));
  at::Tensor bf16 = logits_of(test::write_model("dtype-bf16", cfg, DType::BF16, 11));
  // Weights rounded to 11 (F16) or 8 (BF16) significant bits move the logits by about that much.
  CHECK(relative_error(f16, f32) < 5e-3);
  CHECK(relative_error(bf16, f32) < 4e-2);
  CHECK(relative_error(bf16, f32) > relative_error(f16, f32));  // the coarser format is further off
  // Another seed is far away: the tolerance above is meaningful.
  at::Tensor other = logits_of(test::write_model("dtype-other", cfg, DType::F32, 12));
  CHECK(relative_error(other, f32) > 0.3);
}

TEST_CASE("a sharded checkpoint loads to the same logits as a single file", "[model][dtype]") {
  auto cfg = test::tiny_config("qwen2");
  at::Tensor whole = logits_of(test::write_model("shard-whole", cfg, DType::BF16, 5));
  std::string split_dir = test::write_model("shard-split", cfg, DType::BF16, 5, /*max_shard_bytes=*/40000);
  REQUIRE(std::filesystem::exists(split_dir + "/model.safetensors.index.json"));
  REQUIRE_FALSE(std::filesystem::exists(split_dir + "/model.safetensors"));
  at::Tensor sharded = logits_of(split_dir);
  CHECK(at::equal(whole, sharded));
}
