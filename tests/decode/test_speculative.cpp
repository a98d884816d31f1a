// Greedy identity: at T=0 every method emits exactly the autoregressive token sequence, also when
// drafts run past EOS, past the token budget or to the end of the context; and after a step the
// target's KV cache is what autoregressive decoding would hold (checked through identical output
// over many steps with long accepted runs).
#include "catch_torch.h"

#include "decode/autoregressive.h"
#include "speculative/adapld_drafter.h"
#include "speculative/model_chain_drafter.h"
#include "speculative/model_tree_drafter.h"
#include "speculative/greedy_acceptor.h"
#include "speculative/pld_drafter.h"
#include "speculative/sam_drafter.h"
#include "methods/method_registry.h"
#include "speculative/sampling_acceptor.h"
#include "decode/speculative.h"
#include "fixture_models.h"

#include <limits>
#include <numeric>

#include <nlohmann/json.hpp>

#include "artifact/artifact.h"

using namespace specd;

namespace {

std::vector<int32_t> run_method(const std::string& method, const LlamaModel& target, std::shared_ptr<const LlamaModel> draft,
                                const std::vector<int32_t>& prompt, const GenerateOptions& options, SpeculativeOutput* details = nullptr) {
  MethodOptions method_options;
  method_options.gamma = 5;
  method_options.tree = {3, 4, 10};
  method_options.sam.len_threshold = 3;
  Policy policy = make_policy(method, MethodContext{target, draft, options.sampling, method_options, nullptr});
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

// Every method against AR, the target's and the drafts' KV caches all in `kv`.
void check_greedy_identity(KvType kv) {
  auto cfg = test::tiny_config("llama");
  cfg.eos_token_ids = {};
  // Fixture folders per KV type: ctest runs the two tests below side by side.
  const std::string suffix = std::string("-kv-") + kv_type_name(kv);
  std::string target_dir = test::write_model("spec-target" + suffix, cfg, DType::BF16, 21);
  auto target = test::load_model(target_dir, false, 1, false, kv);
  // Two drafts: the target itself (every draft accepted: long committed runs) and an unrelated
  // model (most drafts rejected: corrections).
  std::shared_ptr<const LlamaModel> same = test::load_model(target_dir, false, 1, false, kv);
  std::shared_ptr<const LlamaModel> other = test::load_model(test::write_model("spec-draft" + suffix, cfg, DType::BF16, 99), false, 1, false, kv);
  auto draft = GENERATE_COPY(same, other);
  auto method = GENERATE(as<std::string>{}, "sd", "sd-tree", "pld", "sam", "adapld", "adapld-lexical-only", "adapld-no-branches",
                         "adapld-no-successors");
  CAPTURE(kv_type_name(kv), method, draft == same);

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
      // tokens a step on both prompts (19 steps for 60 tokens) with a float32 cache.
      if (method == "sd")
        for (const StepTrace& step : details.steps) CHECK(step.accepted_length == step.draft_size);
      SpeculativeOutput again;
      CHECK(run_method(method, *target, draft, prompt, options, &again) == ar);
      CHECK(drafted_and_accepted(again) == drafted_and_accepted(details));
      // With a 16-bit cache the drafts' probabilities (so the trees' shapes) change a little;
      // still at least 3 tokens a step.
      if (kv == KvType::F32) CHECK(details.steps.size() * 3 < ar.size());
      CHECK(details.steps.size() * 3 <= ar.size());
    }
  }
}

}  // namespace

TEST_CASE("at T=0 every method emits the autoregressive tokens", "[spec][greedy-identity]") { check_greedy_identity(KvType::F32); }

// Its own test so that the sanitizer stage can leave it out (scripts/sanitize.sh says why).
TEST_CASE("at T=0 every method emits the autoregressive tokens with 16-bit KV caches", "[spec][greedy-identity]") {
  check_greedy_identity(GENERATE(KvType::BF16, KvType::F16));
}

TEST_CASE("greedy identity holds when drafts run past EOS, the budget and the context", "[spec][greedy-identity]") {
  auto cfg = test::tiny_config("qwen2");
  cfg.eos_token_ids = {};
  std::string target_dir = test::write_model("spec-edges", cfg, DType::F32, 5);
  auto target = test::load_model(target_dir);
  std::shared_ptr<const LlamaModel> draft = test::load_model(target_dir);
  auto method = GENERATE(as<std::string>{}, "sd", "sd-tree", "pld", "sam", "adapld", "adapld-lexical-only", "adapld-no-branches",
                         "adapld-no-successors");
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
  const SamplingParams greedy;
  const MethodOptions defaults;
  auto make = [&](const std::string& method, std::shared_ptr<const LlamaModel> draft, const MethodOptions& options) {
    return make_policy(method, MethodContext{*target, draft, greedy, options, nullptr});
  };
  // Runtime errors name the method and the field, never a command-line flag.
  CHECK_THROWS_WITH(make("medusa", nullptr, defaults), Catch::StartsWith("method: unknown method 'medusa'") && Catch::Contains("csd"));
  CHECK_THROWS_WITH(make("sd", nullptr, defaults), "method sd: needs a draft model");
  CHECK_THROWS_WITH(make("sd", other_vocab, defaults), Catch::StartsWith("draft model: its vocabulary (200)"));
  MethodOptions shallow;
  shallow.tree = {4, 6, 3};
  CHECK_THROWS_WITH(make("sd-tree", target, shallow), Catch::StartsWith("method sd-tree: a tree budget of 3 nodes"));
  CHECK_THROWS_WITH(make("csd", target, defaults), "method csd: needs a calibration artifact (made by specd calibrate csd)");
  MethodOptions deep;
  deep.adapld.layer = static_cast<int32_t>(cfg.num_hidden_layers) + 1;
  CHECK_THROWS_WITH(make("adapld-no-successors", nullptr, deep),
                    "method adapld-no-successors: layer " + std::to_string(deep.adapld.layer) + " is past the target's " +
                        std::to_string(cfg.num_hidden_layers) + " layers");
  deep.adapld.layer = static_cast<int32_t>(cfg.num_hidden_layers);  // the last layer's output is allowed
  CHECK_NOTHROW(make("adapld", nullptr, deep));
  deep.adapld.tau_sim = 2;
  CHECK_THROWS_WITH(make("adapld", nullptr, deep), "method adapld: tau_sim must be in [-1, 1] (got 2)");
  for (const MethodInfo& m : method_registry()) {
    CAPTURE(m.name);
    const bool lossy = m.name.rfind("csd", 0) == 0 || m.name == "arc" || m.name == "arc-lts-only" ||
                       (m.name.rfind("respec", 0) == 0 && m.name != "respec-lossless");
    CHECK(m.lossless == !lossy);  // every lossy policy says so
  }
}

TEST_CASE("csd with lambda = infinity is sd token for token, at T=0 and when sampling", "[spec][csd]") {
  auto cfg = test::tiny_config("llama");
  cfg.eos_token_ids = {};
  auto target = test::load_model(test::write_model("csd-target", cfg, DType::BF16, 21));
  std::shared_ptr<const LlamaModel> draft = test::load_model(test::write_model("csd-draft", cfg, DType::BF16, 99));
  Artifact artifact;
  artifact.csd = CsdCalibration{};
  artifact.csd->pairs = {CsdPair{5, 7, 1000}};  // frequent pairs exist, but lambda is never reached
  MethodOptions options;
  options.gamma = 4;
  options.adaptive_budget = false;
  options.csd.lambda = std::numeric_limits<int64_t>::max();
  const std::vector<int32_t> prompt{3, 1, 4, 1, 5, 9, 2, 6};
  for (double temperature : {0.0, 0.8}) {
    GenerateOptions generate;
    generate.max_new_tokens = 48;
    generate.sampling.temperature = temperature;
    generate.sampling.seed = 17;
    Policy sd = make_policy("sd", MethodContext{*target, draft, generate.sampling, options, nullptr});
    Policy csd = make_policy("csd", MethodContext{*target, draft, generate.sampling, options, &artifact});
    const SpeculativeOutput a = decode_with(*target, sd, prompt, generate);
    const SpeculativeOutput b = decode_with(*target, csd, prompt, generate);
    CAPTURE(temperature);
    CHECK(a.tokens == b.tokens);
    REQUIRE(a.steps.size() == b.steps.size());
    int64_t rescued = 0;
    for (const StepTrace& s : b.steps) rescued += s.rescued;
    CHECK(rescued == 0);
    CHECK(csd.memory->online_records() > 0);  // every rejection still updated the memory
    CHECK_FALSE(b.steps.front().lossless);    // and the traces say the policy is lossy
  }
}

TEST_CASE("csd rescues rejected drafts: more accepted, marked in the steps, output no longer AR's", "[spec][csd]") {
  auto cfg = test::tiny_config("llama");
  cfg.eos_token_ids = {};
  auto target = test::load_model(test::write_model("csd-online-target", cfg, DType::BF16, 21));
  std::shared_ptr<const LlamaModel> draft = test::load_model(test::write_model("csd-online-draft", cfg, DType::BF16, 99));
  Artifact artifact;
  artifact.csd = CsdCalibration{};
  MethodOptions options;
  options.gamma = 4;
  options.adaptive_budget = false;
  options.csd = CsdOptions{1, 1e-6};  // every rejection of a near-enough token is rescued
  GenerateOptions generate;
  generate.max_new_tokens = 40;
  const std::vector<int32_t> prompt{3, 1, 4, 1, 5, 9, 2, 6};
  Policy sd = make_policy("sd", MethodContext{*target, draft, generate.sampling, options, nullptr});
  Policy csd = make_policy("csd", MethodContext{*target, draft, generate.sampling, options, &artifact});
  const SpeculativeOutput a = decode_with(*target, sd, prompt, generate);
  const SpeculativeOutput b = decode_with(*target, csd, prompt, generate);
  int64_t accepted_sd = 0, accepted_csd = 0, rescued = 0;
  for (const StepTrace& s : a.steps) accepted_sd += s.accepted_length;
  for (const StepTrace& s : b.steps) {
    accepted_csd += s.accepted_length;
    rescued += s.rescued;
    if (s.rescued) CHECK(s.accepted_verdicts.find('C') != std::string::npos);
  }
  CHECK(rescued > 0);
  CHECK(accepted_csd > accepted_sd);
  CHECK(b.tokens != a.tokens);
  CHECK(b.tokens.size() == a.tokens.size());
}

// The registry's adapld asks the prefill for its last row's logits and its prompt positions' top-K
// through the output head when they become anchors (LlamaModel::logits_from_hidden); that must
// draft exactly the trees the drafter makes from every prompt row's logits.
TEST_CASE("adapld's prompt top-K through the output head drafts what every prefill row's logits draft", "[spec][adapld]") {
  auto cfg = test::tiny_config("llama");
  cfg.eos_token_ids = {};
  const DType dtype = GENERATE(DType::F32, DType::BF16);
  const int32_t layer = GENERATE(1, 3);  // 3: the last layer, whose states serve both uses
  CAPTURE(dtype_name(dtype), layer);
  auto target = test::load_model(test::write_model("spec-adapld-head", cfg, dtype, 34));
  GenerateOptions options;
  options.max_new_tokens = 40;
  SpeculativeOptions spec;
  spec.generate = options;
  spec.max_draft_nodes = 46;
  spec.max_draft_depth = 30;
  std::vector<int32_t> copied;
  for (int r = 0; r < 3; ++r)
    for (int32_t t : {40, 41, 42, 43, 44, 45, 46, 47, 48, 49}) copied.push_back(r == 1 && t == 44 ? 7 : t);
  const EmbeddingLookup embeddings{cfg.hidden_size, [&](int32_t token, float* out) { target->embedding_row(token, out); }};
  const LogitsLookup head{static_cast<int32_t>(cfg.num_hidden_layers), cfg.vocab_size, [&](const float* hidden, float* out) {
                            const FloatRows row = target->logits_from_hidden(hidden, 1);
                            std::copy(row.values.begin(), row.values.end(), out);
                          }};
  int64_t branches = 0;
  for (const auto& prompt : {repetitive_prompt(cfg.vocab_size), copied}) {
    AdaPldDrafter every_row(AdaPldOptions{}, layer, embeddings);
    AdaPldDrafter lazy(AdaPldOptions{}, layer, embeddings, "adapld", head);
    CHECK(every_row.needs().prefill_logits_rows == 0);
    CHECK(lazy.needs().prefill_logits_rows == 1);
    SamplingAcceptor acceptor;
    const SpeculativeOutput a = generate_speculative(*target, every_row, acceptor, prompt, spec);
    const SpeculativeOutput b = generate_speculative(*target, lazy, acceptor, prompt, spec);
    CHECK(a.tokens == b.tokens);
    REQUIRE(a.steps.size() == b.steps.size());
    for (size_t i = 0; i < a.steps.size(); ++i) {
      CAPTURE(i);
      CHECK(a.steps[i].draft_size == b.steps[i].draft_size);
      CHECK(a.steps[i].accepted_length == b.steps[i].accepted_length);
      CHECK(step_detail_json(a.steps[i].detail) == step_detail_json(b.steps[i].detail));
      if (const DetailValue* n = drafting_value(a.steps[i].detail.drafting, "branches")) branches += std::get<int64_t>(n->value);
    }
  }
  CHECK(branches > 0);  // the branches (the top-K's use) were drafted
}

TEST_CASE("adapld and its ablations equal AR at T=0 on repetitive and plain prompts, layer by layer", "[spec][greedy-identity][adapld]") {
  auto cfg = test::tiny_config("llama");
  cfg.eos_token_ids = {};
  auto target = test::load_model(test::write_model("spec-adapld", cfg, DType::F32, 33));
  auto method = GENERATE(as<std::string>{}, "adapld", "adapld-lexical-only", "adapld-no-branches", "adapld-no-successors");
  const int32_t layer = GENERATE(-1, 0, 3);
  CAPTURE(method, layer);
  GenerateOptions options;
  options.max_new_tokens = 48;
  std::vector<int32_t> copied;  // a prompt that quotes itself with edits, as code edits do
  for (int r = 0; r < 3; ++r)
    for (int32_t t : {40, 41, 42, 43, 44, 45, 46, 47, 48, 49}) copied.push_back(r == 1 && t == 44 ? 7 : t);
  std::vector<std::vector<int32_t>> prompts{repetitive_prompt(cfg.vocab_size), {3, 1, 4, 1, 5, 9, 2, 6}, copied, {17}};
  int64_t drafted = 0;
  for (const auto& prompt : prompts) {
    MethodOptions method_options;
    method_options.adapld.layer = layer;
    method_options.adaptive_budget = false;
    Policy policy = make_policy(method, MethodContext{*target, nullptr, options.sampling, method_options, nullptr});
    SpeculativeOptions spec;
    spec.generate = options;
    spec.max_draft_nodes = policy.max_nodes;
    spec.max_draft_depth = policy.max_depth;
    const SpeculativeOutput out = generate_speculative(*target, *policy.drafter, *policy.acceptor, prompt, spec);
    CHECK(out.tokens == generate_autoregressive(*target, prompt, options).tokens);
    for (const StepTrace& step : out.steps) {
      drafted += step.draft_size;
      CHECK(drafting_value(step.detail.drafting, "retrieval"));
      CHECK(drafting_value(step.detail.drafting, "reuse"));
    }
  }
  CHECK(drafted > 0);
}

// The draft budget learns a draft model's cost per node only from proposals with a short
// catch-up (decode/speculative.cpp): the first draft of a request feeds the whole prompt, and
// counting that as the nodes' cost once kept every draft-model method off for the rest of a run.
TEST_CASE("a draft model reports its catch-up with the text: the prompt at first, then a token or two", "[spec][budget]") {
  auto cfg = test::tiny_config("llama");
  cfg.eos_token_ids = {};
  std::shared_ptr<const LlamaModel> draft = test::load_model(test::write_model("catch-up-draft", cfg, DType::BF16, 99));
  std::vector<int32_t> committed;
  for (int32_t i = 0; i < 120; ++i) committed.push_back(1 + i % 250);
  ModelChainDrafter chain(draft, 4, SamplingParams{});
  TreeDraftOptions shape;
  ModelTreeDrafter tree(draft, shape);
  for (Drafter* drafter : {static_cast<Drafter*>(&chain), static_cast<Drafter*>(&tree)}) {
    CAPTURE(drafter->name());
    drafter->begin(committed, 1);
    std::vector<int32_t> text = committed;
    const DraftTree first = drafter->propose(DraftRequest{text, 7, 4, 4});
    REQUIRE(first.size() > 1);
    CHECK(drafter->last_catch_up() == 120);  // the prompt, before the root
    // The first drafted token accepted, then a new root: two tokens to catch up at most.
    text.push_back(7);
    text.push_back(first.tokens[1]);
    const DraftTree second = drafter->propose(DraftRequest{text, 11, 4, 4});
    REQUIRE(second.size() > 1);
    CHECK(drafter->last_catch_up() <= 2);
    // A step it did not draft: nothing fed, nothing to learn from.
    text.push_back(11);
    drafter->propose(DraftRequest{text, 12, 0, 0});
    CHECK(drafter->last_catch_up() == 0);
  }
}

namespace {

// A tiny target and draft that never stop early, and a prompt PLD finds matches in.
struct StepPair {
  std::shared_ptr<const LlamaModel> target, draft;
  std::vector<int32_t> prompt;
};

StepPair step_pair(const std::string& name) {
  auto cfg = test::tiny_config("llama");
  cfg.eos_token_ids = {};
  return StepPair{test::load_model(test::write_model(name + "-target", cfg, DType::BF16, 7)),
                  test::load_model(test::write_model(name + "-draft", cfg, DType::BF16, 99)), repetitive_prompt(cfg.vocab_size)};
}

}  // namespace

TEST_CASE("a draft model's first forward of a step catches it up with the text: the prompt first, then what was not drafted", "[spec][budget]") {
  const auto [target, draft, prompt] = step_pair("catchup");
  GreedyAcceptor greedy;
  ModelChainDrafter chain(draft, 3, SamplingParams{});
  PldDrafter pld;
  SpeculativeOptions options;
  options.generate.max_new_tokens = 24;
  SpeculativeSession session(*target, chain, greedy, prompt, options);
  REQUIRE(session.step());  // the prefill: the draft model has seen nothing yet
  CHECK(session.first_draft_rows() == static_cast<int64_t>(prompt.size()) + 1);
  CHECK(session.remaining_tokens() == 23);
  // Two undrafted steps, then a drafted one: its first forward runs those tokens and the root.
  for (int step = 0; step < 2; ++step) {
    session.plan_draft(0);
    REQUIRE(session.step());
  }
  CHECK(session.first_draft_rows() == static_cast<int64_t>(prompt.size()) + 3);
  session.begin_draft();
  REQUIRE(session.draft_round() != nullptr);
  CHECK(static_cast<int64_t>(session.draft_round()->tokens.size()) == static_cast<int64_t>(prompt.size()) + 3);
  const ForwardRequest* forward = session.prepare();
  REQUIRE(forward != nullptr);
  session.complete(target->forward(session.cache(), *forward), 1.0, static_cast<int32_t>(forward->tokens.size()));
  // Drafted: the next catch-up is the step's commits past what the draft model ran.
  CHECK(session.first_draft_rows() <= 4);
  SpeculativeSession retrieval(*target, pld, greedy, prompt, options);
  REQUIRE(retrieval.step());
  CHECK(retrieval.first_draft_rows() == 0);  // no draft model
}

TEST_CASE("a step without the draft model: sam drafts what retrieval alone drafts, sd drafts nothing", "[spec][budget]") {
  // Named, not bound: a lambda may not capture a structured binding in C++17 (clang refuses).
  const StepPair pair = step_pair("without-model");
  const std::shared_ptr<const LlamaModel> target = pair.target, draft = pair.draft;
  const std::vector<int32_t> prompt = pair.prompt;
  GreedyAcceptor greedy;
  ModelChainDrafter fallback(draft, 3, SamplingParams{}), chain(draft, 3, SamplingParams{});
  const SamOptions low{40, 2, 5};  // short matches draft too, so that retrieval drafts here
  SamDrafter sam(low, &fallback), retrieval_only(low);
  SpeculativeOptions options;
  options.generate.max_new_tokens = 32;
  // Each step's planned rows; `without_model`: every step is asked to run no draft-model forward.
  auto rows_of = [&](Drafter& drafter, bool without_model) {
    SpeculativeSession session(*target, drafter, greedy, prompt, options);
    REQUIRE(session.step());  // the prefill
    std::vector<int32_t> rows;
    while (!session.finished()) {
      if (without_model) session.plan_without_model();
      session.begin_draft();
      if (without_model) CHECK(session.draft_round() == nullptr);
      rows.push_back(session.planned_rows());
      const ForwardRequest* forward = session.prepare();
      REQUIRE(forward != nullptr);
      session.complete(target->forward(session.cache(), *forward), 1.0, static_cast<int32_t>(forward->tokens.size()));
    }
    return rows;
  };
  const std::vector<int32_t> sam_rows = rows_of(sam, true);
  CHECK(sam_rows == rows_of(retrieval_only, false));
  CHECK(std::count_if(sam_rows.begin(), sam_rows.end(), [](int32_t r) { return r > 1; }) > 0);  // retrieval drafted
  const std::vector<int32_t> with_model = rows_of(sam, false);
  CHECK(with_model != sam_rows);  // the fallback drafts where retrieval finds nothing
  for (int32_t r : rows_of(chain, true)) CHECK(r == 1);
}

TEST_CASE("a begun step plans the rows it will verify: a retrieval draft's own tree, a draft model's most", "[spec][budget]") {
  const auto [target, draft, prompt] = step_pair("plan");
  GreedyAcceptor greedy;
  PldDrafter pld;
  ModelChainDrafter chain(draft, 3, SamplingParams{});
  for (Drafter* drafter : {static_cast<Drafter*>(&pld), static_cast<Drafter*>(&chain)}) {
    CAPTURE(drafter->name());
    SpeculativeOptions options;
    options.generate.max_new_tokens = 24;
    options.max_draft_nodes = 16;  // far above what either drafts: the plan must not be this
    options.max_draft_depth = 16;
    SpeculativeSession session(*target, *drafter, greedy, prompt, options);
    REQUIRE(session.step());  // the prefill
    int32_t steps = 0;
    while (!session.finished()) {
      session.begin_draft();
      const int32_t planned = session.planned_rows();
      const ForwardRequest* forward = session.prepare();
      if (!forward) break;
      const int32_t rows = static_cast<int32_t>(forward->tokens.size());
      // Retrieval drafts its tree at begin; the chain drafts its gamma (or what the budget of new
      // tokens leaves) in the rounds after, as planned.
      CHECK(planned == rows);
      if (drafter == &chain) CHECK(planned <= 4);
      session.complete(target->forward(session.cache(), *forward), 1.0, rows);
      ++steps;
    }
    CHECK(steps > 0);
  }
}

TEST_CASE("a prompt prefilled in chunks decodes what one prefill decodes, the rows a drafter observes all in the last forward",
          "[spec][prefill]") {
  auto cfg = test::tiny_config("llama");
  cfg.eos_token_ids = {};
  auto target = test::load_model(test::write_model("spec-target-chunks", cfg, DType::BF16, 21), false, 1, false, KvType::F32);
  std::shared_ptr<const LlamaModel> draft = test::load_model(test::write_model("spec-draft-chunks", cfg, DType::BF16, 99), false, 1, false, KvType::F32);
  const std::vector<int32_t> prompt = repetitive_prompt(cfg.vocab_size);  // 32 tokens
  const int64_t n = static_cast<int64_t>(prompt.size());
  const auto method = GENERATE(as<std::string>{}, "sd", "pld", "sam", "respec-lossless", "adapld");
  const double temperature = GENERATE(0.0, 0.8);
  CAPTURE(method, temperature);
  // One request, its prefill forwards' rows recorded.
  const auto decode = [&](int64_t chunk, std::vector<int64_t>& prefill_rows) {
    GenerateOptions generate;
    generate.max_new_tokens = 12;
    generate.sampling.temperature = temperature;
    generate.sampling.seed = 5;
    MethodOptions method_options;
    method_options.gamma = 4;
    method_options.sam.len_threshold = 3;
    Policy policy = make_policy(method, MethodContext{*target, draft, generate.sampling, method_options, nullptr});
    SpeculativeOptions options;
    options.generate = generate;
    options.max_draft_nodes = policy.max_nodes;
    options.max_draft_depth = policy.max_depth;
    options.prefill_chunk = chunk;
    SpeculativeSession session(*target, *policy.drafter, *policy.acceptor, prompt, options);
    while (!session.finished()) {
      const bool prefilling = !session.started();
      session.begin_draft();
      const int32_t planned = session.planned_rows();
      const ForwardRequest* forward = session.prepare();
      if (!forward) break;
      const int32_t rows = static_cast<int32_t>(forward->tokens.size());
      // A prefill plans its rows exactly; a step at most (a draft model's rounds may draft fewer).
      if (prefilling) CHECK(planned == rows);
      else CHECK(planned >= rows);
      if (prefilling) prefill_rows.push_back(rows);
      session.complete(target->forward(session.cache(), *forward), 1.0, rows);
    }
    return session.finish().tokens;
  };
  std::vector<int64_t> whole_rows;
  const std::vector<int32_t> whole = decode(0, whole_rows);
  CHECK(whole_rows == std::vector<int64_t>{n});
  for (int64_t chunk : {1, 5}) {  // respec's 3 observed rows: more than a chunk, and fewer
    CAPTURE(chunk);
    std::vector<int64_t> rows;
    CHECK(decode(chunk, rows) == whole);
    REQUIRE(!rows.empty());
    CHECK(std::accumulate(rows.begin(), rows.end(), int64_t{0}) == n);
    for (size_t i = 0; i + 1 < rows.size(); ++i) CHECK(rows[i] <= chunk);
    // The last forward holds the rows the drafter observes: adapld every prompt row, respec its
    // longest key (3); the others only need the last row's logits.
    if (method == "adapld") CHECK(rows.size() == 1);
    else if (method == "respec-lossless") CHECK((rows.back() >= 3 && rows.back() <= std::max<int64_t>(chunk, 3)));
    else CHECK(rows.size() == static_cast<size_t>((n + chunk - 1) / chunk));
  }
}
