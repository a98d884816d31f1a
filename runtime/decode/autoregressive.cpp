#include "decode/autoregressive.h"

#include <algorithm>

#include "decode/speculative.h"
#include "model/llama_model.h"
#include "util/error.h"

namespace specd {
namespace {

// Autoregressive decoding is the speculative loop with nothing drafted: each step is one target
// forward of the last token and the token sampled from its logits, as Sampler::sample draws it.
class NoDrafter : public Drafter {
 public:
  std::string name() const override { return "none"; }
  void begin(const std::vector<int32_t>&, uint64_t) override {}
  DraftTree propose(const DraftRequest& request) override { return DraftTree(request.root_token); }
  void observe(const StepFeedback&) override {}
};

class NextTokenAcceptor : public Acceptor {
 public:
  std::string name() const override { return "next-token"; }
  AcceptResult accept(const DraftTree&, const float* logits, int64_t vocab, Sampler& sampler) override {
    AcceptResult result;
    result.path = {0};
    result.verdicts = {NodeVerdict::Accepted};
    result.next_token = sampler.sample(logits, vocab);
    return result;
  }
};

}  // namespace

std::unique_ptr<Drafter> no_drafter() { return std::make_unique<NoDrafter>(); }
std::unique_ptr<Acceptor> next_token_acceptor() { return std::make_unique<NextTokenAcceptor>(); }

int64_t new_token_budget(const LlamaModel& model, const std::vector<int32_t>& prompt, int64_t max_new_tokens) {
  const int64_t context = model.context_length();
  if (prompt.empty()) input_error("prompt", "is empty");
  if (static_cast<int64_t>(prompt.size()) >= context)
    input_error("prompt", std::to_string(prompt.size()) + " tokens do not fit the model's context of " +
                              std::to_string(context) + " tokens (one position is needed for a new token)");
  for (int32_t t : prompt)
    if (t < 0 || t >= model.config().vocab_size) input_error("prompt", "token id " + std::to_string(t) + " is outside the vocabulary");
  return std::min<int64_t>(max_new_tokens, context - static_cast<int64_t>(prompt.size()));
}

GenerateOutput generate_autoregressive(const LlamaModel& model, const std::vector<int32_t>& prompt,
                                       const GenerateOptions& options) {
  NoDrafter drafter;
  NextTokenAcceptor acceptor;
  SpeculativeOptions plain;
  plain.generate = options;
  plain.max_draft_nodes = 0;
  plain.max_draft_depth = 0;
  plain.record_steps = false;
  SpeculativeOutput out = generate_speculative(model, drafter, acceptor, prompt, plain);
  return GenerateOutput{std::move(out.tokens), out.stats};
}

}  // namespace specd
