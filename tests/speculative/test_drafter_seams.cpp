// The seams the calibrated policies build on, against the full forward: a drafter that asks for
// the target's entropies and a layer's hidden states gets, at the prefill and after every step,
// exactly what one forward over the whole committed sequence gives at those positions; a pruner
// between drafting and verification keeps greedy identity and is counted in the steps.
#include "catch_torch.h"

#include <ATen/ATen.h>

#include "decode/autoregressive.h"
#include "decode/speculative.h"
#include "fixture_models.h"
#include "speculative/greedy_acceptor.h"
#include "speculative/pld_drafter.h"
#include "speculative/step_metrics.h"

using namespace specd;

namespace {

// PLD that asks for entropies and layer-1 hidden states and keeps what it is given, position by
// position (the prompt's, then each step's committed tokens).
class RecordingDrafter : public PldDrafter {
 public:
  explicit RecordingDrafter(int32_t prefill_rows = 0) : prefill_rows_(prefill_rows) {}
  DrafterNeeds needs() const override { return {false, true, {1}, true, prefill_rows_}; }
  // Read by the engine after observe(): the trace's detail gets it as "drafting".
  DraftingDetail step_detail() const override { return {{"rows_seen", entropies.size()}}; }
  void observe_prefill(const TargetOutputs& prefill) override { keep(prefill, static_cast<size_t>(prefill.entropies.size())); }
  void observe(const StepFeedback& feedback) override {
    CHECK(feedback.target.entropies.size() == feedback.committed_now.size());
    keep(feedback.target, feedback.committed_now.size());
    PldDrafter::observe(feedback);
  }
  std::vector<float> entropies, hidden;
  int64_t hidden_size = 0;

 private:
  int32_t prefill_rows_;
  void keep(const TargetOutputs& out, size_t rows) {
    REQUIRE(out.hidden.size() == 1);
    REQUIRE(out.hidden[0].size() == rows * static_cast<size_t>(out.hidden_size));
    hidden_size = out.hidden_size;
    entropies.insert(entropies.end(), out.entropies.begin(), out.entropies.end());
    hidden.insert(hidden.end(), out.hidden[0].begin(), out.hidden[0].end());
  }
};

// Keeps drafted nodes down to depth 2.
class ShallowPruner : public Pruner {
 public:
  std::string name() const override { return "shallow"; }
  DraftTree prune(const DraftTree& tree, const PruneContext&) override {
    std::vector<char> keep(tree.size());
    for (int32_t i = 0; i < tree.size(); ++i) keep[i] = tree.depths[i] <= 2;
    return tree.keep_only(keep);
  }
};

std::vector<int32_t> repetitive_prompt() {
  std::vector<int32_t> prompt;
  for (int r = 0; r < 4; ++r)
    for (int32_t t : {11, 23, 5, 77, 42, 9, 130, 64}) prompt.push_back(t);
  return prompt;
}

}  // namespace

TEST_CASE("a drafter gets the entropies and hidden states it asks for, equal to the full forward's", "[spec][seams]") {
  auto cfg = test::tiny_config("llama");
  cfg.eos_token_ids = {};
  auto target = test::load_model(test::write_model("seams-target", cfg, DType::F32, 21));
  const std::vector<int32_t> prompt = repetitive_prompt();
  // 0: every prompt position; 3: only the last three (ReSpec's trigger), whose logits alone are computed.
  const int32_t prefill_rows = GENERATE(0, 3);
  CAPTURE(prefill_rows);
  SpeculativeOptions options;
  options.generate.max_new_tokens = 40;
  options.max_draft_nodes = options.max_draft_depth = 6;
  RecordingDrafter drafter(prefill_rows);
  GreedyAcceptor acceptor;
  const SpeculativeOutput out = generate_speculative(*target, drafter, acceptor, prompt, options);
  REQUIRE(out.tokens.size() == 40);
  CHECK(out.tokens == generate_autoregressive(*target, prompt, options.generate).tokens);
  int64_t accepted = 0;
  for (const StepTrace& s : out.steps) accepted += s.accepted_length;
  CHECK(accepted > 0);  // multi-token steps happened
  // The drafter's own detail reaches the trace, read after it observed the step.
  const size_t skipped = prefill_rows ? prompt.size() - prefill_rows : 0;
  REQUIRE(!out.steps.empty());
  CHECK(step_detail_json(out.steps.back().detail) ==
        "{\"drafting\":{\"rows_seen\":" + std::to_string(prompt.size() + out.tokens.size() - 1 - skipped) + "}}");

  // Everything committed: the prompt, then every token but the last (the last root is never fed).
  std::vector<int64_t> sequence(prompt.begin(), prompt.end());
  sequence.insert(sequence.end(), out.tokens.begin(), out.tokens.end() - 1);
  REQUIRE(drafter.entropies.size() == sequence.size() - skipped);
  at::InferenceMode guard;
  KvCache cache = target->new_cache();
  ForwardRequest full;
  full.tokens = sequence;
  full.hidden_layers = {1};
  const ForwardResult reference = target->forward(cache, full);
  const at::Tensor logits = test::tensor(reference.logits);
  const at::Tensor hidden = test::tensor(reference.hidden[0]);
  REQUIRE(drafter.hidden_size == hidden.size(1));
  for (size_t p = skipped; p < sequence.size(); ++p) {
    CAPTURE(p);
    const size_t kept = p - skipped;  // the drafter's row of position p
    // The CPU kernels give a token bit-identical logits and states however it was batched, so the
    // drafter's (float) entropies and states are those of the full forward exactly.
    CHECK(drafter.entropies[kept] == static_cast<float>(softmax_entropy(logits[p].data_ptr<float>(), logits.size(1))));
    const float* h = hidden[p].data_ptr<float>();
    double worst = 0;
    for (int64_t d = 0; d < drafter.hidden_size; ++d)
      worst = std::max(worst, std::abs(static_cast<double>(drafter.hidden[kept * drafter.hidden_size + d] - h[d])));
    CHECK(worst == 0);
  }
}

TEST_CASE("a pruner between drafting and verification keeps greedy identity and is counted", "[spec][seams]") {
  auto cfg = test::tiny_config("llama");
  cfg.eos_token_ids = {};
  auto target = test::load_model(test::write_model("seams-pruned", cfg, DType::BF16, 21));
  const std::vector<int32_t> prompt = repetitive_prompt();
  SpeculativeOptions options;
  options.generate.max_new_tokens = 48;
  options.max_draft_nodes = options.max_draft_depth = 8;
  ShallowPruner pruner;
  options.pruner = &pruner;
  PldDrafter drafter;
  GreedyAcceptor acceptor;
  const SpeculativeOutput out = generate_speculative(*target, drafter, acceptor, prompt, options);
  CHECK(out.tokens == generate_autoregressive(*target, prompt, options.generate).tokens);
  int64_t pruned = 0;
  for (const StepTrace& s : out.steps) {
    pruned += s.pruned;
    CHECK(s.accepted_length <= 2);
  }
  CHECK(pruned > 0);
}
