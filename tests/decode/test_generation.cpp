// Autoregressive decoding: greedy equals the argmax of a full forward at every step, sampling is
// reproducible from its seed, and generation stops at EOS and at the context's end.
#include "catch_torch.h"

#include "decode/autoregressive.h"
#include "fixture_models.h"
#include "util/error.h"

using namespace specd;

TEST_CASE("greedy decoding picks the full forward's argmax at every step", "[model][generate]") {
  auto cfg = test::tiny_config("llama");
  cfg.eos_token_ids = {};
  auto model = test::load_model(test::write_model("greedy", cfg));
  std::vector<int32_t> prompt{3, 14, 15, 92, 65, 35};
  GenerateOptions options;
  options.max_new_tokens = 30;
  GenerateOutput out = generate_autoregressive(*model, prompt, options);
  REQUIRE(out.tokens.size() == 30);

  at::InferenceMode guard;
  KvCache cache = model->new_cache();
  ForwardRequest request;
  request.tokens.assign(prompt.begin(), prompt.end());
  request.tokens.insert(request.tokens.end(), out.tokens.begin(), out.tokens.end() - 1);
  at::Tensor logits = test::tensor(model->forward(cache, request).logits);
  at::Tensor argmax = logits.narrow(0, prompt.size() - 1, out.tokens.size()).argmax(-1);
  for (size_t i = 0; i < out.tokens.size(); ++i) CHECK(argmax[i].item<int64_t>() == out.tokens[i]);
}

TEST_CASE("sampling is reproducible from its seed", "[model][generate]") {
  auto cfg = test::tiny_config("qwen2");
  cfg.eos_token_ids = {};
  auto model = test::load_model(test::write_model("sampling", cfg));
  GenerateOptions options;
  options.max_new_tokens = 40;
  options.sampling.temperature = 1.0;
  options.sampling.top_p = 0.95;
  options.sampling.seed = 42;
  auto a = generate_autoregressive(*model, {1, 2, 3}, options).tokens;
  auto b = generate_autoregressive(*model, {1, 2, 3}, options).tokens;
  options.sampling.seed = 43;
  auto c = generate_autoregressive(*model, {1, 2, 3}, options).tokens;
  CHECK(a == b);
  CHECK(a != c);
}

TEST_CASE("generation stops at EOS and at the end of the context", "[model][generate]") {
  auto cfg = test::tiny_config("llama");
  cfg.eos_token_ids = {};
  auto model = test::load_model(test::write_model("stops", cfg));
  GenerateOptions options;
  options.max_new_tokens = 20;
  auto free_run = generate_autoregressive(*model, {7, 8, 9}, options).tokens;
  options.stop_tokens = {free_run[4]};
  auto stopped = generate_autoregressive(*model, {7, 8, 9}, options);
  auto first = std::find(free_run.begin(), free_run.end(), free_run[4]) - free_run.begin();
  CHECK(stopped.stats.stopped);
  CHECK(static_cast<int64_t>(stopped.tokens.size()) == first + 1);

  options.stop_tokens.clear();
  options.max_new_tokens = 1000;
  std::vector<int32_t> long_prompt(250, 5);
  auto capped = generate_autoregressive(*model, long_prompt, options);
  CHECK(capped.tokens.size() == 6);  // context 256
  std::vector<int32_t> too_long(256, 5);
  CHECK_THROWS_AS(generate_autoregressive(*model, too_long, options), InputError);
}
