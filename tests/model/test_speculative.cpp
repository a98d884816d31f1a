// Greedy identity: at T=0 every method emits exactly the autoregressive token sequence, also when
// drafts run past EOS, past the token budget or to the end of the context; and after a step the
// target's KV cache is what autoregressive decoding would hold (checked through identical output
// over many steps with long accepted runs).
#include "catch_torch.h"

#include "decode/autoregressive.h"
#include "decode/methods.h"
#include "decode/speculative.h"
#include "fixture_models.h"

using namespace specd;

namespace {

std::vector<int32_t> run_method(const std::string& method, const LlamaModel& target, std::shared_ptr<const LlamaModel> draft,
                                const std::vector<int32_t>& prompt, const GenerateOptions& options, SpeculativeOutput* details = nullptr) {
  MethodOptions method_options;
  method_options.gamma = 5;
  method_options.tree = {3, 4, 10};
  method_options.sam.len_threshold = 3;
  Policy policy = make_method(method, target, draft, options.sampling, method_options);
  if (policy.autoregressive) return generate_autoregressive(target, prompt, options).tokens;
  SpeculativeOptions spec;
  spec.generate = options;
  spec.max_draft_nodes = policy.max_nodes;
  spec.max_draft_depth = policy.max_depth;
  SpeculativeOutput out = generate_speculative(target, *policy.drafter, *policy.acceptor, prompt, spec);
  if (details) *details = out;
  return out.tokens;
}

// A repetitive prompt, so that retrieval drafts get accepted.
std::vector<int32_t> repetitive_prompt(int64_t vocab) {
  std::vector<int32_t> prompt;
  for (int r = 0; r < 4; ++r)
    for (int32_t t : {11, 23, 5, 77, 42, 9, 130, 64}) prompt.push_back(t % vocab);
  return prompt;
}

// Each step's drafted and accepted token counts.
std::vector<std::pair<int32_t, int32_t>> drafted_and_accepted(const SpeculativeOutput& out) {
  std::vector<std::pair<int32_t, int32_t>> counts;
  for (const StepTrace& step : out.steps) counts.emplace_back(step.draft_size, step.accepted_length);
  return counts;
}

}  // namespace

TEST_CASE("at T=0 every method emits the autoregressive tokens", "[spec][greedy-identity]") {
  auto cfg = test::tiny_config("llama");
  cfg.eos_token_ids = {};
  std::string target_dir = test::write_model("spec-target", cfg, DType::BF16, 21);
  auto target = test::load_model(target_dir);
  // Two drafts: the target itself (every draft accepted: long committed runs) and an unrelated
  // model (most drafts rejected: corrections).
  std::shared_ptr<const LlamaModel> same = test::load_model(target_dir);
  std::shared_ptr<const LlamaModel> other = test::load_model(test::write_model("spec-draft", cfg, DType::BF16, 99));
  auto draft = GENERATE_COPY(same, other);
  auto method = GENERATE(as<std::string>{}, "sd", "sd-tree", "pld", "sam");
  CAPTURE(method, draft == same);

  GenerateOptions options;
  options.max_new_tokens = 60;
  for (const auto& prompt : {repetitive_prompt(cfg.vocab_size), std::vector<int32_t>{3, 1, 4, 1, 5, 9, 2, 6}}) {
    std::vector<int32_t> ar = generate_autoregressive(*target, prompt, options).tokens;
    SpeculativeOutput details;
    CHECK(run_method(method, *target, draft, prompt, options, &details) == ar);
    if (draft == same && (method == "sd" || method == "sd-tree")) {
      // The draft is the target. sd accepts every drafted token. sd-tree's trees also hold
      // branches the target does not take, but they are a function of the committed text alone,
      // so a second run takes the same steps, accepting as many tokens in each; more than 3
      // tokens a step on both prompts (19 steps for 60 tokens).
      if (method == "sd")
        for (const StepTrace& step : details.steps) CHECK(step.accepted_length == step.draft_size);
      SpeculativeOutput again;
      CHECK(run_method(method, *target, draft, prompt, options, &again) == ar);
      CHECK(drafted_and_accepted(again) == drafted_and_accepted(details));
      CHECK(details.steps.size() * 3 < ar.size());
    }
  }
}

TEST_CASE("greedy identity holds when drafts run past EOS, the budget and the context", "[spec][greedy-identity]") {
  auto cfg = test::tiny_config("qwen2");
  cfg.eos_token_ids = {};
  std::string target_dir = test::write_model("spec-edges", cfg, DType::F32, 5);
  auto target = test::load_model(target_dir);
  std::shared_ptr<const LlamaModel> draft = test::load_model(target_dir);
  auto method = GENERATE(as<std::string>{}, "sd", "sd-tree", "pld", "sam");
  CAPTURE(method);
  const auto prompt = repetitive_prompt(cfg.vocab_size);

  GenerateOptions options;
  options.max_new_tokens = 40;
  std::vector<int32_t> free_run = generate_autoregressive(*target, prompt, options).tokens;

  SECTION("a stop token in the middle of an accepted draft") {
    options.stop_tokens = {free_run[13]};
    CHECK(run_method(method, *target, draft, prompt, options) == generate_autoregressive(*target, prompt, options).tokens);
  }
  SECTION("budgets that end inside a draft") {
    for (int64_t budget : {1, 2, 7, 13}) {
      options.max_new_tokens = budget;
      CHECK(run_method(method, *target, draft, prompt, options) == generate_autoregressive(*target, prompt, options).tokens);
    }
  }
  SECTION("the end of the context") {
    std::vector<int32_t> long_prompt;
    for (int i = 0; i < 31; ++i)
      for (int32_t t : {7, 8, 9, 10, 11, 12, 13, 14}) long_prompt.push_back(t);
    long_prompt.resize(247);  // context 256: 9 positions left
    options.max_new_tokens = 100;
    auto ar = generate_autoregressive(*target, long_prompt, options).tokens;
    CHECK(ar.size() == 9);
    CHECK(run_method(method, *target, draft, long_prompt, options) == ar);
  }
}

TEST_CASE("unknown methods and inconsistent drafts are refused naming the option", "[spec]") {
  auto cfg = test::tiny_config("llama");
  auto target = test::load_model(test::write_model("spec-options", cfg));
  auto small_vocab = cfg;
  small_vocab.vocab_size = 200;
  std::shared_ptr<const LlamaModel> other_vocab = test::load_model(test::write_model("spec-options-vocab", small_vocab));
  CHECK_THROWS_WITH(make_method("medusa", *target, nullptr, {}, {}), Catch::Contains("--methods"));
  CHECK_THROWS_WITH(make_method("sd", *target, nullptr, {}, {}), Catch::Contains("draft"));
  CHECK_THROWS_WITH(make_method("sd", *target, other_vocab, {}, {}), Catch::Contains("--draft"));
  MethodOptions shallow;
  shallow.tree = {4, 6, 3};
  CHECK_THROWS_WITH(make_method("sd-tree", *target, target, {}, shallow), Catch::Contains("--tree-nodes"));
}
