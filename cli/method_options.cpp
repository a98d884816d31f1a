#include "method_options.h"

#include <algorithm>

#include "artifact/artifact_reader.h"
#include "model/kv_memory.h"
#include "model/llama_model.h"
#include "speculative/draft_model_runner.h"
#include "util/error.h"

namespace specd::cli {

void add_method_options(po::options_description& desc, MethodArgs& args) {
  desc.add_options()
      ("draft", po::value(&args.draft_dir), "draft model directory (sd, sd-tree, csd, sam's fallback; default: the demo target's own draft)")
      ("artifact", po::value(&args.artifact_dir),
       "the pair's calibration artifact (specd calibrate): CSD's correction memory, SAM's static corpus, ARC's constants, and "
       "thresholds that replace the defaults below unless the flag is typed");
  // The method parameters, from their one declaration (speculative/method_params.cpp).
  for (const MethodParam& p : method_params()) {
    const std::string help = p.families_text() + ": " + p.help + " (" + p.range_text() + ")";
    desc.add_options()(p.flag.c_str(), po::value(&args.values[p.flag])->default_value(p.default_text()), help.c_str());
  }
}

void finish_method_options(MethodArgs& args, const po::variables_map& vm) {
  for (const MethodParam& p : method_params()) {
    if (vm.count(p.flag) && !vm[p.flag].defaulted()) args.explicit_flags.insert(p.flag);
    p.set(args.options, parse_param_value(p, args.values.at(p.flag), "--" + p.flag));
  }
  // Each value is in its range; what follows is how values relate.
  const MethodOptions& m = args.options;
  if (m.pld.max_ngram < m.pld.min_ngram) input_error("--pld-max-ngram", "must be at least --pld-min-ngram");
  // The tree drafter feeds the draft model top_k nodes per level below the first.
  const int64_t most = DraftModelRunner::kTreeRows;
  if (static_cast<int64_t>(m.tree.top_k) * (m.tree.depth - 1) > most)
    input_error("--tree-top-k", std::to_string(m.tree.top_k) + " with --tree-depth " + std::to_string(m.tree.depth) + " feeds " +
                                    std::to_string(static_cast<int64_t>(m.tree.top_k) * (m.tree.depth - 1)) +
                                    " tree rows to the draft model; the most a step may draft is " + std::to_string(most) +
                                    " (lower --tree-top-k or --tree-depth)");
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
  size_t width = 0;
  for (const MethodInfo& m : method_registry()) width = std::max(width, m.name.size());
  for (const MethodInfo& m : method_registry()) text += "  " + m.name + std::string(width + 2 - m.name.size(), ' ') + m.summary + "\n";
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
  // The artifact as verify reads it, with every check verify makes (an artifact it would refuse
  // is never deployed), under one shared lock; the runtime keeps the constants and the whitening,
  // not ARC's calibration samples.
  ArtifactReader reader(args.artifact_dir);
  reader.check_pair(target_dir, draft_loaded && reader.manifest().draft ? args.draft_dir : "");
  auto artifact = std::make_shared<Artifact>(read_artifact_locked(args.artifact_dir));
  for (const std::string& problem : threshold_problems(*artifact)) throw InputError(args.artifact_dir + "/" + problem);
  if (artifact->arc) {
    artifact->arc->samples.clear();
    artifact->arc->samples.shrink_to_fit();
  }
  return artifact;
}

}  // namespace specd::cli
