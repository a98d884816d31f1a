#include "decode/methods.h"

#include <algorithm>

#include "decode/forward_cost.h"
#include "decode/model_chain_drafter.h"
#include "model/llama_model.h"
#include "spec/greedy_acceptor.h"
#include "spec/sampling_acceptor.h"
#include "util/error.h"

namespace specd {

SpeculativeOutput decode_with(const LlamaModel& target, Policy& policy, const std::vector<int32_t>& prompt,
                              const GenerateOptions& options) {
  if (policy.autoregressive) throw std::logic_error("decode_with: 'ar' has no drafter");
  SpeculativeOptions spec;
  spec.generate = options;
  spec.max_draft_nodes = policy.max_nodes;
  spec.max_draft_depth = policy.max_depth;
  spec.budget = policy.budget.get();
  spec.root_entropy = policy.root_entropy;
  return generate_speculative(target, *policy.drafter, *policy.acceptor, prompt, spec);
}

const std::vector<std::string>& method_names() {
  static const std::vector<std::string> names{"ar", "sd", "sd-tree", "pld", "sam"};
  return names;
}

bool method_needs_draft(const std::string& method) { return method == "sd" || method == "sd-tree"; }

Policy make_method(const std::string& method, const LlamaModel& target, std::shared_ptr<const LlamaModel> draft,
                   const SamplingParams& sampling, const MethodOptions& options) {
  const auto& names = method_names();
  if (std::find(names.begin(), names.end(), method) == names.end())
    input_error("--methods", "unknown method '" + method + "' (known: ar, sd, sd-tree, pld, sam)");
  if (method_needs_draft(method) && !draft) input_error("--methods", "'" + method + "' needs a draft model (--draft DIR)");
  if (draft && draft->config().vocab_size != target.config().vocab_size)
    input_error("--draft", "the draft's vocabulary (" + std::to_string(draft->config().vocab_size) + ") differs from the target's (" +
                               std::to_string(target.config().vocab_size) + ")");
  if (options.gamma < 1) input_error("--gamma", "must be at least 1");
  if (options.tree.top_k < 1 || options.tree.depth < 1) input_error("--tree-top-k/--tree-depth", "must be at least 1");
  if (options.tree.nodes < options.tree.depth)
    input_error("--tree-nodes", "a tree budget of " + std::to_string(options.tree.nodes) + " nodes cannot reach depth " +
                                    std::to_string(options.tree.depth));
  validate(options.pld);
  validate(options.sam);

  Policy policy;
  policy.method = method;
  if (sampling.temperature == 0.0) {
    policy.acceptor = std::make_unique<GreedyAcceptor>();
  } else {
    policy.acceptor = std::make_unique<SamplingAcceptor>();
  }
  if (method == "ar") {
    policy.autoregressive = true;
  } else if (method == "sd") {
    policy.drafter = std::make_unique<ModelChainDrafter>(draft, options.gamma, sampling);
    policy.max_nodes = policy.max_depth = options.gamma;
  } else if (method == "sd-tree") {
    policy.drafter = std::make_unique<ModelTreeDrafter>(draft, options.tree);
    policy.max_nodes = options.tree.nodes;
    policy.max_depth = options.tree.depth;
  } else if (method == "pld") {
    policy.drafter = std::make_unique<PldDrafter>(options.pld);
    policy.max_nodes = policy.max_depth = options.pld.num_pred_tokens;
  } else if (method == "sam") {
    if (draft) policy.fallback = std::make_unique<ModelTreeDrafter>(draft, options.tree);
    policy.drafter = std::make_unique<SamDrafter>(options.sam, policy.fallback.get(), options.sam_corpus.get());
    policy.sam_corpus = options.sam_corpus;
    policy.max_nodes = std::max(options.sam.n_predicts - 1, draft ? options.tree.nodes : 0);
    policy.max_depth = std::max(options.sam.n_predicts - 1, draft ? options.tree.depth : 0);
  }
  if (options.adaptive_budget && !policy.autoregressive) {
    DraftBudgetOptions budget = options.budget;
    // Retrieval drafts cost next to nothing; a draft model's forwards are charged per node.
    const bool model_drafts = method_needs_draft(method) || (method == "sam" && draft);
    if (model_drafts) budget.draft_ms_per_node = options.draft_ms_per_token ? *options.draft_ms_per_token
                                                                             : measure_cost_curve(*draft, 1).at(1);
    CostCurve cost = options.target_cost ? *options.target_cost : measure_cost_curve(target, policy.max_nodes + 1);
    policy.budget = std::make_unique<DraftBudget>(std::move(cost), budget);
  }
  return policy;
}

}  // namespace specd
