#include "methods/method_registry.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "decode/forward_cost.h"
#include "model/llama_model.h"
#include "speculative/adapld_drafter.h"
#include "speculative/arc_acceptor.h"
#include "speculative/calibrated_parts.h"
#include "speculative/method_params.h"
#include "speculative/model_chain_drafter.h"
#include "speculative/respec_acceptor.h"
#include "speculative/respec_drafter.h"
#include "speculative/sampling_acceptor.h"
#include "util/error.h"

namespace specd {
namespace {

// Each value's range is checked by make_policy (the parameter table); this is how they relate.
void check_tree(const std::string& method, const TreeDraftOptions& tree) {
  if (tree.nodes < tree.depth)
    input_error("method " + method, "a tree budget of " + std::to_string(tree.nodes) + " nodes cannot reach depth " +
                                        std::to_string(tree.depth));
}

void build_sd(Policy& policy, const MethodContext& c) {
  policy.drafter = std::make_unique<ModelChainDrafter>(c.draft, c.options.gamma, c.sampling);
  policy.acceptor = std::make_unique<SamplingAcceptor>();
  policy.max_nodes = policy.max_depth = c.options.gamma;
}

void build_sd_tree(Policy& policy, const MethodContext& c) {
  check_tree(policy.method, c.options.tree);
  policy.drafter = std::make_unique<ModelTreeDrafter>(c.draft, c.options.tree, c.sampling);
  policy.acceptor = std::make_unique<SamplingAcceptor>();
  policy.max_nodes = c.options.tree.nodes;
  policy.max_depth = c.options.tree.depth;
}

void build_pld(Policy& policy, const MethodContext& c) {
  validate(c.options.pld);
  policy.drafter = std::make_unique<PldDrafter>(c.options.pld);
  policy.acceptor = std::make_unique<SamplingAcceptor>();
  policy.max_nodes = policy.max_depth = c.options.pld.num_pred_tokens;
}

// The draft model's tree that retrieval drafters (SAM, ReSpec) fall back to, owned by the policy;
// null without a draft model.
Drafter* fallback_tree(Policy& policy, const MethodContext& c) {
  if (!c.draft) return nullptr;
  check_tree(policy.method, c.options.tree);
  auto tree = std::make_shared<ModelTreeDrafter>(c.draft, c.options.tree, c.sampling);
  policy.owned.push_back(tree);
  return tree.get();
}

void build_sam(Policy& policy, const MethodContext& c, const SharedParts& shared) {
  validate(c.options.sam);
  Drafter* fallback = fallback_tree(policy, c);
  std::shared_ptr<const StaticSam> corpus = shared.sam_corpus ? shared.sam_corpus : sam_corpus_of(c.artifact, c.target.config());
  if (corpus) policy.owned.push_back(corpus);
  policy.drafter = std::make_unique<SamDrafter>(c.options.sam, fallback, corpus.get());
  policy.acceptor = std::make_unique<SamplingAcceptor>();
  policy.max_nodes = std::max(c.options.sam.n_predicts - 1, c.draft ? c.options.tree.nodes : 0);
  policy.max_depth = std::max(c.options.sam.n_predicts - 1, c.draft ? c.options.tree.depth : 0);
}

// CSD and its ablations: the draft chain of sd, verified by the CSD acceptor with the artifact's
// correction memory.
void build_csd(Policy& policy, const MethodContext& c, const SharedParts& shared, bool use_memory, bool use_gate) {
  CsdOptions options = c.options.csd;
  options.use_memory = use_memory;
  options.use_gate = use_gate;
  validate(options);
  policy.memory = shared.memory ? shared.memory : csd_memory_of(*c.artifact);
  policy.drafter = std::make_unique<ModelChainDrafter>(c.draft, c.options.gamma, c.sampling);
  policy.acceptor = std::make_unique<CsdAcceptor>(policy.memory, options);
  policy.max_nodes = policy.max_depth = c.options.gamma;
}

// ARC-Decode and its ablations: sd-tree's drafter, the entropy-guided pruner and/or the LTS
// acceptor (lossless sampling verification where either is off).
void build_arc(Policy& policy, const MethodContext& c, bool prune, bool lts) {
  build_sd_tree(policy, c);
  if (prune) {
    validate(c.options.arc_prune);
    policy.pruner = std::make_unique<ArcPruner>(c.options.arc_prune);
  }
  if (lts) {
    const int64_t hidden = c.target.config().hidden_size;
    ArcLtsConstants constants = arc_constants_of(*c.artifact, c.sampling, hidden, c.artifact_name);
    const LlamaModel* target = &c.target;  // outlives the policy (decode_with takes it again)
    EmbeddingLookup embeddings{hidden, [target](int32_t token, float* out) { target->embedding_row(token, out); }};
    policy.acceptor = std::make_unique<ArcAcceptor>(std::move(constants), std::move(embeddings), c.options.arc_theta);
  }
}

// ReSpec and its ablations: entropy-triggered retrieval of EMA-ranked continuations (a trie of
// Retrieval nodes) verified relaxed at T = 0, the draft model's tree as fallback verified
// losslessly. trigger/ema/relaxed off: the ablations.
void build_respec(Policy& policy, const MethodContext& c, bool trigger, bool ema, bool relaxed) {
  RespecOptions options = c.options.respec;
  options.use_trigger = options.use_trigger && trigger;
  options.use_ema = options.use_ema && ema;
  options.relaxed = options.relaxed && relaxed;
  validate(options);
  if (options.relaxed && options.phi > 0 && c.sampling.temperature > 0)
    input_error("method " + policy.method,
                "relaxed verification is defined for greedy decoding (T=0); use respec-lossless or --respec-phi 0");
  Drafter* fallback = fallback_tree(policy, c);
  policy.drafter = std::make_unique<RespecDrafter>(options, fallback);
  policy.acceptor = std::make_unique<RespecAcceptor>(options);
  policy.max_nodes = std::max(options.candidates * options.draft_length, c.draft ? c.options.tree.nodes : 0);
  policy.max_depth = std::max(options.draft_length, c.draft ? c.options.tree.depth : 0);
}

// AdaPLD and its ablations: retrieval from prompt + output with the target's own top-K and
// layer-l states (kept by the drafter as the forwards produce them), lossless tree verification.
void build_adapld(Policy& policy, const MethodContext& c, bool semantic, bool branches, bool successors) {
  AdaPldOptions options = c.options.adapld;
  validate(options);
  options.semantic = options.semantic && semantic;
  options.use_branches = options.use_branches && branches;
  options.use_successors = options.use_successors && successors && options.use_branches;
  const int64_t layers = c.target.config().num_hidden_layers;
  if (options.layer > layers)
    input_error("method " + policy.method, "layer " + std::to_string(options.layer) + " is past the target's " +
                                               std::to_string(layers) + " layers");
  const int32_t layer = options.layer < 0 ? static_cast<int32_t>((layers + 1) / 2) : options.layer;
  const LlamaModel* target = &c.target;  // outlives the policy (decode_with takes it again)
  EmbeddingLookup embeddings;
  if (options.semantic)
    embeddings = {c.target.config().hidden_size, [target](int32_t token, float* out) { target->embedding_row(token, out); }};
  LogitsLookup logits{static_cast<int32_t>(layers), c.target.config().vocab_size, [target](const float* hidden, float* out) {
                        const FloatRows row = target->logits_from_hidden(hidden, 1);
                        std::copy(row.values.begin(), row.values.end(), out);
                      }};
  policy.drafter = std::make_unique<AdaPldDrafter>(options, layer, std::move(embeddings), policy.method, std::move(logits));
  policy.acceptor = std::make_unique<SamplingAcceptor>();
  const int32_t k = options.use_branches ? options.branches : 0;
  policy.max_nodes = options.max_copy + k * (options.use_successors ? 2 : 1);
  policy.max_depth = std::max(options.max_copy, options.use_successors && k > 0 ? 2 : 1);
}

// How each method is built, by name; the catalog (method_catalog.cpp) holds what it is.
using Build = std::function<void(Policy&, const MethodContext&, const SharedParts&)>;
const std::map<std::string, Build>& builders() {
  static const std::map<std::string, Build> table{
      {"sd", [](Policy& p, const MethodContext& c, const SharedParts&) { build_sd(p, c); }},
      {"sd-tree", [](Policy& p, const MethodContext& c, const SharedParts&) { build_sd_tree(p, c); }},
      {"pld", [](Policy& p, const MethodContext& c, const SharedParts&) { build_pld(p, c); }},
      {"sam", build_sam},
      {"csd", [](Policy& p, const MethodContext& c, const SharedParts& s) { build_csd(p, c, s, true, true); }},
      {"csd-ocm-only", [](Policy& p, const MethodContext& c, const SharedParts& s) { build_csd(p, c, s, true, false); }},
      {"csd-scg-only", [](Policy& p, const MethodContext& c, const SharedParts& s) { build_csd(p, c, s, false, true); }},
      {"arc", [](Policy& p, const MethodContext& c, const SharedParts& s) { build_arc(p, c, true, true); }},
      {"arc-prune-only", [](Policy& p, const MethodContext& c, const SharedParts& s) { build_arc(p, c, true, false); }},
      {"arc-lts-only", [](Policy& p, const MethodContext& c, const SharedParts& s) { build_arc(p, c, false, true); }},
      {"respec", [](Policy& p, const MethodContext& c, const SharedParts& s) { build_respec(p, c, true, true, true); }},
      {"respec-no-trigger", [](Policy& p, const MethodContext& c, const SharedParts& s) { build_respec(p, c, false, true, true); }},
      {"respec-no-ema", [](Policy& p, const MethodContext& c, const SharedParts& s) { build_respec(p, c, true, false, true); }},
      {"respec-lossless", [](Policy& p, const MethodContext& c, const SharedParts& s) { build_respec(p, c, true, true, false); }},
      {"adapld", [](Policy& p, const MethodContext& c, const SharedParts& s) { build_adapld(p, c, true, true, true); }},
      {"adapld-lexical-only", [](Policy& p, const MethodContext& c, const SharedParts& s) { build_adapld(p, c, false, true, true); }},
      {"adapld-no-branches", [](Policy& p, const MethodContext& c, const SharedParts& s) { build_adapld(p, c, true, false, false); }},
      {"adapld-no-successors", [](Policy& p, const MethodContext& c, const SharedParts& s) { build_adapld(p, c, true, true, false); }},
  };
  return table;
}

}  // namespace

Policy make_policy(const std::string& method, const MethodContext& c, const SharedParts& shared) {
  const MethodInfo& info = find_method(method);
  if (info.draft == DraftModelUse::Required && !c.draft) input_error("method " + method, "needs a draft model");
  if (c.draft && c.draft->config().vocab_size != c.target.config().vocab_size)
    input_error("draft model", "its vocabulary (" + std::to_string(c.draft->config().vocab_size) + ") differs from the target's (" +
                                   std::to_string(c.target.config().vocab_size) + ")");
  if (!info.calibration.empty()) require_calibration(c.artifact, info.calibration, method);
  check_params(c.options, method_family(method), "method " + method);

  Policy policy;
  policy.method = method;
  policy.lossless = info.lossless;
  if (info.autoregressive) {
    policy.autoregressive = true;
    policy.drafter = no_drafter();
    policy.acceptor = next_token_acceptor();
    return policy;
  }
  // Only the optional fallback uses a draft the method does not need.
  MethodContext context = c;
  if (info.draft == DraftModelUse::None) context.draft = nullptr;
  builders().at(method)(policy, context, shared);
  if (c.options.adaptive_budget) {
    DraftBudgetOptions budget = c.options.budget;
    // Retrieval drafts cost next to nothing; a draft model's forwards are charged per node, and
    // its catch-ups with the text by the rows they run.
    if (context.draft) {
      budget.draft_cost = c.options.draft_cost ? *c.options.draft_cost : measure_cost_curve(*context.draft, 32);
      budget.draft_ms_per_node = budget.draft_cost.at(1);
    }
    CostCurve cost = c.options.target_cost ? *c.options.target_cost : measure_cost_curve(c.target, policy.max_nodes + 1);
    policy.budget = std::make_unique<DraftBudget>(std::move(cost), budget);
  }
  return policy;
}

SpeculativeOptions loop_options(const Policy& policy, const GenerateOptions& options) {
  SpeculativeOptions spec;
  spec.generate = options;
  spec.max_draft_nodes = policy.max_nodes;
  spec.max_draft_depth = policy.max_depth;
  spec.budget = policy.budget.get();
  spec.pruner = policy.pruner.get();
  spec.root_entropy = policy.root_entropy;
  spec.record_steps = !policy.autoregressive;
  return spec;
}

SpeculativeOutput decode_with(const LlamaModel& target, Policy& policy, const std::vector<int32_t>& prompt,
                              const GenerateOptions& options, decltype(SpeculativeOptions::on_step) on_step) {
  SpeculativeOptions spec = loop_options(policy, options);
  spec.on_step = std::move(on_step);
  return generate_speculative(target, *policy.drafter, *policy.acceptor, prompt, spec);
}

}  // namespace specd
