#pragma once
// What a trace holds: a run (one method over a set of requests), its requests, and one record per
// speculative step. Shared by the sinks that write traces and the reader that exports them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/step_detail.h"

namespace specd {

struct RunInfo {
  std::string command_line;
  std::string target_model;   // model directory
  std::string draft_model;    // empty when the method drafts without a model
  std::string method;         // ar, sd, sd-tree, pld, sam, ...
  std::string options_json = "{}";
  std::string specd_version;
  std::string specd_commit;   // empty when unknown
  std::string machine_json;   // util/machine.h's machine_json, dumped; empty when unknown (before version 5)
};

struct RequestInfo {
  int64_t index = 0;          // within the run, from 0
  std::string workload;       // workload item id
  std::string category;
  int64_t prompt_tokens = 0;
};

struct RequestOutcome {
  std::vector<int32_t> output_tokens;  // the new tokens only
  double wall_ms = 0;
  std::string measurement;             // JSON the writer adds (bench: its per-request tally); may be empty
};

// A request as a trace holds it: what it was, what it produced, and its output's hash.
struct TraceRequest {
  RequestInfo info;
  RequestOutcome outcome;
  std::string output_hash;  // token_hash of the output tokens as written
};

struct StepTrace {
  std::string drafter;
  int32_t draft_size = 0;          // drafted nodes, the root excluded
  int32_t accepted_length = 0;     // drafted tokens accepted; the step commits one more
  std::string accepted_sources;    // see accepted_sources() in speculative/step_metrics.h
  std::optional<double> root_entropy;  // nats
  double draft_ms = 0, verify_ms = 0, accept_ms = 0;
  bool lossless = true;
  int32_t pruned = 0;              // drafted nodes the pruner removed before verification
  int32_t rescued = 0, relaxed = 0;  // accepted tokens the lossless test had rejected
  std::string accepted_verdicts;   // see accepted_verdicts() in speculative/acceptor.h ("A,C")
  std::string decision_scores;     // JSON array: the score of each rescued or relaxed token, path order
  // What the drafter, the pruner and the acceptor measured in this step beyond the counts
  // (trace/step_detail.h); stored as one JSON object, NULL when empty.
  StepDetail detail;
};

// FNV-1a 64 over the token ids' little-endian 32-bit bytes, as 16 lowercase hex digits: equal
// outputs (e.g. a method against AR at temperature 0) have equal hashes.
std::string token_hash(const std::vector<int32_t>& tokens);

}  // namespace specd
