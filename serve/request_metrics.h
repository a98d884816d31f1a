#pragma once
// What one request's speculation did, counted from its verified trees and verdicts: the object
// each response carries beside "usage", and what /metrics adds up. Positions are draft depths:
// a tree's nodes at depth d are one draft position, as a chain's d-th token is.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "speculative/acceptor.h"
#include "speculative/draft_tree.h"

namespace specd::serve {

struct SpeculativeMetrics {
  std::string method;
  bool lossless = true;
  int64_t steps = 0;            // target forwards after the prefill
  int64_t drafts = 0;           // steps that verified at least one drafted token
  int64_t draft_tokens = 0;     // drafted tokens verified (after pruning)
  int64_t accepted_tokens = 0;  // drafted tokens accepted (rescued and relaxed ones included)
  int64_t rescued = 0, relaxed = 0;  // accepted tokens the lossless test had rejected
  std::vector<int64_t> drafted_at;   // [d]: steps whose draft reached depth d + 1
  std::vector<int64_t> accepted_at;  // [d]: steps that accepted a token at depth d + 1

  void add_step(const DraftTree& tree, const AcceptResult& result);
  // Tokens a step commits on average: its accepted drafted tokens plus the target's one.
  double mean_accepted_length() const { return steps ? static_cast<double>(steps + accepted_tokens) / steps : 0.0; }
  nlohmann::json to_json() const;
};

}  // namespace specd::serve
