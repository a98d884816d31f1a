#pragma once
// What each decoding method is, by name: its summary, whether it needs a draft model or a
// calibration, whether it is lossless, the family whose parameters it shares. One table
// (method_catalog()), read by help texts, option checks, sweeps and the analysis of traces, which
// ask it instead of matching method names. How a method is built is method_registry.h's
// (make_policy); this part needs no model, so every library can ask it.
#include <string>
#include <vector>

namespace specd {

enum class DraftModelUse { None, Required, Optional };

struct MethodInfo {
  std::string name;
  std::string summary;  // one line of help
  DraftModelUse draft = DraftModelUse::None;
  bool lossless = true;
  // The calibration the method loads from the artifact (kCsdPolicy, kArcPolicy; "" for none);
  // required when set.
  std::string calibration;
  // The method whose parameters and swept thresholds this one shares (an ablation's: "respec" for
  // respec-no-ema); "" for the method's own name.
  std::string family;
  // Drafts sd's chain of gamma tokens with the draft model (sd, csd and its ablations): its
  // acceptance is comparable with the chain standard SD calibrates on.
  bool draft_chain = false;
  bool autoregressive = false;  // "ar": the plain loop, no drafter
};

// Every method, in display order ("ar" first).
const std::vector<MethodInfo>& method_registry();
// The method's entry, or null when there is none.
const MethodInfo* lookup_method(const std::string& name);
// InputError "method: unknown method 'x' (known: ...)".
const MethodInfo& find_method(const std::string& name);
std::string method_names_text();  // "ar, sd, sd-tree, ..."
// The lossless method the paper of `method`'s family claims its margin over (csd: sd, arc:
// sd-tree, respec: sam, adapld: pld; an ablation's is its method's), "" for none.
std::string paper_baseline(const std::string& method);
// True when `method` is registered and loads that calibration from the artifact (kCsdPolicy,
// kArcPolicy): how analysis picks the runs of a calibrated policy.
bool uses_calibration(const std::string& method, const std::string& calibration);

}  // namespace specd
