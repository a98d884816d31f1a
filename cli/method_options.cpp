#include "method_options.h"

#include <algorithm>
#include <sstream>

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

namespace {

// Each value is in its range; this checks how values relate. InputError naming the flag, or the
// variant's --methods entry when `variant` is not empty.
void check_relations(const MethodOptions& m, const std::string& variant) {
  const auto where = [&](const char* flag) { return variant.empty() ? std::string(flag) : "--methods " + variant; };
  if (m.pld.max_ngram < m.pld.min_ngram) input_error(where("--pld-max-ngram"), "pld max_ngram must be at least min_ngram");
  // The tree drafter feeds the draft model top_k nodes per level below the first.
  const int64_t most = DraftModelRunner::kTreeRows;
  const int64_t fed = static_cast<int64_t>(m.tree.top_k) * (m.tree.depth - 1);
  if (fed > most)
    input_error(where("--tree-top-k"), "tree top-k " + std::to_string(m.tree.top_k) + " with depth " + std::to_string(m.tree.depth) +
                                           " feeds " + std::to_string(fed) + " tree rows to the draft model; the most a step may draft is " +
                                           std::to_string(most) + " (lower the top-k or the depth)");
}

}  // namespace

void finish_method_options(MethodArgs& args, const po::variables_map& vm) {
  for (const MethodParam& p : method_params()) {
    if (vm.count(p.flag) && !vm[p.flag].defaulted()) args.explicit_flags.insert(p.flag);
    p.set(args.options, parse_param_value(p, args.values.at(p.flag), "--" + p.flag));
  }
  check_relations(args.options, "");
}

MethodOptions deployed_options(const MethodArgs& args, const std::string& method, const Artifact* artifact,
                               std::vector<ParamSetting>* settings) {
  MethodOptions options = args.options;
  std::vector<ParamSetting> used = deploy_params(options, method, artifact, args.explicit_flags);
  if (settings) *settings = std::move(used);
  return options;
}

MethodOptions deployed_options(const MethodArgs& args, const MethodVariant& variant, const Artifact* artifact,
                               std::vector<ParamSetting>* settings) {
  if (variant.values.empty()) return deployed_options(args, variant.method, artifact, settings);
  MethodArgs own = args;
  for (const auto& [param, value] : variant.values) {
    param->set(own.options, value);
    own.explicit_flags.insert(param->flag);  // typed, so the artifact's threshold does not replace it
  }
  check_relations(own.options, variant.label);
  std::vector<ParamSetting> used;
  MethodOptions options = deployed_options(own, variant.method, artifact, &used);
  for (ParamSetting& s : used)
    for (const auto& value : variant.values)
      if (value.first->name == s.name) s.source = "--methods " + variant.label;
  if (settings) *settings = std::move(used);
  return options;
}

MethodVariant method_variant(const std::string& text, const std::string& flag) {
  MethodVariant variant;
  variant.label = text;
  variant.method = method_option(label_method(text), flag).name;
  std::stringstream in(text.substr(std::min(text.size(), variant.method.size() + 1)));
  std::string part;
  const std::string family = method_family(variant.method);
  const std::string where = flag + " " + text;
  while (std::getline(in, part, ':')) {
    const size_t eq = part.find('=');
    if (eq == std::string::npos || eq == 0) input_error(where, "'" + part + "' is not NAME=VALUE");
    const std::string name = part.substr(0, eq);
    const MethodParam* param = find_param(family, name);
    if (!param) {
      std::string known;
      for (const MethodParam* p : params_of(family)) known += (known.empty() ? "" : ", ") + p->name;
      input_error(where, variant.method + " has no parameter '" + name + "' (" + (known.empty() ? "it has none" : "its parameters: " + known) + ")");
    }
    for (const auto& value : variant.values)
      if (value.first == param) input_error(where, name + " is given twice");
    variant.values.emplace_back(param, parse_param_value(*param, part.substr(eq + 1), where));
  }
  if (text.back() == ':') input_error(where, "ends with ':' (a variant is METHOD:NAME=VALUE[:NAME=VALUE...])");
  return variant;
}

void check_tree_vocabulary(const MethodOptions& options, int64_t vocab, const std::string& where) {
  if (options.tree.top_k > vocab)
    input_error(where, "tree top-k " + std::to_string(options.tree.top_k) + " is more than the vocabulary of " + std::to_string(vocab) + " tokens");
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
