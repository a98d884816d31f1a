#include "analysis/trace_metrics.h"

#include <algorithm>
#include <cmath>

#include <boost/math/distributions/students_t.hpp>
#include <nlohmann/json.hpp>

#include "speculative/method_catalog.h"

namespace specd::report {

namespace {

nlohmann::json parse_object(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text.empty() ? "{}" : text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : nlohmann::json::object();
}

// The ar run a method's run is compared with: same file and same command line (one bench
// invocation), else the latest ar run before it, else the first ar run of the file.
const TraceRunData* ar_twin(const TraceFile& file, const TraceRunData& run) {
  const TraceRunData* before = nullptr;
  const TraceRunData* any = nullptr;
  for (const TraceRunData& r : file.runs) {
    if (const MethodInfo* info = lookup_method(r.run.info.method); !info || !info->autoregressive) continue;
    if (r.run.info.command_line == run.run.info.command_line) return &r;
    if (!any) any = &r;
    if (r.run.id <= run.run.id) before = &r;
  }
  return before ? before : any;
}

void add_measurement(RunMetrics& m, const nlohmann::json& tally) {
  try {
    if (tally.contains("nll") && tally.contains("nll_tokens")) {
      m.nll += tally.at("nll").get<double>();
      m.nll_tokens += tally.at("nll_tokens").get<int64_t>();
    }
    if (tally.contains("chrf") && tally.contains("chrf_turns") && tally.at("chrf").size() == ChrfStats::kOrders) {
      ChrfStats s;
      for (int k = 0; k < ChrfStats::kOrders; ++k)
        s.hypothesis[k] = tally["chrf"][k].at(0).get<double>(), s.reference[k] = tally["chrf"][k].at(1).get<double>(),
        s.matches[k] = tally["chrf"][k].at(2).get<double>();
      m.chrf.add(s);
      m.chrf_turns += tally.at("chrf_turns").get<int64_t>();
    }
  } catch (const nlohmann::json::exception&) {
    // a malformed tally adds no quality numbers
  }
}

}  // namespace

void add_step(RunMetrics& m, const StepTrace& step) {
  ++m.steps;
  m.drafted += step.draft_size, m.accepted += step.accepted_length;
  m.rescued += step.rescued, m.relaxed += step.relaxed;
  if (!step.lossless) ++m.lossy_steps;
  m.draft_ms += step.draft_ms, m.verify_ms += step.verify_ms, m.accept_ms += step.accept_ms;
  const int64_t length = std::max<int32_t>(0, step.accepted_length);
  if (static_cast<int64_t>(m.length_steps.size()) <= length) m.length_steps.resize(length + 1, 0);
  ++m.length_steps[length];
  const int64_t reach = std::min<int64_t>(step.draft_size, length + 1);
  if (static_cast<int64_t>(m.position_reached.size()) < reach) {
    m.position_reached.resize(reach, 0);
    m.position_accepted.resize(reach, 0);
  }
  for (int64_t d = 1; d <= reach; ++d) {
    ++m.position_reached[d - 1];
    if (d <= length) ++m.position_accepted[d - 1];
  }
}

std::vector<RunSummary> summarize_traces(const std::vector<TraceFile>& files) {
  std::map<std::string, int> method_count;
  for (const TraceFile& f : files)
    for (const TraceRunData& r : f.runs) ++method_count[r.run.info.method];
  std::vector<RunSummary> out;
  for (const TraceFile& file : files) {
    const std::string base = file.path.substr(file.path.find_last_of('/') == std::string::npos ? 0 : file.path.find_last_of('/') + 1);
    for (const TraceRunData& run : file.runs) {
      RunSummary s;
      s.file = file.path, s.method = run.run.info.method, s.run_id = run.run.id;
      s.label = method_count[s.method] > 1 ? s.method + " [" + base + " #" + std::to_string(s.run_id) + "]" : s.method;
      const nlohmann::json options = parse_object(run.run.info.options_json);
      if (options.contains("settings") && options["settings"].is_string()) s.settings = options["settings"].get<std::string>();
      if (options.contains("temperature") && options["temperature"].is_number()) s.temperature = options["temperature"].get<double>();

      // AR's requests by workload item.
      std::map<std::string, const TraceRequest*> ar_items;
      if (const TraceRunData* ar = ar_twin(file, run)) {
        s.ar_run = ar->run.id;
        for (const TraceRequest& q : ar->requests) ar_items.emplace(q.info.workload, &q);
      }
      std::map<int64_t, std::vector<const StepTraceRow*>> steps_of;
      for (const StepTraceRow& row : run.steps) steps_of[row.request].push_back(&row);

      for (const TraceRequest& q : run.requests) {
        RunMetrics one;
        one.requests = 1;
        one.new_tokens = static_cast<int64_t>(q.outcome.output_tokens.size());
        one.wall_ms = q.outcome.wall_ms;
        for (const StepTraceRow* row : steps_of[q.info.index]) add_step(one, row->record);
        const nlohmann::json tally = parse_object(q.outcome.measurement);
        one.bench_steps = tally.contains("steps") && tally["steps"].is_number_integer() ? tally["steps"].get<int64_t>() : one.steps;
        add_measurement(one, tally);
        if (const auto it = ar_items.find(q.info.workload); it != ar_items.end()) {
          const TraceRequest& ar = *it->second;
          const double ar_tokens = static_cast<double>(ar.outcome.output_tokens.size());
          if (one.wall_ms > 0 && ar.outcome.wall_ms > 0 && ar_tokens > 0)
            one.speedup.add((one.new_tokens / one.wall_ms) / (ar_tokens / ar.outcome.wall_ms));
          ++one.compared;
          if (q.output_hash == ar.output_hash) ++one.equal_to_ar;
        }
        for (const std::string& c : {q.info.category, std::string("overall")}) {
          RunMetrics& m = s.by_category[c];
          m.requests += one.requests, m.new_tokens += one.new_tokens, m.steps += one.steps, m.bench_steps += one.bench_steps;
          m.drafted += one.drafted, m.accepted += one.accepted, m.rescued += one.rescued, m.relaxed += one.relaxed;
          m.lossy_steps += one.lossy_steps;
          m.wall_ms += one.wall_ms, m.draft_ms += one.draft_ms, m.verify_ms += one.verify_ms, m.accept_ms += one.accept_ms;
          auto add_vec = [](std::vector<int64_t>& to, const std::vector<int64_t>& from) {
            if (to.size() < from.size()) to.resize(from.size(), 0);
            for (size_t i = 0; i < from.size(); ++i) to[i] += from[i];
          };
          add_vec(m.position_reached, one.position_reached), add_vec(m.position_accepted, one.position_accepted);
          add_vec(m.length_steps, one.length_steps);
          m.acceptance_pairs.emplace_back(static_cast<double>(one.accepted), static_cast<double>(one.drafted));
          m.mat_pairs.emplace_back(static_cast<double>(one.new_tokens), static_cast<double>(one.bench_steps));
          m.speedup.add(one.speedup);
          m.compared += one.compared, m.equal_to_ar += one.equal_to_ar;
          m.nll += one.nll, m.nll_tokens += one.nll_tokens, m.chrf.add(one.chrf), m.chrf_turns += one.chrf_turns;
        }
      }
      for (const auto& [c, m] : s.by_category)
        if (c != "overall") s.categories.push_back(c);
      if (!s.by_category.empty()) s.categories.push_back("overall");
      out.push_back(std::move(s));
    }
  }
  return out;
}

double t_quantile_975(int64_t dof) {
  return boost::math::quantile(boost::math::students_t_distribution<double>(static_cast<double>(dof)), 0.975);
}

std::optional<RatioEstimate> ratio_interval(const std::vector<std::pair<double, double>>& pairs) {
  double a = 0, b = 0;
  for (const auto& [x, y] : pairs) a += x, b += y;
  if (pairs.empty() || b <= 0) return std::nullopt;
  RatioEstimate e;
  e.value = a / b;
  const int64_t n = static_cast<int64_t>(pairs.size());
  if (n < 2) return e;
  double residuals = 0;
  for (const auto& [x, y] : pairs) residuals += (x - e.value * y) * (x - e.value * y);
  const double mean_b = b / n;
  const double se = std::sqrt(residuals / (n - 1) / n) / mean_b;
  const double half = t_quantile_975(n - 1) * se;
  e.interval = Interval{e.value - half, e.value + half};
  return e;
}

}  // namespace specd::report
