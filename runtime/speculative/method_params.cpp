#include "speculative/method_params.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <type_traits>

#include "artifact/artifact.h"
#include "speculative/draft_model_runner.h"
#include "stats/arc_gate.h"
#include "util/error.h"

namespace specd {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// A draft adds at most this many rows to the caches in one step.
constexpr double kMostDrafted = static_cast<double>(DraftModelRunner::kTreeRows);

using Range = ParamRange;
Range any() { return {}; }
Range at_least(double low) { return {low, kInf}; }
Range between(double low, double high) { return {low, high}; }
Range unit_open_low() { return {0, 1, true, false}; }   // (0, 1]
Range unit_open_high() { return {0, 1, false, true}; }  // [0, 1)

template <typename T>
MethodParam declared(std::string name, std::string flag, std::vector<std::string> families, std::string help, Range range) {
  MethodParam p;
  p.name = std::move(name);
  p.flag = std::move(flag);
  p.families = std::move(families);
  p.help = std::move(help);
  p.integer = std::is_integral<T>::value;
  p.range = range;
  if (p.integer) {  // the widest doubles that convert back into T (2^63 does not fit an int64_t)
    p.type_low = static_cast<double>(std::numeric_limits<T>::lowest());
    const double high = static_cast<double>(std::numeric_limits<T>::max());
    p.type_high = static_cast<long double>(high) > static_cast<long double>(std::numeric_limits<T>::max()) ? std::nextafter(high, 0.0) : high;
  }
  return p;
}

// Entries read and write one field; these keep the table to one entry per parameter.
template <typename T>
MethodParam param(std::string name, std::string flag, std::vector<std::string> families, std::string help, Range range,
                  T MethodOptions::*field) {
  MethodParam p = declared<T>(std::move(name), std::move(flag), std::move(families), std::move(help), range);
  p.get = [field](const MethodOptions& o) { return static_cast<double>(o.*field); };
  p.set = [field](MethodOptions& o, double v) { o.*field = static_cast<T>(v); };
  return p;
}

template <typename S, typename T>
MethodParam nested(std::string name, std::string flag, std::vector<std::string> families, std::string help, Range range,
                   S MethodOptions::*group, T S::*field) {
  MethodParam p = declared<T>(std::move(name), std::move(flag), std::move(families), std::move(help), range);
  p.get = [group, field](const MethodOptions& o) { return static_cast<double>(o.*group.*field); };
  p.set = [group, field](MethodOptions& o, double v) { o.*group.*field = static_cast<T>(v); };
  return p;
}

// A named choice stored in a field of any type: the value is the index into `choices`.
MethodParam choice(std::string name, std::string flag, std::vector<std::string> families, std::string help,
                   std::vector<std::string> choices, std::function<double(const MethodOptions&)> get,
                   std::function<void(MethodOptions&, double)> set) {
  MethodParam p = declared<int>(std::move(name), std::move(flag), std::move(families), std::move(help),
                                between(0, static_cast<double>(choices.size() - 1)));
  p.choices = std::move(choices);
  p.get = std::move(get);
  p.set = std::move(set);
  return p;
}

std::vector<MethodParam> make_params() {
  const std::vector<std::string> tree_users{"sd-tree", "sam", "arc", "respec"};
  using O = MethodOptions;
  return {
      param("gamma", "gamma", {"sd", "csd"}, "drafted chain length", between(1, kMostDrafted), &O::gamma),
      nested("tree_top_k", "tree-top-k", tree_users, "draft tree: children per expanded node", at_least(1), &O::tree, &TreeDraftOptions::top_k),
      nested("tree_depth", "tree-depth", tree_users, "draft tree: levels", at_least(1), &O::tree, &TreeDraftOptions::depth),
      nested("tree_nodes", "tree-nodes", tree_users, "draft tree: drafted nodes per step", between(1, kMostDrafted), &O::tree,
             &TreeDraftOptions::nodes),
      nested("max_ngram", "pld-max-ngram", {"pld"}, "longest n-gram matched", at_least(1), &O::pld, &PldOptions::max_ngram),
      nested("min_ngram", "pld-min-ngram", {"pld"}, "shortest n-gram matched", at_least(1), &O::pld, &PldOptions::min_ngram),
      nested("tokens", "pld-tokens", {"pld"}, "tokens copied", between(1, kMostDrafted), &O::pld, &PldOptions::num_pred_tokens),
      choice("match", "pld-match", {"pld"}, "which occurrence to copy from", {"earliest", "latest"},
             [](const O& o) { return o.pld.match == PldMatch::Latest ? 1.0 : 0.0; },
             [](O& o, double v) { o.pld.match = v >= 0.5 ? PldMatch::Latest : PldMatch::Earliest; }),
      nested("threshold", "sam-threshold", {"sam"}, "shortest match used", at_least(1), &O::sam, &SamOptions::len_threshold),
      nested("predicts", "sam-predicts", {"sam"}, "draft length counting the root", between(2, kMostDrafted + 1), &O::sam,
             &SamOptions::n_predicts),
      nested("len_bias", "sam-len-bias", {"sam"}, "static corpus matches count this much shorter", at_least(0), &O::sam,
             &SamOptions::len_bias),
      nested("lambda", "csd-lambda", {"csd"}, "rescue a pair seen at least this often", at_least(1), &O::csd, &CsdOptions::lambda),
      nested("tau", "csd-tau", {"csd"}, "rescue when p(draft)/p(target) >= tau", unit_open_low(), &O::csd, &CsdOptions::tau),
      param("theta", "arc-theta", {"arc"}, "relax a rejected token when LTS >= theta (above 1: never)", any(), &O::arc_theta),
      nested("epsilon", "arc-epsilon", {"arc"}, "per-depth share of the draft's score mass pruning may drop (0: no pruning)",
             unit_open_high(), &O::arc_prune, &ArcPruneOptions::epsilon),
      nested("lambda", "arc-lambda", {"arc"}, "weight of depth x root entropy in the pruning score", at_least(0), &O::arc_prune,
             &ArcPruneOptions::lambda),
      nested("theta_entropy", "respec-theta-entropy", {"respec"}, "retrieve when the key's mean target entropy (nats) is at most this",
             at_least(0), &O::respec, &RespecOptions::theta_entropy),
      nested("max_key", "respec-max-key", {"respec"}, "l: longest retrieval key tried", between(1, 16), &O::respec, &RespecOptions::max_key),
      nested("lambda_e", "respec-lambda-e", {"respec"}, "key length preference: C_k = H_k + lambda_e / k (nats)", at_least(0), &O::respec,
             &RespecOptions::lambda_e),
      choice("key_rule", "respec-key-rule", {"respec"},
             "k*: argmin over every key length (entropy, the paper's), or over the lengths whose key occurred (existing)",
             {"entropy", "existing"}, [](const O& o) { return o.respec.key_among_existing ? 1.0 : 0.0; },
             [](O& o, double v) { o.respec.key_among_existing = v >= 0.5; }),
      nested("alpha", "respec-alpha", {"respec"}, "EMA update rate of the match positions' scores", unit_open_low(), &O::respec,
             &RespecOptions::alpha),
      nested("theta_score", "respec-theta-score", {"respec"}, "keep match positions whose EMA score is at least this", between(0, 1),
             &O::respec, &RespecOptions::theta_score),
      nested("candidates", "respec-candidates", {"respec"}, "retrieved continuations per step (top by score)", at_least(1), &O::respec,
             &RespecOptions::candidates),
      nested("draft_length", "respec-draft-length", {"respec"}, "tokens copied per candidate", at_least(1), &O::respec,
             &RespecOptions::draft_length),
      nested("tau", "respec-tau", {"respec"}, "relaxed verification: log-prob gap to the top-1 token allowed (nats)", at_least(0), &O::respec,
             &RespecOptions::tau),
      nested("phi", "respec-phi", {"respec"}, "relaxed tries per step (0: lossless)", at_least(0), &O::respec, &RespecOptions::phi),
      nested("min_matches", "respec-min-matches", {"respec"}, "m: greedy matches that must follow a relaxed token", at_least(0), &O::respec,
             &RespecOptions::min_matches),
      nested("beta", "respec-beta", {"respec"}, "relaxed verification: the token must be in the target's top-beta", at_least(1), &O::respec,
             &RespecOptions::beta),
      nested("branches", "adapld-branches", {"adapld"}, "K: branch tokens from the target's top-K at the anchor", at_least(0), &O::adapld,
             &AdaPldOptions::branches),
      nested("max_copy", "adapld-max-copy", {"adapld"}, "L: main copy path length", at_least(1), &O::adapld, &AdaPldOptions::max_copy),
      nested("tau_sim", "adapld-tau-sim", {"adapld"}, "semantic fallback: token-embedding cosine at least this", between(-1, 1), &O::adapld,
             &AdaPldOptions::tau_sim),
      nested("layer", "adapld-layer", {"adapld"}, "hidden-state reranking layer (0: embeddings, l: after layer l; -1: the middle one)",
             at_least(-1), &O::adapld, &AdaPldOptions::layer),
      choice("draft_budget", "draft-budget", {"*"},
             "auto: each step drafts as many nodes as pay for their verification (measured cost curve, online acceptance); "
             "fixed: always the options' full length",
             {"fixed", "auto"}, [](const O& o) { return o.adaptive_budget ? 1.0 : 0.0; },
             [](O& o, double v) { o.adaptive_budget = v >= 0.5; }),
      choice("draft_history", "draft-history", {"*"},
             "auto budget: on, each proposal class starts a request from what the earlier requests accepted of it; "
             "off, from the prior 0.6 every request",
             {"off", "on"}, [](const O& o) { return o.budget.history ? 1.0 : 0.0; }, [](O& o, double v) { o.budget.history = v >= 0.5; }),
  };
}

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : separator) + item;
  return text;
}

}  // namespace

bool MethodParam::used_by(const std::string& family) const {
  return std::find(families.begin(), families.end(), family) != families.end() ||
         (family != "ar" && std::find(families.begin(), families.end(), "*") != families.end());
}

std::string MethodParam::range_text() const {
  if (!choices.empty()) return joined(choices, ", ");
  if (range.low == -kInf && range.high == kInf) return "any finite number";
  if (range.high == kInf) return (range.low_open ? "> " : ">= ") + number_text(range.low);
  if (range.low == -kInf) return (range.high_open ? "< " : "<= ") + number_text(range.high);
  return (range.low_open ? "(" : "[") + number_text(range.low) + ", " + number_text(range.high) + (range.high_open ? ")" : "]");
}

std::string MethodParam::families_text() const {
  return families == std::vector<std::string>{"*"} ? "every speculative method" : joined(families, ", ");
}

std::string MethodParam::default_text() const { return param_value_text(*this, get(MethodOptions{})); }

namespace {

// The declared range only: a value read from its field fits the field's type by construction
// (and an int64_t's largest values do not survive the trip through double).
void check_declared(const MethodParam& p, double value, const std::string& where) {
  const ParamRange& r = p.range;
  const std::string got = " (got " + number_text(value) + ")";
  if (!p.choices.empty()) {
    if (!(value >= r.low && value <= r.high && value == std::floor(value)))
      input_error(where, p.name + " must be one of " + p.range_text() + got);
    return;
  }
  if (!std::isfinite(value)) input_error(where, p.name + " must be a finite number" + got);
  if (p.integer && value != std::floor(value)) input_error(where, p.name + " must be a whole number" + got);
  const bool below = r.low_open ? !(value > r.low) : !(value >= r.low);
  const bool above = r.high_open ? !(value < r.high) : !(value <= r.high);
  if (below || above) {
    if (r.high == kInf) input_error(where, p.name + " must be " + (r.low_open ? "more than " : "at least ") + number_text(r.low) + got);
    if (r.low == -kInf) input_error(where, p.name + " must be " + (r.high_open ? "less than " : "at most ") + number_text(r.high) + got);
    input_error(where, p.name + " must be in " + p.range_text() + got);
  }
}

}  // namespace

void MethodParam::check(double value, const std::string& where) const {
  check_declared(*this, value, where);
  if (value < type_low || value > type_high)
    input_error(where, name + " does not fit its field: [" + number_text(type_low) + ", " + number_text(type_high) + "]" + " (got " + number_text(value) + ")");
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

const MethodParam* find_flag(const std::string& flag) {
  for (const MethodParam& p : method_params())
    if (p.flag == flag) return &p;
  return nullptr;
}

std::string method_family(const std::string& method) {
  const MethodInfo& info = find_method(method);
  return info.family.empty() ? info.name : info.family;
}

std::string label_method(const std::string& label) { return label.substr(0, label.find(':')); }

double parse_param_value(const MethodParam& param, const std::string& text, const std::string& where) {
  if (!param.choices.empty()) {
    for (size_t i = 0; i < param.choices.size(); ++i)
      if (param.choices[i] == text) return static_cast<double>(i);
    input_error(where, param.name + " must be one of " + param.range_text() + " (got '" + text + "')");
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
  param.check(value, where);
  return value;
}

std::string param_value_text(const MethodParam& param, double value) {
  if (!param.choices.empty()) {
    const size_t i = value >= 0.5 && param.choices.size() > 1 ? static_cast<size_t>(std::lround(value)) : 0;
    return param.choices[std::min(i, param.choices.size() - 1)];
  }
  if (!param.integer) return number_text(value);
  char text[32];
  std::snprintf(text, sizeof text, "%lld", static_cast<long long>(std::llround(value)));
  return text;
}

void check_params(const MethodOptions& options, const std::string& family, const std::string& where) {
  for (const MethodParam* p : params_of(family)) check_declared(*p, p->get(options), where);
}

std::string params_markdown() {
  std::string text = "| parameter | flag | methods | type | default | allowed | meaning |\n|---|---|---|---|---|---|---|\n";
  for (const MethodParam& p : method_params()) {
    const char* type = !p.choices.empty() ? "choice" : p.integer ? "integer" : "number";
    text += "| `" + p.name + "` | `--" + p.flag + "` | " + p.families_text() + " | " + type + " | " + p.default_text() + " | " + p.range_text() +
            " | " + p.help + " |\n";
  }
  return text;
}

std::vector<ParamSetting> deploy_params(MethodOptions& options, const std::string& method, const Artifact* artifact,
                                        const std::set<std::string>& explicit_flags) {
  const std::string family = method_family(method);
  // A lossy family whose sweep found no thresholds within its drift contract has nothing it may
  // deploy from this artifact: the user types the thresholds or picks another method.
  if (artifact)
    for (const SweepCalibration& sweep : artifact->sweeps) {
      if (sweep.family != family || sweep.lossless || sweep.confidence == 0 || sweep.chosen) continue;
      bool typed = false;
      for (const SweepAxis& axis : sweep.grid)
        if (const MethodParam* p = find_param(family, axis.name)) typed = typed || explicit_flags.count(p->flag) > 0;
      if (!typed)
        input_error("method " + method, "the artifact's " + family + " sweep found no thresholds within its drift contract (" + sweep.choice +
                                            "): deploy another method, widen the sweep's grid, or type the thresholds");
    }
  // A pilot has ARC's constants but not the gate its deploy stage chooses.
  if (artifact && artifact->arc && family == "arc" && is_arc_pilot(*artifact->arc) && !explicit_flags.count(find_param("arc", "theta")->flag))
    input_error("method " + method, "the artifact's arc calibration is a pilot (calibrate arc --stage pilot): run its deploy stage "
                                    "(--stage deploy --pilot DIR) to choose the gate, or type --arc-theta");
  std::vector<ParamSetting> settings;
  for (const MethodParam* p : params_of(family)) {
    ParamSetting s{p->name, p->get(options), "", "default"};
    if (explicit_flags.count(p->flag)) {
      s.source = "option --" + p->flag;
    } else if (artifact) {
      for (const Threshold& t : artifact->thresholds)
        if (t.policy == family && t.name == p->name) {
          p->check(t.value, "artifact threshold " + family + "." + p->name);
          p->set(options, t.value);
          s.value = p->get(options);
          s.source = "artifact" + (t.source.empty() ? std::string() : " (" + t.source + ")");
        }
    }
    s.text = param_value_text(*p, s.value);
    settings.push_back(s);
  }
  return settings;
}

std::vector<std::string> threshold_problems(const Artifact& artifact) {
  std::vector<std::string> problems;
  for (const Threshold& t : artifact.thresholds) {
    const std::string row = "calibration.sqlite: thresholds (" + t.policy + ", " + t.name + ")";
    const MethodParam* p = find_param(t.policy, t.name);
    if (!p) {
      problems.push_back(row + ": no method family '" + t.policy + "' with a parameter '" + t.name + "' (specd methods lists them)");
      continue;
    }
    try {
      p->check(t.value, row);
    } catch (const InputError& e) {
      problems.push_back(e.what());
    }
  }
  return problems;
}

std::string settings_text(const std::vector<ParamSetting>& settings) {
  std::string text;
  for (const ParamSetting& s : settings) text += (text.empty() ? "" : ", ") + s.name + "=" + s.text + " (" + s.source + ")";
  return text;
}

nlohmann::json settings_json(const std::vector<ParamSetting>& settings) {
  nlohmann::json deployed = nlohmann::json::object();
  for (const ParamSetting& s : settings) deployed[s.name] = {{"value", s.value}, {"source", s.source}};
  return deployed;
}

}  // namespace specd
