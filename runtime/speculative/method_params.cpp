#include "speculative/method_params.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "artifact/artifact.h"
#include "util/error.h"

namespace specd {
namespace {

// Entries read and write one field; these keep the table to one line of code per parameter.
template <typename T>
MethodParam param(std::string name, std::string flag, std::vector<std::string> families, std::string help, T MethodOptions::*field,
                  bool table_flag = false) {
  MethodParam p{std::move(name), std::move(flag), std::move(families), std::move(help), std::is_integral<T>::value, {}, table_flag, {}, {}};
  p.get = [field](const MethodOptions& o) { return static_cast<double>(o.*field); };
  p.set = [field](MethodOptions& o, double v) { o.*field = static_cast<T>(v); };
  return p;
}

template <typename S, typename T>
MethodParam nested(std::string name, std::string flag, std::vector<std::string> families, std::string help, S MethodOptions::*group,
                   T S::*field, bool table_flag = false) {
  MethodParam p{std::move(name), std::move(flag), std::move(families), std::move(help), std::is_integral<T>::value, {}, table_flag, {}, {}};
  p.get = [group, field](const MethodOptions& o) { return static_cast<double>(o.*group.*field); };
  p.set = [group, field](MethodOptions& o, double v) { o.*group.*field = static_cast<T>(v); };
  return p;
}

std::vector<MethodParam> make_params() {
  const std::vector<std::string> tree_users{"sd-tree", "sam", "arc", "respec"};
  std::vector<MethodParam> params{
      param("gamma", "gamma", {"sd", "csd"}, "drafted chain length", &MethodOptions::gamma),
      nested("tree_top_k", "tree-top-k", tree_users, "draft tree: children per expanded node", &MethodOptions::tree, &TreeDraftOptions::top_k),
      nested("tree_depth", "tree-depth", tree_users, "draft tree: levels", &MethodOptions::tree, &TreeDraftOptions::depth),
      nested("tree_nodes", "tree-nodes", tree_users, "draft tree: drafted nodes per step", &MethodOptions::tree, &TreeDraftOptions::nodes),
      nested("max_ngram", "pld-max-ngram", {"pld"}, "longest n-gram matched", &MethodOptions::pld, &PldOptions::max_ngram),
      nested("min_ngram", "pld-min-ngram", {"pld"}, "shortest n-gram matched", &MethodOptions::pld, &PldOptions::min_ngram),
      nested("tokens", "pld-tokens", {"pld"}, "tokens copied", &MethodOptions::pld, &PldOptions::num_pred_tokens),
      nested("threshold", "sam-threshold", {"sam"}, "shortest match used", &MethodOptions::sam, &SamOptions::len_threshold),
      nested("predicts", "sam-predicts", {"sam"}, "draft length counting the root", &MethodOptions::sam, &SamOptions::n_predicts),
      nested("len_bias", "sam-len-bias", {"sam"}, "static corpus matches count this much shorter", &MethodOptions::sam, &SamOptions::len_bias),
      nested("lambda", "csd-lambda", {"csd"}, "rescue a pair seen at least this often", &MethodOptions::csd, &CsdOptions::lambda),
      nested("tau", "csd-tau", {"csd"}, "rescue when p(draft)/p(target) >= tau", &MethodOptions::csd, &CsdOptions::tau),
      param("theta", "arc-theta", {"arc"}, "relax a rejected token when LTS >= theta", &MethodOptions::arc_theta),
      nested("epsilon", "arc-epsilon", {"arc"}, "per-depth share of the draft's score mass pruning may drop", &MethodOptions::arc_prune,
             &ArcPruneOptions::epsilon),
      nested("lambda", "arc-lambda", {"arc"}, "weight of depth x root entropy in the pruning score", &MethodOptions::arc_prune,
             &ArcPruneOptions::lambda),
      nested("theta_entropy", "respec-theta-entropy", {"respec"}, "retrieve when the key's mean target entropy (nats) is at most this",
             &MethodOptions::respec, &RespecOptions::theta_entropy, true),
      nested("max_key", "respec-max-key", {"respec"}, "l: longest retrieval key tried", &MethodOptions::respec, &RespecOptions::max_key, true),
      nested("lambda_e", "respec-lambda-e", {"respec"}, "key length preference: C_k = H_k + lambda_e / k (nats)", &MethodOptions::respec,
             &RespecOptions::lambda_e, true),
      nested("alpha", "respec-alpha", {"respec"}, "EMA update rate of the match positions' scores", &MethodOptions::respec,
             &RespecOptions::alpha, true),
      nested("theta_score", "respec-theta-score", {"respec"}, "keep match positions whose EMA score is at least this", &MethodOptions::respec,
             &RespecOptions::theta_score, true),
      nested("candidates", "respec-candidates", {"respec"}, "retrieved continuations per step (top by score)", &MethodOptions::respec,
             &RespecOptions::candidates, true),
      nested("draft_length", "respec-draft-length", {"respec"}, "tokens copied per candidate", &MethodOptions::respec,
             &RespecOptions::draft_length, true),
      nested("tau", "respec-tau", {"respec"}, "relaxed verification: log-prob gap to the top-1 token allowed (nats)", &MethodOptions::respec,
             &RespecOptions::tau, true),
      nested("phi", "respec-phi", {"respec"}, "relaxed tries per step (0: lossless)", &MethodOptions::respec, &RespecOptions::phi, true),
      nested("min_matches", "respec-min-matches", {"respec"}, "m: greedy matches that must follow a relaxed token", &MethodOptions::respec,
             &RespecOptions::min_matches, true),
      nested("beta", "respec-beta", {"respec"}, "relaxed verification: the token must be in the target's top-beta", &MethodOptions::respec,
             &RespecOptions::beta, true),
      nested("branches", "adapld-branches", {"adapld"}, "K: branch tokens from the target's top-K at the anchor", &MethodOptions::adapld,
             &AdaPldOptions::branches, true),
      nested("max_copy", "adapld-max-copy", {"adapld"}, "L: main copy path length", &MethodOptions::adapld, &AdaPldOptions::max_copy, true),
      nested("tau_sim", "adapld-tau-sim", {"adapld"}, "semantic fallback: token-embedding cosine at least this", &MethodOptions::adapld,
             &AdaPldOptions::tau_sim, true),
      nested("layer", "adapld-layer", {"adapld"}, "hidden-state reranking layer (0: embeddings, l: after layer l; -1: the middle one)",
             &MethodOptions::adapld, &AdaPldOptions::layer, true),
  };
  // Choices: the value is the index into `choices`.
  MethodParam match{"match", "pld-match", {"pld"}, "which occurrence to copy from", true, {"earliest", "latest"}, false, {}, {}};
  match.get = [](const MethodOptions& o) { return o.pld.match == PldMatch::Latest ? 1.0 : 0.0; };
  match.set = [](MethodOptions& o, double v) { o.pld.match = v >= 0.5 ? PldMatch::Latest : PldMatch::Earliest; };
  params.insert(params.begin() + 7, match);
  MethodParam key_rule{"key_rule", "respec-key-rule", {"respec"},
                       "k*: argmin over every key length (entropy, the paper's), or over the lengths whose key occurred (existing)",
                       true, {"entropy", "existing"}, true, {}, {}};
  key_rule.get = [](const MethodOptions& o) { return o.respec.key_among_existing ? 1.0 : 0.0; };
  key_rule.set = [](MethodOptions& o, double v) { o.respec.key_among_existing = v >= 0.5; };
  params.insert(std::find_if(params.begin(), params.end(), [](const MethodParam& p) { return p.name == "lambda_e"; }) + 1, key_rule);
  MethodParam budget{"draft_budget", "draft-budget", {"*"}, "fixed: the options' full length every step; auto: the cost-aware budget", true,
                     {"fixed", "auto"}, false, {}, {}};
  budget.get = [](const MethodOptions& o) { return o.adaptive_budget ? 1.0 : 0.0; };
  budget.set = [](MethodOptions& o, double v) { o.adaptive_budget = v >= 0.5; };
  params.push_back(budget);
  return params;
}

}  // namespace

bool MethodParam::used_by(const std::string& family) const {
  return std::find(families.begin(), families.end(), family) != families.end() ||
         (family != "ar" && std::find(families.begin(), families.end(), "*") != families.end());
}

const std::vector<MethodParam>& method_params() {
  static const std::vector<MethodParam> params = make_params();
  return params;
}

std::vector<const MethodParam*> params_of(const std::string& family) {
  std::vector<const MethodParam*> out;
  for (const MethodParam& p : method_params())
    if (p.used_by(family)) out.push_back(&p);
  return out;
}

const MethodParam* find_param(const std::string& family, const std::string& name) {
  for (const MethodParam* p : params_of(family))
    if (p->name == name) return p;
  return nullptr;
}

std::string method_family(const std::string& method) {
  const MethodInfo& info = find_method(method);
  return info.family.empty() ? info.name : info.family;
}

double parse_param_value(const MethodParam& param, const std::string& text, const std::string& where) {
  if (!param.choices.empty()) {
    for (size_t i = 0; i < param.choices.size(); ++i)
      if (param.choices[i] == text) return static_cast<double>(i);
    std::string known;
    for (const std::string& c : param.choices) known += (known.empty() ? "" : ", ") + c;
    input_error(where, param.name + " must be one of " + known + " (got '" + text + "')");
  }
  double value = 0;
  size_t used = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value)) input_error(where, param.name + ": '" + text + "' is not a number");
  if (param.integer && value != std::floor(value)) input_error(where, param.name + " must be a whole number (got '" + text + "')");
  return value;
}

std::string param_value_text(const MethodParam& param, double value) {
  if (!param.choices.empty()) {
    const size_t i = value >= 0.5 && param.choices.size() > 1 ? static_cast<size_t>(std::lround(value)) : 0;
    return param.choices[std::min(i, param.choices.size() - 1)];
  }
  char text[32];
  if (param.integer) std::snprintf(text, sizeof text, "%lld", static_cast<long long>(std::llround(value)));
  else std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::vector<ParamSetting> deploy_params(MethodOptions& options, const std::string& method, const Artifact* artifact,
                                        const std::set<std::string>& explicit_flags) {
  const std::string family = method_family(method);
  std::vector<ParamSetting> settings;
  for (const MethodParam* p : params_of(family)) {
    ParamSetting s{p->name, p->get(options), "", "default"};
    if (explicit_flags.count(p->flag)) {
      s.source = "option --" + p->flag;
    } else if (artifact) {
      for (const Threshold& t : artifact->thresholds)
        if (t.policy == family && t.name == p->name) {
          p->set(options, t.value);
          s.value = p->get(options);
          s.source = "artifact" + (t.source.empty() ? std::string() : " (" + t.source + ")");
        }
    }
    s.text = param_value_text(*p, s.value);
    settings.push_back(s);
  }
  // CSD's thresholds are resolved here; the acceptor's own artifact lookup must not redo it.
  if (family == "csd") options.csd_lambda_set = options.csd_tau_set = true;
  return settings;
}

std::string settings_text(const std::vector<ParamSetting>& settings) {
  std::string text;
  for (const ParamSetting& s : settings) text += (text.empty() ? "" : ", ") + s.name + "=" + s.text + " (" + s.source + ")";
  return text;
}

}  // namespace specd
