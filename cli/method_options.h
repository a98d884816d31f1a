#pragma once
// The options that define a decoding method (draft lengths, trees, PLD, SAM, CSD, the draft
// budget, the artifact), shared by specd generate --method and specd bench --methods.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "options.h"
#include "speculative/method_params.h"
#include "methods/method_registry.h"

namespace specd {
struct Artifact;
class LlamaModel;
}

namespace specd::cli {

struct MethodArgs {
  MethodOptions options;
  std::string draft_dir;
  std::string artifact_dir;  // "" for none
  // Every method parameter's flag (method_params()) as typed, or its default's text.
  std::map<std::string, std::string> values;
  // Flags of method parameters given on the command line (finish_method_options): they win over
  // an artifact's swept thresholds.
  std::set<std::string> explicit_flags;
};

// A method as --methods names it: "sd", or a variant with values of its own, "sd:gamma=8" or
// "sd-tree:tree_depth=8:draft_budget=fixed" (the parameter names `specd methods` lists), which win
// over the flags and the artifact: one bench then measures two settings of a method side by side,
// paired by prompt.
struct MethodVariant {
  std::string label;   // as typed: the name the tables, the JSON and the traces use
  std::string method;  // the registry's name
  std::vector<std::pair<const MethodParam*, double>> values;
};
// InputError naming `flag` for an unknown method, a parameter its family does not use or a value
// out of range.
MethodVariant method_variant(const std::string& text, const std::string& flag);

// Adds --draft, --artifact and one flag per method parameter (method_params()).
void add_method_options(po::options_description& desc, MethodArgs& args);
// Parses and range-checks every parameter's flag (InputError naming it), then checks what relates
// two of them: --pld-max-ngram at least --pld-min-ngram, and a tree's rows fed to the draft model,
// --tree-top-k x (--tree-depth - 1), at most DraftModelRunner::kTreeRows.
void finish_method_options(MethodArgs& args, const po::variables_map& vm);
// The options `method` runs with: the command line's, with its family's swept thresholds from
// the artifact (when given) where no flag was typed; `settings` (when not null) gets every value
// and where it came from, for the stats line.
MethodOptions deployed_options(const MethodArgs& args, const std::string& method, const Artifact* artifact,
                               std::vector<ParamSetting>* settings = nullptr);
// The same for a variant: its own values win over the flags and the artifact (their source
// "--methods LABEL"), and are checked as the flags are.
MethodOptions deployed_options(const MethodArgs& args, const MethodVariant& variant, const Artifact* artifact,
                               std::vector<ParamSetting>* settings = nullptr);
// Once the target is loaded: the tree's top-k at most its vocabulary (InputError naming `where`).
void check_tree_vocabulary(const MethodOptions& options, int64_t vocab, const std::string& where = "--tree-top-k");
// Before decoding: the KV memory one request of a prompt and up to `max_new_tokens` new tokens
// may take under the built policies (the target's cache with room for a step's draft, and the
// cache of every policy's draft model) against the limit, InputError naming --max-memory otherwise.
void check_request_memory(const LlamaModel& target, const LlamaModel* draft, const std::vector<const Policy*>& policies,
                          int64_t prompt_tokens, int64_t max_new_tokens);
// "method: summary" lines of every registered method, for --help texts.
std::string methods_help();
// The registry's entry for a method named on the command line: InputError naming `flag` when
// there is none.
const MethodInfo& method_option(const std::string& name, const std::string& flag);
// True when one of `methods` runs a draft model (required, or SAM's optional fallback).
bool uses_draft_model(const std::vector<std::string>& methods);
// Reads --artifact (null when not given) and binds it to the target and, when one is loaded, the
// draft: InputError naming the artifact and the first difference otherwise.
std::shared_ptr<const Artifact> load_artifact(const MethodArgs& args, const std::string& target_dir, bool draft_loaded);

}  // namespace specd::cli
