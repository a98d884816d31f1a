#pragma once
// The server's counters in Prometheus' text exposition format (GET /metrics). Speculation's
// counters take vLLM's names (spec_decode_num_drafts, _num_draft_tokens, _num_accepted_tokens,
// _num_accepted_tokens_per_pos) under specd's prefix, per method; specd adds the lossy counters
// (rescued, relaxed tokens), request latency and time-to-first-token histograms, the queue, and
// the machine the models run on (an info gauge, as node_exporter's node_uname_info).
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/request_metrics.h"

namespace specd::serve {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}
  void observe(double x);
  // The metric's _bucket, _sum and _count lines.
  std::string text(const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<int64_t> counts_;  // per bucket, not cumulative; the last is +Inf
  double sum_ = 0;
  int64_t count_ = 0;
};

struct FinishedRequest {
  SpeculativeMetrics speculative;
  std::string finish_reason;  // stop, length, cancelled
  int64_t prompt_tokens = 0, completion_tokens = 0;
  double latency_s = 0, first_token_s = 0, queue_s = 0;
};

class ServerMetrics {
 public:
  ServerMetrics();
  void finished(const FinishedRequest& request);
  void refused(int status);  // a request answered with an error status
  void set_load(int64_t running, int64_t waiting);
  // The batch planner's fitted cost of a decoding step (all but its drafting), summed up as the
  // line through its cost at 1 and 9 rows: fixed + per_row * rows.
  void set_step_cost(double fixed_ms, double per_row_ms);
  // Decoding steps the drafting guard (serve/drafting_guard.h) ran in its off arm, so far.
  void set_guard_off_steps(int64_t steps);
  // The machine the models run on (machine_json), as the specd:machine_info gauge's labels.
  void set_machine(const nlohmann::json& machine);
  std::string prometheus_text() const;

 private:
  struct MethodCounters {
    int64_t drafts = 0, draft_tokens = 0, accepted_tokens = 0, rescued = 0, relaxed = 0, steps = 0;
    std::vector<int64_t> accepted_at;
  };
  mutable std::mutex mutex_;
  std::map<std::string, MethodCounters> methods_;
  std::map<std::string, int64_t> finished_by_reason_;
  std::map<int, int64_t> refused_by_status_;
  int64_t prompt_tokens_ = 0, generation_tokens_ = 0, running_ = 0, waiting_ = 0;
  double step_fixed_ms_ = -1, step_row_ms_ = 0;  // fixed < 0: not fitted yet
  int64_t guard_off_steps_ = 0;
  std::string machine_labels_;  // empty: not known
  Histogram latency_, first_token_, queue_time_;
};

}  // namespace specd::serve
