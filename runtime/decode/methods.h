#pragma once
// Decoding methods by name: a Policy is a drafter plus an acceptor plus the draft budget. A new
// method is a new drafter or acceptor file and one entry in make_method.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decode/model_tree_drafter.h"
#include "decode/speculative.h"
#include "sampling/sampler.h"
#include "spec/acceptor.h"
#include "spec/draft_budget.h"
#include "spec/drafter.h"
#include "spec/pld_drafter.h"
#include "spec/sam_drafter.h"

namespace specd {

class LlamaModel;

struct MethodOptions {
  int32_t gamma = 4;          // sd: chain length
  TreeDraftOptions tree;      // sd-tree and SAM's fallback
  PldOptions pld;
  SamOptions sam;
  std::shared_ptr<const StaticSam> sam_corpus;  // SAM's static corpus, or null
  // Cost-aware draft length (spec/draft_budget.h): each step drafts at most the options above
  // allow, fewer when the measured cost curve says a longer draft does not pay. false: always the
  // full budget (the reference methods' fixed lengths).
  bool adaptive_budget = true;
  DraftBudgetOptions budget;
  // The target's cost curve and the draft's cost per drafted token; make_method measures what is
  // missing (a caller building several methods measures once and passes them in).
  std::optional<CostCurve> target_cost;
  std::optional<double> draft_ms_per_token;
};

struct Policy {
  std::string method;
  bool autoregressive = false;  // "ar": the plain loop, no drafter
  std::unique_ptr<Drafter> fallback;  // owned here when the drafter borrows it (SAM)
  std::shared_ptr<const StaticSam> sam_corpus;  // kept alive for the SAM drafter
  std::unique_ptr<Drafter> drafter;
  std::unique_ptr<Acceptor> acceptor;
  int32_t max_nodes = 0, max_depth = 0;
  std::unique_ptr<DraftBudget> budget;  // null: fixed budget
  bool root_entropy = true;             // in the step traces (SpeculativeOptions::root_entropy)
};

// Decodes one prompt with a speculative policy (not "ar"): its drafter, acceptor, budget and
// limits, and its root_entropy setting.
SpeculativeOutput decode_with(const LlamaModel& target, Policy& policy, const std::vector<int32_t>& prompt,
                              const GenerateOptions& options);

// The methods make_method knows, in display order.
const std::vector<std::string>& method_names();
bool method_needs_draft(const std::string& method);

// Throws InputError for an unknown method, a method that needs a draft model when none is given,
// or a draft whose vocabulary differs from the target's.
Policy make_method(const std::string& method, const LlamaModel& target, std::shared_ptr<const LlamaModel> draft,
                   const SamplingParams& sampling, const MethodOptions& options);

}  // namespace specd
