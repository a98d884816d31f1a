#pragma once
// The options every decoding method reads: draft lengths, trees, PLD, SAM, CSD, ARC, ReSpec,
// AdaPLD and the draft budget. Their tunable values are declared once, with ranges and help, in
// method_params.h; make_policy (methods/method_registry.h) builds a method from them.
#include <cstdint>
#include <optional>

#include "speculative/adapld_options.h"
#include "speculative/arc_pruner.h"
#include "speculative/csd_acceptor.h"
#include "speculative/draft_budget.h"
#include "speculative/model_tree_drafter.h"
#include "speculative/pld_drafter.h"
#include "speculative/respec_options.h"
#include "speculative/sam_drafter.h"

namespace specd {

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
  // The target's and the draft's cost curves; make_policy measures what is missing (a caller
  // building several methods measures once and passes them in).
  std::optional<CostCurve> target_cost, draft_cost;
};

}  // namespace specd
