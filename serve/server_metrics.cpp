#include "serve/server_metrics.h"

#include <cstdio>
#include <sstream>

namespace specd::serve {
namespace {

// Prometheus' float format: shortest round trip, +Inf spelled its way.
std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

void family(std::ostringstream& out, const std::string& name, const char* type, const char* help) {
  out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
}

// A label value as the text format escapes it: backslash, double quote and newline.
std::string label_value(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// Latency buckets in seconds, as vLLM's e2e latency histogram spaces them.
std::vector<double> latency_bounds() { return {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160}; }

}  // namespace

void Histogram::observe(double x) {
  size_t bucket = 0;
  while (bucket < bounds_.size() && x > bounds_[bucket]) ++bucket;
  ++counts_[bucket];
  sum_ += x;
  ++count_;
}

std::string Histogram::text(const std::string& name, const std::string& labels) const {
  std::ostringstream out;
  const std::string sep = labels.empty() ? "" : labels + ",";
  int64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out << name << "_bucket{" << sep << "le=\"" << number(bounds_[i]) << "\"} " << cumulative << '\n';
  }
  out << name << "_bucket{" << sep << "le=\"+Inf\"} " << count_ << '\n';
  const std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out << name << "_sum" << braces << ' ' << number(sum_) << '\n' << name << "_count" << braces << ' ' << count_ << '\n';
  return out.str();
}

ServerMetrics::ServerMetrics() : latency_(latency_bounds()), first_token_(latency_bounds()), queue_time_(latency_bounds()) {}

void ServerMetrics::finished(const FinishedRequest& r) {
  std::lock_guard<std::mutex> lock(mutex_);
  MethodCounters& m = methods_[r.speculative.method];
  const SpeculativeMetrics& s = r.speculative;
  m.steps += s.steps;
  m.drafts += s.drafts;
  m.draft_tokens += s.draft_tokens;
  m.accepted_tokens += s.accepted_tokens;
  m.rescued += s.rescued;
  m.relaxed += s.relaxed;
  if (m.accepted_at.size() < s.accepted_at.size()) m.accepted_at.resize(s.accepted_at.size(), 0);
  for (size_t d = 0; d < s.accepted_at.size(); ++d) m.accepted_at[d] += s.accepted_at[d];
  ++finished_by_reason_[r.finish_reason];
  prompt_tokens_ += r.prompt_tokens;
  generation_tokens_ += r.completion_tokens;
  latency_.observe(r.latency_s);
  if (r.completion_tokens > 0) first_token_.observe(r.first_token_s);
  queue_time_.observe(r.queue_s);
}

void ServerMetrics::refused(int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++refused_by_status_[status];
}

void ServerMetrics::set_load(int64_t running, int64_t waiting) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_ = running;
  waiting_ = waiting;
}

void ServerMetrics::set_step_cost(double fixed_ms, double per_row_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  step_fixed_ms_ = fixed_ms;
  step_row_ms_ = per_row_ms;
}

void ServerMetrics::set_guard_off_steps(int64_t steps) {
  std::lock_guard<std::mutex> lock(mutex_);
  guard_off_steps_ = steps;
}

void ServerMetrics::set_machine(const nlohmann::json& machine) {
  std::string labels;
  if (machine.is_object())
    for (const char* key : {"cpu", "cache_level", "cache_bytes", "threads", "device"}) {
      const auto found = machine.find(key);
      if (found == machine.end() || found->is_null()) continue;
      labels += (labels.empty() ? "" : ",") + std::string(key) + "=\"" +
                label_value(found->is_string() ? found->get<std::string>() : found->dump()) + "\"";
    }
  std::lock_guard<std::mutex> lock(mutex_);
  machine_labels_ = labels;
}

std::string ServerMetrics::prometheus_text() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::ostringstream out;
  if (!machine_labels_.empty()) {  // the server's speeds are this machine's (docs/benchmarks.md, The machine)
    family(out, "specd:machine_info", "gauge", "The machine the models run on: CPU, its last-level cache, threads, device.");
    out << "specd:machine_info{" << machine_labels_ << "} 1\n";
  }
  family(out, "specd:num_requests_running", "gauge", "Requests being decoded.");
  out << "specd:num_requests_running " << running_ << '\n';
  family(out, "specd:num_requests_waiting", "gauge", "Requests waiting for a decoding slot.");
  out << "specd:num_requests_waiting " << waiting_ << '\n';
  if (step_fixed_ms_ >= 0) {  // what the draft budgets price a batch's rows by (docs/serving.md)
    family(out, "specd:step_cost_ms", "gauge", "The batch planner's fitted cost of a step with no draft model: fixed, and per row it verifies.");
    out << "specd:step_cost_ms{part=\"fixed\"} " << step_fixed_ms_ << '\n';
    out << "specd:step_cost_ms{part=\"per_row\"} " << step_row_ms_ << '\n';
  }
  family(out, "specd:guard_off_steps_total", "counter", "Decoding steps run without drafting because plain steps delivered more tokens per ms.");
  out << "specd:guard_off_steps_total " << guard_off_steps_ << '\n';
  family(out, "specd:request_success_total", "counter", "Finished requests by finish reason.");
  for (const auto& [reason, n] : finished_by_reason_) out << "specd:request_success_total{finished_reason=\"" << reason << "\"} " << n << '\n';
  family(out, "specd:request_refused_total", "counter", "Requests answered with an error, by HTTP status.");
  for (const auto& [status, n] : refused_by_status_) out << "specd:request_refused_total{status=\"" << status << "\"} " << n << '\n';
  family(out, "specd:prompt_tokens_total", "counter", "Prompt tokens of finished requests.");
  out << "specd:prompt_tokens_total " << prompt_tokens_ << '\n';
  family(out, "specd:generation_tokens_total", "counter", "Generated tokens of finished requests.");
  out << "specd:generation_tokens_total " << generation_tokens_ << '\n';

  struct Counter {
    const char* name;
    const char* help;
    int64_t MethodCounters::*field;
  };
  const Counter counters[] = {
      {"specd:spec_decode_num_steps_total", "Target forwards after the prefill.", &MethodCounters::steps},
      {"specd:spec_decode_num_drafts_total", "Steps that verified at least one drafted token.", &MethodCounters::drafts},
      {"specd:spec_decode_num_draft_tokens_total", "Drafted tokens verified.", &MethodCounters::draft_tokens},
      {"specd:spec_decode_num_accepted_tokens_total", "Drafted tokens accepted (rescued and relaxed included).",
       &MethodCounters::accepted_tokens},
      {"specd:spec_decode_num_rescued_tokens_total", "Accepted tokens CSD rescued (lossy).", &MethodCounters::rescued},
      {"specd:spec_decode_num_relaxed_tokens_total", "Accepted tokens a relaxed test accepted (lossy).", &MethodCounters::relaxed},
  };
  for (const Counter& c : counters) {
    family(out, c.name, "counter", c.help);
    for (const auto& [method, m] : methods_) out << c.name << "{method=\"" << method << "\"} " << m.*c.field << '\n';
  }
  family(out, "specd:spec_decode_num_accepted_tokens_per_pos_total", "counter", "Accepted drafted tokens by draft position (0-based).");
  for (const auto& [method, m] : methods_)
    for (size_t d = 0; d < m.accepted_at.size(); ++d)
      out << "specd:spec_decode_num_accepted_tokens_per_pos_total{method=\"" << method << "\",position=\"" << d << "\"} "
          << m.accepted_at[d] << '\n';
  family(out, "specd:e2e_request_latency_seconds", "histogram", "From arrival to the last token.");
  out << latency_.text("specd:e2e_request_latency_seconds", "");
  family(out, "specd:time_to_first_token_seconds", "histogram", "From arrival to the first token.");
  out << first_token_.text("specd:time_to_first_token_seconds", "");
  family(out, "specd:request_queue_time_seconds", "histogram", "From arrival to a decoding slot.");
  out << queue_time_.text("specd:request_queue_time_seconds", "");
  return out.str();
}

}  // namespace specd::serve
