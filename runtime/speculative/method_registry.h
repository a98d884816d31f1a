#pragma once
// Building a decoding method by name: its drafter, optional pruner, acceptor and draft limits (a
// Policy, design.md) from the options and the artifact. What each method is (draft model,
// calibration, lossless, family) is the catalog's (method_catalog.h). A new policy is one file (its
// drafter, pruner or acceptor), one entry in the catalog and one in method_registry.cpp's builders.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decode/speculative.h"
#include "sampling/sampler.h"
#include "speculative/acceptor.h"
#include "speculative/adapld_options.h"
#include "speculative/arc_pruner.h"
#include "speculative/csd_acceptor.h"
#include "speculative/draft_budget.h"
#include "speculative/drafter.h"
#include "speculative/method_catalog.h"
#include "speculative/model_tree_drafter.h"
#include "speculative/pld_drafter.h"
#include "speculative/pruner.h"
#include "speculative/respec_options.h"
#include "speculative/sam_drafter.h"

namespace specd {

class LlamaModel;
struct Artifact;

struct MethodOptions {
  int32_t gamma = 4;          // draft chain length (sd, csd)
  TreeDraftOptions tree;      // sd-tree and SAM's fallback
  PldOptions pld;
  SamOptions sam;
  CsdOptions csd;             // lambda and tau (deploy_params puts an artifact's thresholds here)
  ArcPruneOptions arc_prune;  // arc, arc-prune-only: per-depth epsilon, entropy weight lambda
  double arc_theta = 0.3;     // arc, arc-lts-only: relax a rejected token when LTS >= theta
  RespecOptions respec;       // respec and its ablations
  AdaPldOptions adapld;       // adapld and its ablations
  // Cost-aware draft length (speculative/draft_budget.h): each step drafts at most the options
  // above allow, fewer when the measured cost curve says a longer draft does not pay. false:
  // always the full length (the reference methods' fixed lengths).
  bool adaptive_budget = true;
  DraftBudgetOptions budget;
  // The target's cost curve and the draft's cost per drafted token; make_policy measures what is
  // missing (a caller building several methods measures once and passes them in).
  std::optional<CostCurve> target_cost;
  std::optional<double> draft_ms_per_token;
};

// What a factory builds from.
struct MethodContext {
  const LlamaModel& target;
  std::shared_ptr<const LlamaModel> draft;  // null when no draft model was given
  const SamplingParams& sampling;
  const MethodOptions& options;
  const Artifact* artifact;                 // null when no artifact was given
  std::string artifact_name = "artifact";   // how errors name it (its directory)
};

struct Policy {
  std::string method;
  bool autoregressive = false;  // "ar": the plain loop, no drafter
  bool lossless = true;
  std::unique_ptr<Drafter> drafter;
  std::unique_ptr<Pruner> pruner;  // null: verify the whole draft
  std::unique_ptr<Acceptor> acceptor;
  int32_t max_nodes = 0, max_depth = 0;
  std::unique_ptr<DraftBudget> budget;  // null: fixed budget
  bool root_entropy = true;        // in the step traces (SpeculativeOptions::root_entropy)
  // What the drafter or acceptor borrows (SAM's fallback drafter and corpus, CSD's memory).
  std::vector<std::shared_ptr<const void>> owned;
  std::shared_ptr<CorrectionMemory> memory;  // CSD's correction memory, when the method has one
};

// Builds a method: InputError for an unknown method, a missing draft model or artifact part, a
// draft whose vocabulary differs from the target's, or an option out of range.
Policy make_policy(const std::string& method, const MethodContext& context);

// Decodes one prompt with a speculative policy (not "ar"); `on_step` as SpeculativeOptions::on_step.
SpeculativeOutput decode_with(const LlamaModel& target, Policy& policy, const std::vector<int32_t>& prompt,
                              const GenerateOptions& options, decltype(SpeculativeOptions::on_step) on_step = {});

}  // namespace specd
