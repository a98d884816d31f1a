#include "speculative/method_catalog.h"

#include "artifact/artifact.h"
#include "util/error.h"

namespace specd {

const std::vector<MethodInfo>& method_registry() {
  using D = DraftModelUse;
  // name, summary, draft model, lossless, calibration, family, draft_chain, autoregressive
  static const std::vector<MethodInfo> methods{
      {"ar", "autoregressive decoding, one target forward per token", D::None, true, "", "", false, true},
      {"sd", "draft-model chain of gamma tokens, lossless verification", D::Required, true, "", "", true},
      {"sd-tree", "draft-model tree (EAGLE-2's levels, nodes by learned acceptance, sampled children at T > 0), lossless verification", D::Required, true, "", ""},
      {"pld", "Prompt Lookup Decoding: copy after an n-gram match in prompt + output, lossless", D::None, true, "", ""},
      {"sam", "SAM-Decoding: suffix-automaton retrieval (and the artifact's static corpus), draft-model tree fallback, lossless",
       D::Optional, true, "", ""},
      {"csd", "CSD (LOSSY): sd's chain, rejected tokens rescued by the correction memory and the logit-gap gate", D::Required, false,
       kCsdPolicy, "", true},
      {"csd-ocm-only", "CSD ablation (LOSSY): rescue by the correction memory alone, no gate", D::Required, false, kCsdPolicy, "csd", true},
      {"csd-scg-only", "CSD ablation (LOSSY): rescue by the logit-gap gate alone, no memory", D::Required, false, kCsdPolicy, "csd", true},
      {"arc", "ARC-Decode (LOSSY): sd-tree's tree pruned by entropy-weighted mass, rejected tokens relaxed when LTS >= theta",
       D::Required, false, kArcPolicy, ""},
      // Pruning uses no calibrated constant (epsilon and lambda are options), so it needs no artifact.
      {"arc-prune-only", "ARC ablation: sd-tree's tree pruned by entropy-weighted mass, lossless verification", D::Required, true, "",
       "arc"},
      {"arc-lts-only", "ARC ablation (LOSSY): sd-tree's full tree, rejected tokens relaxed when LTS >= theta", D::Required, false,
       kArcPolicy, "arc"},
      // ReSpec (the ReSpec paper) and its ablations; they share respec's swept thresholds.
      {"respec", "ReSpec (LOSSY): entropy-triggered retrieval of EMA-ranked continuations, relaxed verification at T=0, "
                 "draft-model tree fallback",
       D::Optional, false, "", ""},
      {"respec-no-trigger", "ReSpec ablation (LOSSY): retrieve whenever the key occurred, whatever the entropy", D::Optional, false, "",
       "respec"},
      {"respec-no-ema", "ReSpec ablation (LOSSY): the latest match positions, no EMA filter or ranking", D::Optional, false, "", "respec"},
      {"respec-lossless", "ReSpec ablation: no relaxed verification, lossless (its lossless hybrid)", D::Optional, true, "", "respec"},
      // AdaPLD (the AdaPLD paper) and its ablations (its Table 4), all lossless and model-free.
      {"adapld", "AdaPLD: lexical anchors, embedding fallback, hidden-state reranking; copy path, top-K branches, successors", D::None,
       true, "", ""},
      {"adapld-lexical-only", "AdaPLD ablation: no semantic fallback", D::None, true, "", "adapld"},
      {"adapld-no-branches", "AdaPLD ablation: the main copy path only (no branches, no successors)", D::None, true, "", "adapld"},
      {"adapld-no-successors", "AdaPLD ablation: copy path and branches, no successors", D::None, true, "", "adapld"},
  };
  return methods;
}

std::string method_names_text() {
  std::string text;
  for (const MethodInfo& m : method_registry()) text += (text.empty() ? "" : ", ") + m.name;
  return text;
}

std::string paper_baseline(const std::string& method) {
  const MethodInfo* info = lookup_method(method);
  if (!info) return "";
  const std::string family = info->family.empty() ? info->name : info->family;
  // csd.md (2.02x vs sd's 1.75x), arc-decode.md (vs EAGLE-3's tree), respec.txt (vs SAM-Decoding),
  // adapld.txt (vs PLD).
  if (family == "csd") return "sd";
  if (family == "arc") return "sd-tree";
  if (family == "respec") return "sam";
  if (family == "adapld") return "pld";
  return "";
}

bool uses_calibration(const std::string& method, const std::string& calibration) {
  const MethodInfo* info = lookup_method(method);
  return info && info->calibration == calibration;
}

const MethodInfo* lookup_method(const std::string& name) {
  for (const MethodInfo& m : method_registry())
    if (m.name == name) return &m;
  return nullptr;
}

const MethodInfo& find_method(const std::string& name) {
  if (const MethodInfo* m = lookup_method(name)) return *m;
  input_error("method", "unknown method '" + name + "' (known: " + method_names_text() + ")");
}

}  // namespace specd
