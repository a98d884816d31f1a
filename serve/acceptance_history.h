#pragma once
// What each method's requests accepted on this server, so that a new request starts from it and
// not from DraftBudgetOptions::prior_acceptance. A request's draft budget (its chain's acceptance
// estimates, which the batch planner sizes drafts by) knows nothing of the pair at its first
// step; with 0.6 for both levels, the large demo pair's sd chains (0.72 accepted) were priced
// below plain decoding alone on the Xeon, and a chain that never drafts never learns better.
#include <map>
#include <optional>
#include <string>

#include "speculative/draft_budget.h"

namespace specd::serve {

class AcceptanceHistory {
 public:
  // A request of `method` ended: its budget's estimates and the evidence behind them
  // (DraftBudget::evidence); one with none changes nothing.
  void finished(const std::string& method, Acceptance estimate, double evidence);
  // Where a new request of `method` starts: the evidence-weighted estimates of its last requests
  // (each earlier one weighted kForget less), or none before one of them drafted.
  std::optional<Acceptance> start(const std::string& method) const;

  static constexpr double kForget = 0.9;  // about the last 10 requests

 private:
  struct Tally {
    double weight = 0, first = 0, next = 0;
  };
  std::map<std::string, Tally> methods_;
};

}  // namespace specd::serve
