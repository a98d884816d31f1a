#include "method_options.h"

#include "artifact/artifact_reader.h"
#include "util/error.h"

namespace specd::cli {

void add_method_options(po::options_description& desc, MethodArgs& args) {
  MethodOptions& m = args.options;
  desc.add_options()
      ("draft", po::value(&args.draft_dir)->default_value(data_dir() + "/models/demo-draft"), "draft model directory (sd, sd-tree, csd, sam's fallback)")
      ("artifact", po::value(&args.artifact_dir),
       "the pair's calibration artifact (specd calibrate): CSD's correction memory and thresholds, SAM's static corpus")
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
      ("draft-budget", po::value(&args.budget_mode)->default_value("auto"),
       "auto: each step drafts as many nodes as pay for their verification (measured cost curve, "
       "online acceptance); fixed: always the options' full length");
}

void finish_method_options(MethodArgs& args, const po::variables_map& vm) {
  if (args.budget_mode != "auto" && args.budget_mode != "fixed")
    input_error("--draft-budget", "must be auto or fixed, not '" + args.budget_mode + "'");
  args.options.adaptive_budget = args.budget_mode == "auto";
  if (args.pld_match != "earliest" && args.pld_match != "latest")
    input_error("--pld-match", "must be earliest or latest, not '" + args.pld_match + "'");
  args.options.pld.match = args.pld_match == "latest" ? PldMatch::Latest : PldMatch::Earliest;
  args.options.csd_lambda_set = vm.count("csd-lambda") > 0;
  args.options.csd_tau_set = vm.count("csd-tau") > 0;
  if (args.options.csd_lambda_set && args.options.csd.lambda < 1) input_error("--csd-lambda", "must be at least 1");
  if (args.options.csd_tau_set && !(args.options.csd.tau > 0 && args.options.csd.tau <= 1)) input_error("--csd-tau", "must be in (0, 1]");
  validate(args.options.sam);
  validate(args.options.pld);
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
  // What deployment needs: the manifest, CSD's pairs and thresholds, SAM's documents (not the
  // calibration samples).
  ArtifactReader reader(args.artifact_dir);
  reader.check_pair(target_dir, draft_loaded && reader.manifest().draft ? args.draft_dir : "");
  auto artifact = std::make_shared<Artifact>(reader.manifest());
  if (artifact->csd) artifact->csd->pairs = reader.csd_pairs();
  if (artifact->sam_corpus) artifact->sam_corpus->documents = reader.sam_corpus_documents();
  artifact->thresholds = reader.thresholds();
  return artifact;
}

}  // namespace specd::cli
