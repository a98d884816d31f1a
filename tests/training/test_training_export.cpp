// The training module and the runtime compute the same model: a checkpoint the training tool
// writes loads in LlamaModel with no special case and gives the training module's logits.
#include "catch_torch.h"
#include "fixture_models.h"
#include "fixture_training.h"
#include "forward_bounds.h"

#include <filesystem>
#include <fstream>

#include "hf_checkpoint.h"
#include "io/safetensors.h"
#include "model/llama_model.h"
#include "trainer.h"

using namespace specd;
using namespace specd::training;

namespace {

std::vector<int64_t> some_tokens(int64_t n, int64_t vocab) {
  std::vector<int64_t> tokens;
  for (int64_t i = 0; i < n; ++i) tokens.push_back((i * 131 + 7) % vocab);
  return tokens;
}

at::Tensor runtime_logits(const std::string& dir, const std::vector<int64_t>& tokens) {
  auto model = LlamaModel::load(dir, DeviceSpec{"cpu", 1});
  at::InferenceMode guard;
  KvCache cache = model->new_cache();
  ForwardRequest request;
  request.tokens = tokens;
  return test::tensor(model->forward(cache, request).logits);
}

at::Tensor training_logits(TrainLlama& model, const std::vector<int64_t>& tokens) {
  torch::NoGradGuard no_grad;
  return model->forward(torch::tensor(tokens, torch::kLong).unsqueeze(0))[0];
}

double relative_error(const at::Tensor& got, const at::Tensor& want) {
  return ((got - want).abs().max() / want.abs().max()).item<double>();
}

}  // namespace

TEST_CASE("a saved training checkpoint gives the training module's logits in the runtime", "[training]") {
  ModelConfig cfg = test::tiny_training_config();
  TrainLlama model = test::perturbed_model(cfg);
  const auto tokens = some_tokens(48, cfg.vocab_size);
  at::Tensor want = training_logits(model, tokens);

  std::string f32 = test::fixture_dir("training-export-f32");
  save_hf_model(model, f32, DType::F32, "");
  at::Tensor got = runtime_logits(f32, tokens);
  REQUIRE(got.sizes() == want.sizes());
  // Two float32 evaluations of one forward (libtorch's and the runtime's kernels), in other orders.
  CHECK((got - want).abs().max().item<double>() <= test::float32_reorder_bound(f32, cfg, 48));

  std::string bf16 = test::fixture_dir("training-export-bf16");
  save_hf_model(model, bf16, DType::BF16, "");
  double bf16_error = relative_error(runtime_logits(bf16, tokens), want);
  CHECK(bf16_error < 4e-2);
  CHECK(bf16_error > 1e-4);  // the weights really were rounded

  // Another model is far away: the tolerances above mean something.
  TrainLlama other = test::perturbed_model(cfg, 4);
  CHECK(relative_error(training_logits(other, tokens), want) > 0.3);
}

TEST_CASE("the written directory is a tied llama with the end-of-text token as bos and eos", "[training]") {
  ModelConfig cfg = test::tiny_training_config();
  TrainLlama model = test::perturbed_model(cfg);
  std::string dir = test::fixture_dir("training-export-files");
  std::string tokenizer = std::string(SPECD_SOURCE_DIR) + "/tests/fixtures/tiny_byte_tokenizer.json";
  save_hf_model(model, dir, DType::BF16, tokenizer);

  ModelConfig saved = ModelConfig::from_file(dir + "/config.json");
  CHECK(saved.model_type == "llama");
  CHECK(saved.tie_word_embeddings);
  CHECK(saved.torch_dtype == "bfloat16");
  CHECK(saved.bos_token_id == std::optional<int64_t>(300));
  CHECK(saved.eos_token_ids == std::vector<int64_t>{300});
  CHECK(saved.max_position_embeddings == 64);

  auto file = SafetensorsFile::open(dir + "/model.safetensors");
  CHECK(file.find("lm_head.weight") == nullptr);
  CHECK(file.get("model.embed_tokens.weight").dtype == DType::BF16);
  CHECK(file.tensors().size() == 2 + 9 * 2);

  std::ifstream a(tokenizer, std::ios::binary), b(dir + "/tokenizer.json", std::ios::binary);
  CHECK(std::string(std::istreambuf_iterator<char>(a), {}) == std::string(std::istreambuf_iterator<char>(b), {}));
}

TEST_CASE("loading a written directory restores the training module's weights", "[training]") {
  ModelConfig cfg = test::tiny_training_config();
  TrainLlama model = test::perturbed_model(cfg);
  std::string dir = test::fixture_dir("training-export-reload");
  save_hf_model(model, dir, DType::F32, "");
  TrainLlama loaded = load_hf_model(dir);
  auto want = model->named_parameters();
  auto got = loaded->named_parameters();
  REQUIRE(got.size() == want.size());
  for (const auto& item : want) {
    CAPTURE(item.key());
    CHECK(torch::equal(got[item.key()], item.value()));
  }
}
