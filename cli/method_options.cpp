#include "method_options.h"

#include <algorithm>
#include <cmath>

#include "artifact/artifact_reader.h"
#include "model/kv_memory.h"
#include "model/llama_model.h"
#include "speculative/draft_model_runner.h"
#include "util/error.h"

namespace specd::cli {

void add_method_options(po::options_description& desc, MethodArgs& args) {
  MethodOptions& m = args.options;
  desc.add_options()
      ("draft", po::value(&args.draft_dir)->default_value(data_dir() + "/models/demo-draft"), "draft model directory (sd, sd-tree, csd, sam's fallback)")
      ("artifact", po::value(&args.artifact_dir),
       "the pair's calibration artifact (specd calibrate): CSD's correction memory and thresholds, SAM's static corpus, ARC's constants")
      ("gamma", po::value(&m.gamma)->default_value(4), "sd, csd: drafted chain length")
      ("tree-top-k", po::value(&m.tree.top_k)->default_value(4), "sd-tree: children per expanded node")
      ("tree-depth", po::value(&m.tree.depth)->default_value(5), "sd-tree: levels")
      ("tree-nodes", po::value(&m.tree.nodes)->default_value(16), "sd-tree: drafted nodes per step")
      ("pld-max-ngram", po::value(&m.pld.max_ngram)->default_value(3), "pld: longest n-gram matched")
      ("pld-min-ngram", po::value(&m.pld.min_ngram)->default_value(1), "pld: shortest n-gram matched")
      ("pld-tokens", po::value(&m.pld.num_pred_tokens)->default_value(10), "pld: tokens copied")
      ("pld-match", po::value(&args.pld_match)->default_value("earliest"), "pld: which occurrence to copy from, earliest or latest")
      ("sam-threshold", po::value(&m.sam.len_threshold)->default_value(5), "sam: shortest match used")
      ("sam-predicts", po::value(&m.sam.n_predicts)->default_value(40), "sam: draft length counting the root")
      ("sam-len-bias", po::value(&m.sam.len_bias)->default_value(5), "sam: static corpus matches count this much shorter")
      ("csd-lambda", po::value(&m.csd.lambda), "csd: rescue a pair seen at least this often (default: the artifact's, else 6)")
      ("csd-tau", po::value(&m.csd.tau), "csd: rescue when p(draft)/p(target) >= tau (default: the artifact's, else 0.01)")
      ("arc-theta", po::value(&m.arc_theta)->default_value(0.3, "0.3"), "arc, arc-lts-only: relax a rejected token when LTS >= theta (above 1: never)")
      ("arc-epsilon", po::value(&m.arc_prune.epsilon)->default_value(0.05, "0.05"),
       "arc, arc-prune-only: per-depth share of the draft's score mass pruning may drop, in [0, 1) (0: no pruning)")
      ("arc-lambda", po::value(&m.arc_prune.lambda)->default_value(1.0), "arc, arc-prune-only: weight of depth x root entropy in the pruning score")
      ("draft-budget", po::value(&args.budget_mode)->default_value("auto"),
       "auto: each step drafts as many nodes as pay for their verification (measured cost curve, "
       "online acceptance); fixed: always the options' full length");
  for (const MethodParam& p : method_params()) {
    if (!p.table_flag) continue;
    std::string families;
    for (const std::string& f : p.families) families += (families.empty() ? "" : ", ") + f;
    const std::string value = param_value_text(p, p.get(m));
    desc.add_options()(p.flag.c_str(), po::value(&args.table_values[p.flag])->default_value(value), (families + ": " + p.help).c_str());
  }
}

void finish_method_options(MethodArgs& args, const po::variables_map& vm) {
  if (args.budget_mode != "auto" && args.budget_mode != "fixed")
    input_error("--draft-budget", "must be auto or fixed, not '" + args.budget_mode + "'");
  args.options.adaptive_budget = args.budget_mode == "auto";
  if (args.pld_match != "earliest" && args.pld_match != "latest")
    input_error("--pld-match", "must be earliest or latest, not '" + args.pld_match + "'");
  args.options.pld.match = args.pld_match == "latest" ? PldMatch::Latest : PldMatch::Earliest;
  for (const MethodParam& p : method_params()) {
    if (vm.count(p.flag) && !vm[p.flag].defaulted()) args.explicit_flags.insert(p.flag);
    if (p.table_flag) p.set(args.options, parse_param_value(p, args.table_values.at(p.flag), "--" + p.flag));
  }
  validate(args.options.respec);
  validate(args.options.adapld);
  args.options.csd_lambda_set = vm.count("csd-lambda") > 0;
  args.options.csd_tau_set = vm.count("csd-tau") > 0;
  if (args.options.csd_lambda_set && args.options.csd.lambda < 1) input_error("--csd-lambda", "must be at least 1");
  if (args.options.csd_tau_set) check_fraction_option("--csd-tau", args.options.csd.tau);
  validate(args.options.sam);
  validate(args.options.pld);
  if (!std::isfinite(args.options.arc_theta)) input_error("--arc-theta", "must be a finite number");
  if (!(args.options.arc_prune.epsilon >= 0.0 && args.options.arc_prune.epsilon < 1.0)) input_error("--arc-epsilon", "must be in [0, 1)");
  if (!(args.options.arc_prune.lambda >= 0.0 && std::isfinite(args.options.arc_prune.lambda)))
    input_error("--arc-lambda", "must be a finite number >= 0");
  const MethodOptions& m = args.options;
  const int64_t most = DraftModelRunner::kTreeRows;
  const std::string bound = "the most a step may draft is " + std::to_string(most);
  auto at_most = [&](const char* option, int64_t value) {
    if (value > most) input_error(option, std::to_string(value) + " is too many: " + bound);
  };
  at_most("--gamma", m.gamma);
  at_most("--tree-nodes", m.tree.nodes);
  at_most("--pld-tokens", m.pld.num_pred_tokens);
  at_most("--sam-predicts", m.sam.n_predicts - 1);
  // The tree drafter feeds the draft model top_k nodes per level below the first.
  if (m.tree.top_k >= 1 && m.tree.depth >= 1 && static_cast<int64_t>(m.tree.top_k) * (m.tree.depth - 1) > most)
    input_error("--tree-top-k", std::to_string(m.tree.top_k) + " with --tree-depth " + std::to_string(m.tree.depth) + " feeds " +
                                    std::to_string(static_cast<int64_t>(m.tree.top_k) * (m.tree.depth - 1)) +
                                    " tree rows to the draft model; " + bound + " (lower --tree-top-k or --tree-depth)");
}

MethodOptions deployed_options(const MethodArgs& args, const std::string& method, const Artifact* artifact,
                               std::vector<ParamSetting>* settings) {
  MethodOptions options = args.options;
  std::vector<ParamSetting> used = deploy_params(options, method, artifact, args.explicit_flags);
  if (settings) *settings = std::move(used);
  return options;
}

void check_tree_vocabulary(const MethodArgs& args, int64_t vocab) {
  if (args.options.tree.top_k > vocab)
    input_error("--tree-top-k", std::to_string(args.options.tree.top_k) + " is more than the vocabulary of " + std::to_string(vocab) +
                                    " tokens");
}

void check_request_memory(const LlamaModel& target, const LlamaModel* draft, const std::vector<const Policy*>& policies,
                          int64_t prompt_tokens, int64_t max_new_tokens) {
  const int64_t tokens = std::min(target.context_length(), prompt_tokens + std::min(max_new_tokens, target.context_length()));
  int32_t step_rows = 0;  // a step's draft sits in the target's cache beside the text
  int64_t draft_bytes = 0;
  for (const Policy* policy : policies) {
    if (policy->autoregressive) continue;
    step_rows = std::max(step_rows, policy->max_nodes + 1);
    if (draft && find_method(policy->method).draft != DraftModelUse::None) {
      const int64_t rows = DraftModelRunner::capacity_for(*draft, std::min(tokens, draft->context_length()) + DraftModelRunner::kTreeRows);
      // Growing by doubling holds the old half while the rows are copied.
      const int64_t growing = rows > DraftModelRunner::capacity_for(*draft, 0) ? rows / 2 : 0;
      if (__builtin_add_overflow(draft_bytes, draft->kv_bytes(rows + growing), &draft_bytes)) draft_bytes = INT64_MAX;
    }
  }
  int64_t bytes = target.kv_bytes(tokens + step_rows);
  if (__builtin_add_overflow(bytes, draft_bytes, &bytes)) bytes = INT64_MAX;
  check_kv_plan(bytes, "a request of " + std::to_string(tokens) + " tokens (prompt and new), with the KV caches of the target" +
                           (draft_bytes ? std::string(" and the draft model,") : std::string(",")));
}

std::string methods_help() {
  std::string text;
  for (const MethodInfo& m : method_registry()) text += "  " + m.name + std::string(m.name.size() < 14 ? 14 - m.name.size() : 1, ' ') + m.summary + "\n";
  return text;
}

const MethodInfo& method_option(const std::string& name, const std::string& flag) {
  if (const MethodInfo* m = lookup_method(name)) return *m;
  input_error(flag, "unknown method '" + name + "' (known: " + method_names_text() + ")");
}

bool uses_draft_model(const std::vector<std::string>& methods) {
  for (const auto& m : methods)
    if (find_method(m).draft != DraftModelUse::None) return true;
  return false;
}

std::shared_ptr<const Artifact> load_artifact(const MethodArgs& args, const std::string& target_dir, bool draft_loaded) {
  if (args.artifact_dir.empty()) return nullptr;
  // What deployment needs: the manifest, CSD's pairs and thresholds, SAM's documents, ARC's
  // constants and whitening (not the calibration samples).
  ArtifactReader reader(args.artifact_dir);
  reader.check_pair(target_dir, draft_loaded && reader.manifest().draft ? args.draft_dir : "");
  auto artifact = std::make_shared<Artifact>(reader.manifest());
  if (artifact->csd) artifact->csd->pairs = reader.csd_pairs();
  if (artifact->sam_corpus) artifact->sam_corpus->documents = reader.sam_corpus_documents();
  if (artifact->arc) {
    artifact->arc = reader.arc_calibration();
    artifact->arc->samples.clear();  // the runtime needs the constants and the whitening
    artifact->arc->samples.shrink_to_fit();
  }
  artifact->thresholds = reader.thresholds();
  return artifact;
}

}  // namespace specd::cli
