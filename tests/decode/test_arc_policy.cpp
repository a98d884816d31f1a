// ARC-Decode end to end on tiny models: with theta above 1 and no pruning (arc-lts-only) it is
// sd-tree token for token, greedy and sampling with the same seed (the same random draws);
// arc-prune-only is lossless (greedy identity with AR); arc with permissive constants relaxes
// tokens and says so in the steps; an artifact made for other sampling settings is refused.
#include "catch_torch.h"

#include <nlohmann/json.hpp>

#include "artifact/artifact.h"
#include "decode/autoregressive.h"
#include "decode/speculative.h"
#include "fixture_models.h"
#include "methods/method_registry.h"
#include "util/error.h"

using namespace specd;

namespace {

// An ARC calibration made "for" the given settings, with the constants given.
Artifact arc_artifact(const ModelConfig& target, double temperature, double c_s, double alpha_kappa, double tau) {
  Artifact artifact;
  ArcCalibration arc;
  arc.provenance.temperature = temperature;
  arc.whitening.assign(static_cast<size_t>(target.hidden_size), 1.0f);
  ArcConstants all;
  all.c_s = c_s;
  all.alpha_kappa = alpha_kappa;
  all.tau_delta = tau;
  arc.constants = {all};
  artifact.arc = arc;
  return artifact;
}

MethodOptions tree_options() {
  MethodOptions options;
  options.tree = {3, 4, 10};
  options.adaptive_budget = false;
  return options;
}

}  // namespace

TEST_CASE("arc-lts-only with theta above 1 is sd-tree token for token, greedy and sampling", "[spec][arc]") {
  auto cfg = test::tiny_config("llama");
  cfg.eos_token_ids = {};
  auto target = test::load_model(test::write_model("arc-target", cfg, DType::BF16, 21));
  std::shared_ptr<const LlamaModel> draft = test::load_model(test::write_model("arc-draft", cfg, DType::BF16, 99));
  MethodOptions options = tree_options();
  options.arc_theta = 1.01;
  const std::vector<int32_t> prompt{3, 1, 4, 1, 5, 9, 2, 6};
  for (double temperature : {0.0, 0.8}) {
    const Artifact artifact = arc_artifact(target->config(), temperature, 1e-3, 1e-3, 1.0);
    GenerateOptions generate;
    generate.max_new_tokens = 48;
    generate.sampling.temperature = temperature;
    generate.sampling.seed = 17;
    Policy tree = make_policy("sd-tree", MethodContext{*target, draft, generate.sampling, options, nullptr});
    Policy arc = make_policy("arc-lts-only", MethodContext{*target, draft, generate.sampling, options, &artifact});
    const SpeculativeOutput a = decode_with(*target, tree, prompt, generate);
    const SpeculativeOutput b = decode_with(*target, arc, prompt, generate);
    CAPTURE(temperature);
    CHECK(a.tokens == b.tokens);
    REQUIRE(a.steps.size() == b.steps.size());
    int64_t evaluated = 0;
    for (size_t i = 0; i < a.steps.size(); ++i) {
      CHECK(a.steps[i].accepted_length == b.steps[i].accepted_length);
      CHECK(b.steps[i].relaxed == 0);
      CHECK_FALSE(b.steps[i].lossless);
      evaluated += !b.steps[i].detail.empty();
    }
    CHECK(evaluated > 0);  // rejections were scored (and refused)
  }
}

TEST_CASE("arc-prune-only is lossless: greedy identity with AR, pruned nodes counted", "[spec][arc]") {
  auto cfg = test::tiny_config("llama");
  cfg.eos_token_ids = {};
  auto target = test::load_model(test::write_model("arc-prune-target", cfg, DType::BF16, 21));
  std::shared_ptr<const LlamaModel> draft = test::load_model(test::write_model("arc-prune-draft", cfg, DType::BF16, 99));
  MethodOptions options = tree_options();
  options.arc_prune.epsilon = 0.3;  // prune hard so that steps do lose nodes
  GenerateOptions generate;
  generate.max_new_tokens = 40;
  const std::vector<int32_t> prompt{3, 1, 4, 1, 5, 9, 2, 6};
  Policy policy = make_policy("arc-prune-only", MethodContext{*target, draft, generate.sampling, options, nullptr});
  CHECK(policy.lossless);
  const SpeculativeOutput out = decode_with(*target, policy, prompt, generate);
  CHECK(out.tokens == generate_autoregressive(*target, prompt, generate).tokens);
  int64_t pruned = 0;
  for (const StepTrace& s : out.steps) {
    pruned += s.pruned;
    CHECK(s.lossless);
    REQUIRE(s.detail.pruning);
    CHECK(s.detail.pruning->drafted == s.draft_size + s.pruned);
    const double h = s.detail.pruning->root_entropy_normalized;
    CHECK((h >= 0.0 && h <= 1.0));
  }
  CHECK(pruned > 0);
}

TEST_CASE("arc at T=1 relaxes rejected tokens with permissive constants and reports them", "[spec][arc]") {
  auto cfg = test::tiny_config("llama");
  cfg.eos_token_ids = {};
  auto target = test::load_model(test::write_model("arc-relax-target", cfg, DType::BF16, 21));
  std::shared_ptr<const LlamaModel> draft = test::load_model(test::write_model("arc-relax-draft", cfg, DType::BF16, 99));
  const Artifact artifact = arc_artifact(target->config(), 1.0, 1e-4, 1e-4, 1.0);
  MethodOptions options = tree_options();
  GenerateOptions generate;
  generate.max_new_tokens = 48;
  generate.sampling.temperature = 1.0;
  generate.sampling.seed = 5;
  const std::vector<int32_t> prompt{3, 1, 4, 1, 5, 9, 2, 6};
  Policy tree = make_policy("sd-tree", MethodContext{*target, draft, generate.sampling, options, nullptr});
  Policy arc = make_policy("arc", MethodContext{*target, draft, generate.sampling, options, &artifact});
  CHECK_FALSE(arc.lossless);
  const SpeculativeOutput a = decode_with(*target, tree, prompt, generate);
  const SpeculativeOutput b = decode_with(*target, arc, prompt, generate);
  int64_t relaxed = 0, accepted_tree = 0, accepted_arc = 0;
  for (const StepTrace& s : a.steps) accepted_tree += s.accepted_length;
  for (const StepTrace& s : b.steps) {
    accepted_arc += s.accepted_length;
    relaxed += s.relaxed;
    if (s.relaxed == 0) continue;
    CHECK(s.accepted_verdicts.find('X') != std::string::npos);
    const nlohmann::json scores = nlohmann::json::parse(s.decision_scores);
    CHECK(static_cast<int32_t>(scores.size()) == s.relaxed);
    for (const auto& lts : scores) CHECK(lts.get<double>() >= 0.3);
    const auto* arc = std::get_if<ArcAcceptance>(&s.detail.acceptance);
    REQUIRE(arc);
    CHECK(arc->lts.size() >= 1);
  }
  CHECK(relaxed > 0);
  // Steps per token: relaxing only adds accepted tokens per step.
  CHECK(static_cast<double>(accepted_arc) / b.steps.size() > static_cast<double>(accepted_tree) / a.steps.size());
}

TEST_CASE("arc refuses an artifact calibrated for other sampling settings, naming it and both settings", "[spec][arc]") {
  auto cfg = test::tiny_config("llama");
  auto target = test::load_model(test::write_model("arc-refuse-target", cfg));
  std::shared_ptr<const LlamaModel> draft = target;
  const Artifact artifact = arc_artifact(target->config(), 1.0, 1e-4, 1e-4, 1.0);
  const MethodOptions options = tree_options();
  SamplingParams other;
  other.temperature = 0.6;
  for (const char* method : {"arc", "arc-lts-only"}) {
    CHECK_THROWS_WITH(make_policy(method, MethodContext{*target, draft, other, options, &artifact, "pairs/demo"}),
                      "pairs/demo: its arc constants were calibrated for temperature 1, top-k 0, top-p 1, this run samples with "
                      "temperature 0.6, top-k 0, top-p 1 (calibrate arc at these settings)");
    CHECK_THROWS_WITH(make_policy(method, MethodContext{*target, draft, other, options, nullptr}),
                      std::string("method ") + method + ": needs a calibration artifact (made by specd calibrate arc)");
  }
  // Pruning alone needs no calibration.
  CHECK_NOTHROW(make_policy("arc-prune-only", MethodContext{*target, draft, other, options, nullptr}));
}
