#include "calibrate/arc_deploy_sites.h"

#include <map>
#include <variant>

#include "calibrate/arc_samples.h"
#include "model/llama_model.h"
#include "speculative/method_catalog.h"
#include "stats/arc_fit.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/progress.h"

namespace specd {
namespace {

// The relaxed tokens of one request as sites: positions from the steps' accepted lengths.
std::vector<ArcSite> relaxed_sites(const std::vector<StepTraceRow>& steps, int64_t request, int64_t prompt_tokens, int64_t sequence_length) {
  std::vector<ArcSite> sites;
  int64_t root = prompt_tokens;
  int32_t step = 0;
  for (const StepTraceRow& row : steps) {
    if (row.request != request) continue;
    if (const auto* arc = std::get_if<ArcAcceptance>(&row.record.detail.acceptance))
      for (const LtsNode& node : arc->lts) {
        if (!node.relaxed) continue;
        if (root + node.depth >= sequence_length) continue;  // the text ended inside the step
        ArcSite site{step, static_cast<int32_t>(node.depth), root + node.depth, root, static_cast<int32_t>(node.token)};
        site.deploy_site = site.relaxed = true;  // kept where t_d = t_m, counted apart
        sites.push_back(site);
      }
    root += row.record.accepted_length + 1;
    ++step;
  }
  return sites;
}

}  // namespace

ArcDeployRuns find_arc_runs(const std::vector<std::string>& traces, int64_t wanted, bool require_runs) {
  ArcDeployRuns found;
  for (const std::string& path : traces) {
    TraceReader reader(path);
    ArcDeployRuns::File f{path, {}};
    for (const TraceRun& run : reader.runs())
      if (wanted ? run.id == wanted : uses_calibration(run.info.method, kArcPolicy)) {
        f.runs.push_back(run);
        found.requests += run.requests;
      }
    if (f.runs.empty() && require_runs)
      input_error(path, wanted ? "has no run " + std::to_string(wanted) : "holds no arc or arc-lts-only run");
    if (!f.runs.empty()) found.files.push_back(std::move(f));
  }
  return found;
}

ArcDeployAudit audit_arc_deploy(const ArcDeployRuns& runs, const LlamaModel& target, const Tokenizer& tokenizer,
                                const std::vector<WorkloadItem>& workloads, const ArcCalibration& arc) {
  ArcDeployAudit result;
  std::map<std::string, WorkloadItem> items;
  for (const WorkloadItem& item : workloads) items[item.id] = item;

  ArcSampleOptions options;
  options.run.sampling.temperature = arc.provenance.temperature;
  options.run.sampling.top_k = static_cast<int>(arc.provenance.top_k);
  options.run.sampling.top_p = arc.provenance.top_p;
  options.top_k = arc.top_k;
  options.mu = arc.mu;
  options.epsilon = arc.epsilon;
  std::vector<ArcSample> samples;
  std::map<int32_t, std::string> categories;
  Progress progress(runs.requests, "audit arc", "requests");
  int32_t index = 0;
  for (const ArcDeployRuns::File& f : runs.files) {
    TraceReader reader(f.path);
    for (const TraceRun& run : f.runs) {
      ++result.runs;
      const std::vector<StepTraceRow> steps = reader.steps(run.id);
      for (const TraceRequest& request : reader.requests(run.id)) {
        auto item = items.find(request.info.workload);
        if (item == items.end() || item->second.turns.size() != 1) {
          ++result.skipped;
          progress.step("request");
          continue;
        }
        std::vector<int32_t> sequence = tokenizer.encode(item->second.turns.front(), /*add_special_tokens=*/true);
        const int64_t prompt_tokens = static_cast<int64_t>(sequence.size());
        sequence.insert(sequence.end(), request.outcome.output_tokens.begin(), request.outcome.output_tokens.end());
        const std::vector<ArcSite> sites = relaxed_sites(steps, request.info.index, prompt_tokens, static_cast<int64_t>(sequence.size()));
        categories[index] = request.info.category;
        for (ArcSample& s : measure_arc_sites(target, arc.whitening, options, index, sequence, sites, /*held_out=*/false))
          samples.push_back(s);
        ++index;
        progress.step("request");
      }
    }
  }
  progress.done();
  std::vector<ArcSample> substituted;
  for (const ArcSample& x : samples) {
    ++result.relaxed;
    if (x.draft_token == x.target_token) ++result.relaxed_argmax;
    else substituted.push_back(x);
  }
  for (ArcSample& x : substituted) x.deploy_site = x.relaxed = false;  // audit_arc's split: not held out
  // Each request is a cluster: its relaxed tokens share one text.
  for (const ArcGroupTally& t : tally_arc_groups(substituted, categories, /*held_out=*/false,
                                                 [&](const ArcSample& x) { return arc_covered(x, arc.constants); })) {
    result.rows.push_back(arc_audit_row(t));
    result.clustered.push_back(cluster_interval(t.clusters()));
  }
  if (!has_deploy_sites(arc)) return result;
  result.gate = arc_gate_options_of(arc, "artifact");
  const double tolerance = result.gate->js_tolerance;
  for (const ArcGroupTally& t : tally_arc_groups(substituted, categories, /*held_out=*/false,
                                                 [&](const ArcSample& x) { return x.js > tolerance; })) {
    if (t.group_kind == "depth") continue;
    ArcMissRow m;
    m.group_kind = t.group_kind, m.group = t.group;
    m.requests = static_cast<int64_t>(t.per_prompt.size());
    m.tokens = t.samples, m.misses = t.hits;
    m.rate = m.tokens ? static_cast<double>(m.misses) / static_cast<double>(m.tokens) : 0.0;
    m.wilson = wilson_interval(m.misses, m.tokens);
    m.clustered = cluster_interval(t.clusters());
    result.misses.push_back(m);
  }
  return result;
}

}  // namespace specd
