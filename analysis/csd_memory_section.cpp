// 3. CSD memory: what the calibration's correction memory holds (size, how concentrated the
// rejections are, the most frequent pairs as text with their logit gaps) and which pairs CSD
// rescued at deploy, from the traces' csd runs.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/csd_settings.h"
#include "analysis/sections.h"
#include "artifact/csd_pairs.h"
#include "speculative/method_catalog.h"
#include "util/format.h"

namespace specd::report {
namespace {

constexpr size_t kTopPairs = 20;

using nlohmann::json;

// Pairs by count descending, then draft and target ascending (summarize_pairs' order, restated so
// a table read from any writer ranks the same).
std::vector<CsdPair> ranked(std::vector<CsdPair> pairs) {
  std::stable_sort(pairs.begin(), pairs.end(), [](const CsdPair& a, const CsdPair& b) {
    if (a.count != b.count) return a.count > b.count;
    if (a.draft_token != b.draft_token) return a.draft_token < b.draft_token;
    return a.target_token < b.target_token;
  });
  return pairs;
}

// 1, 2, 5, 10, 20, 50, ... below n, then n.
std::vector<size_t> pareto_ranks(size_t n) {
  std::vector<size_t> ranks;
  for (size_t decade = 1; decade < n; decade *= 10)
    for (size_t m : {1, 2, 5})
      if (m * decade < n) ranks.push_back(m * decade);
  if (n > 0) ranks.push_back(n);
  return ranks;
}

std::vector<Block> size_blocks(const CsdCalibration& csd, const std::vector<CsdPair>& pairs, const CsdDeployed& deployed) {
  std::set<int32_t> drafts, targets;
  int64_t events = 0, rescuable_pairs = 0, rescuable_events = 0;
  for (const CsdPair& p : pairs) {
    drafts.insert(p.draft_token);
    targets.insert(p.target_token);
    events += p.count;
    if (p.count >= deployed.lambda) ++rescuable_pairs, rescuable_events += p.count;
  }
  Table t{"Memory size (calibration at temperature " + number_text(csd.provenance.temperature) + ")",
          {{"quantity", "quantity"}, {"value", "value"}}, json::array()};
  auto row = [&t](const std::string& quantity, const json& value) { t.rows.push_back({{"quantity", quantity}, {"value", value}}); };
  row("pairs (draft token, target token)", pairs.size());
  row("rejection events (sum of the pairs' counts)", events);
  row("rejection events stored", csd.rejections.size());
  row("distinct draft tokens", drafts.size());
  row("distinct target tokens", targets.size());
  row("calibration prompts", csd.prompts.size());
  row("pairs seen at least lambda = " + number_text(deployed.lambda) + " times (frequent enough to rescue)", rescuable_pairs);
  row("rejections in those pairs (%)", events > 0 ? json(100.0 * rescuable_events / events) : json(nullptr));
  std::vector<Block> blocks{Heading{"Memory size"}, t};
  if (events != static_cast<int64_t>(csd.rejections.size()))
    blocks.push_back(Paragraph{"The pairs' counts and the stored rejection events differ: the table was not derived from these "
                               "events alone (e.g. a memory saved after deploy with --save-memory).",
                               Tone::Flag});
  return blocks;
}

std::vector<Block> pareto_blocks(const std::vector<CsdPair>& pairs) {
  int64_t total = 0;
  for (const CsdPair& p : pairs) total += p.count;
  Table t{"Cumulative share of rejections held by the most frequent pairs, at selected ranks",
          {{"rank", "pair rank"}, {"pair_share", "share of pairs (%)", 2}, {"rejections", "rejections (cumulative)"},
           {"cumulative_share", "share of rejections (%)", 2}},
          json::array()};
  int64_t cumulative = 0;
  size_t next = 0;
  for (size_t rank : pareto_ranks(pairs.size())) {
    for (; next < rank; ++next) cumulative += pairs[next].count;
    t.rows.push_back({{"rank", rank},
                      {"pair_share", 100.0 * rank / pairs.size()},
                      {"rejections", cumulative},
                      {"cumulative_share", total > 0 ? 100.0 * cumulative / total : 0.0}});
  }
  // The paper's figure: the top 20% of pairs.
  const size_t top = static_cast<size_t>(std::ceil(0.2 * pairs.size()));
  int64_t top_count = 0;
  for (size_t i = 0; i < top; ++i) top_count += pairs[i].count;
  const std::string line = strprintf(
                "The most frequent 20%% of pairs (%zu of %zu) hold %.1f%% of the rejections (the CSD paper Figure 2: 69.0%% on its "
                "Llama pair).",
                top, pairs.size(), total > 0 ? 100.0 * top_count / total : 0.0);
  Chart c{"Pareto curve of the correction memory",
          {{"mark", {{"type", "line"}, {"point", true}}},
           {"encoding",
            {{"x", {{"field", "rank"}, {"type", "quantitative"}, {"scale", {{"type", "log"}}}, {"title", "pair rank (most frequent first, log scale)"}}},
             {"y", {{"field", "cumulative_share"}, {"type", "quantitative"}, {"scale", {{"domain", {0, 100}}}},
                    {"title", "cumulative share of rejections (%)"}}}}}},
          t};
  return {Heading{"Pareto curve"}, Paragraph{line}, c};
}

std::vector<Block> top_pair_blocks(const ReportInputs& in, const CsdCalibration& csd, const std::vector<CsdPair>& pairs,
                                   const CsdDeployed& deployed) {
  const double log_tau = std::log(deployed.tau);
  // Share of each top pair's own rejections whose gap passes the gate, from the stored events.
  std::map<std::pair<int32_t, int32_t>, std::pair<int64_t, int64_t>> gate;  // (passing, all)
  for (const CsdRejection& r : csd.rejections) {
    auto& g = gate[{r.draft_token, r.target_token}];
    g.first += r.logit_gap >= log_tau;
    ++g.second;
  }
  const size_t n = std::min(kTopPairs, pairs.size());
  Table t{"The " + std::to_string(n) + " most frequent pairs of " + std::to_string(pairs.size()) +
              " (gaps z(draft) - z(target) on the target's raw logits; the gate passes at log tau = " +
              number_text(log_tau) + " nats)",
          {{"rank", "rank"},
           {"pair", "draft → target"},
           {"draft_token", "draft id"},
           {"target_token", "target id"},
           {"count", "rejections"},
           {"gap_min", "gap min (nats)", 2},
           {"gap_p10", "gap p10 (nats)", 2},
           {"gap_median", "gap median (nats)", 2},
           {"gap_p90", "gap p90 (nats)", 2},
           {"gap_max", "gap max (nats)", 2},
           {"gate_pass", "gap ≥ log tau (%)", 1},
           {"rescuable", "count ≥ lambda"}},
          json::array()};
  for (size_t i = 0; i < n; ++i) {
    const CsdPair& p = pairs[i];
    const auto g = gate.find({p.draft_token, p.target_token});
    t.rows.push_back({{"rank", i + 1},
                      {"pair", pair_label(in, p.draft_token, p.target_token)},
                      {"draft_token", p.draft_token},
                      {"target_token", p.target_token},
                      {"count", p.count},
                      {"gap_min", p.gap_min},
                      {"gap_p10", p.gap_p10},
                      {"gap_median", p.gap_median},
                      {"gap_p90", p.gap_p90},
                      {"gap_max", p.gap_max},
                      {"gate_pass", g != gate.end() ? json(100.0 * g->second.first / g->second.second) : json(nullptr)},
                      {"rescuable", p.count >= deployed.lambda ? "yes" : "no"}});
  }
  const json y = {{"field", "pair"}, {"type", "nominal"}, {"sort", nullptr}, {"title", "pair (draft → target), most frequent first"}};
  const json x_title = "logit gap z(draft) − z(target) (nats)";
  Chart c{"Logit-gap spread of the top pairs: p10 to p90, median tick, min and max dots; dashed: log tau",
          {{"layer",
            {{{"mark", "rule"},
              {"encoding", {{"y", y}, {"x", {{"field", "gap_p10"}, {"type", "quantitative"}, {"title", x_title}}}, {"x2", {{"field", "gap_p90"}}}}}},
             {{"mark", {{"type", "tick"}, {"thickness", 2}}},
              {"encoding", {{"y", y}, {"x", {{"field", "gap_median"}, {"type", "quantitative"}, {"title", x_title}}}}}},
             {{"mark", {{"type", "point"}, {"size", 12}}},
              {"encoding", {{"y", y}, {"x", {{"field", "gap_min"}, {"type", "quantitative"}, {"title", x_title}}}}}},
             {{"mark", {{"type", "point"}, {"size", 12}}},
              {"encoding", {{"y", y}, {"x", {{"field", "gap_max"}, {"type", "quantitative"}, {"title", x_title}}}}}},
             {{"mark", {{"type", "rule"}, {"strokeDash", {4, 4}}}}, {"encoding", {{"x", {{"datum", log_tau}}}}}}}}},
          t};
  std::vector<Block> blocks{Heading{"Top pairs"}};
  if (!in.token_text) blocks.push_back(Paragraph{"No tokenizer given: pairs show token ids only."});
  blocks.push_back(Paragraph{"Rescuable: the memory has seen the pair at least lambda = " + number_text(deployed.lambda) + " times (" +
                             deployed.lambda_source + "); a rescue also needs the gap of that rejection at or above log tau, tau = " +
                             number_text(deployed.tau) + " (" + deployed.tau_source + ")."});
  blocks.push_back(c);
  return blocks;
}

// Rescues in the traces' csd runs.
struct DeployTally {
  struct Pair {
    int64_t count = 0;
    std::vector<double> gaps;
  };
  std::map<std::pair<int32_t, int32_t>, Pair> pairs;
  Table runs{"Rescued tokens per csd run and category",
             {{"file", "trace file"}, {"run", "run"}, {"method", "method"}, {"category", "category"}, {"requests", "requests"},
              {"new_tokens", "new tokens"}, {"rescued", "rescued tokens"}, {"rescued_share", "rescued share of new tokens (%)", 2}},
             json::array()};
  int64_t rescues_without_pair = 0;
  std::vector<std::string> settings;  // per run: what it deployed ("lambda=6 (artifact ...), tau=...")
};

void tally_run(const std::string& file, const TraceRunData& run, DeployTally& tally) {
  struct Totals {
    int64_t requests = 0, new_tokens = 0, rescued = 0;
  };
  std::map<std::string, Totals> by_category;
  Totals all;
  for (const TraceRequest& r : run.requests) {
    Totals& c = by_category[r.info.category];
    ++c.requests, ++all.requests;
    c.new_tokens += r.outcome.output_tokens.size();
    all.new_tokens += r.outcome.output_tokens.size();
  }
  for (const StepTraceRow& s : run.steps) {
    if (s.record.rescued <= 0) continue;
    by_category[s.category].rescued += s.record.rescued;
    all.rescued += s.record.rescued;
    const auto* csd = std::get_if<CsdAcceptance>(&s.record.detail.acceptance);
    if (!csd) {  // a trace written before the acceptor named its rescues' pairs
      tally.rescues_without_pair += s.record.rescued;
      continue;
    }
    for (const CsdRescue& x : csd->rescues) {
      auto& p = tally.pairs[{static_cast<int32_t>(x.draft), static_cast<int32_t>(x.target)}];
      ++p.count;
      p.gaps.push_back(x.gap);
    }
  }
  auto row = [&](const std::string& category, const Totals& t) {
    tally.runs.rows.push_back({{"file", file},
                               {"run", run.run.id},
                               {"method", run.run.info.method},
                               {"category", category},
                               {"requests", t.requests},
                               {"new_tokens", t.new_tokens},
                               {"rescued", t.rescued},
                               {"rescued_share", t.new_tokens > 0 ? json(100.0 * t.rescued / t.new_tokens) : json(nullptr)}});
  };
  for (const auto& [category, totals] : by_category) row(category, totals);
  row("all", all);
  const json options = json::parse(run.run.info.options_json, nullptr, false);
  if (options.is_object() && options.contains("settings") && options["settings"].is_string())
    tally.settings.push_back(file + " run " + std::to_string(run.run.id) + " (" + run.run.info.method + "): " +
                             options["settings"].get<std::string>());
}

double median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  return values[(values.size() - 1) / 2];  // the lower middle, as the artifact's nearest-rank median
}

std::vector<Block> deploy_blocks(const ReportInputs& in, const std::vector<CsdPair>& calibrated) {
  std::vector<Block> blocks{Heading{"Rescues at deploy"}};
  if (in.traces.empty()) {
    blocks.push_back(Paragraph{"no deploy traces given (specd report --traces F, from specd bench --methods ar,csd --traces F)"});
    return blocks;
  }
  DeployTally tally;
  for (const TraceFile& f : in.traces)
    for (const TraceRunData& run : f.runs)
      if (uses_calibration(run.run.info.method, kCsdPolicy)) tally_run(f.path, run, tally);  // csd and its ablations
  if (tally.runs.rows.empty()) {
    blocks.push_back(Paragraph{"no csd runs in the traces given"});
    return blocks;
  }
  blocks.push_back(tally.runs);
  for (const std::string& line : tally.settings) blocks.push_back(Paragraph{"Deployed with " + line});
  if (tally.rescues_without_pair > 0)
    blocks.push_back(Paragraph{std::to_string(tally.rescues_without_pair) +
                               " rescued tokens come from steps whose trace does not name the rescued pair (written by a specd "
                               "before the CSD acceptor recorded them): counted above, not in the pairs below.",
                               Tone::Flag});
  if (tally.pairs.empty()) return blocks;
  std::map<std::pair<int32_t, int32_t>, int64_t> calibrated_count;
  for (const CsdPair& p : calibrated) calibrated_count[{p.draft_token, p.target_token}] = p.count;
  std::vector<std::pair<std::pair<int32_t, int32_t>, const DeployTally::Pair*>> order;
  for (const auto& [key, p] : tally.pairs) order.push_back({key, &p});
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second->count > b.second->count; });
  const size_t n = std::min(kTopPairs, order.size());
  Table t{"The " + std::to_string(n) + " pairs rescued most often at deploy, of " + std::to_string(order.size()) + " rescued pairs",
          {{"rank", "rank"}, {"pair", "draft → target"}, {"draft_token", "draft id"}, {"target_token", "target id"},
           {"rescues", "rescues at deploy"}, {"gap_median", "gap median (nats)", 2}, {"calibrated", "count in the calibrated memory"}},
          json::array()};
  for (size_t i = 0; i < n; ++i) {
    const auto& [key, p] = order[i];
    const auto c = calibrated_count.find(key);
    t.rows.push_back({{"rank", i + 1},
                      {"pair", pair_label(in, key.first, key.second)},
                      {"draft_token", key.first},
                      {"target_token", key.second},
                      {"rescues", p->count},
                      {"gap_median", median(p->gaps)},
                      {"calibrated", c != calibrated_count.end() ? c->second : 0}});
  }
  blocks.push_back(t);
  return blocks;
}

}  // namespace

Section csd_memory_section(const ReportInputs& in) {
  Section s{"csd-memory", "CSD memory", {}};
  if (!in.artifact.csd) {
    s.blocks.push_back(csd_not_calibrated());
    return s;
  }
  const CsdCalibration& csd = *in.artifact.csd;
  const std::vector<CsdPair> pairs = ranked(csd.pairs.empty() ? summarize_pairs(csd.rejections) : csd.pairs);
  const CsdDeployed deployed = csd_deployed(in.artifact);
  std::vector<std::vector<Block>> parts{size_blocks(csd, pairs, deployed)};
  if (pairs.empty()) parts.push_back({Paragraph{"The memory is empty: the calibration recorded no rejection."}});
  else parts.insert(parts.end(), {pareto_blocks(pairs), top_pair_blocks(in, csd, pairs, deployed)});
  parts.push_back(deploy_blocks(in, pairs));
  for (auto& part : parts)
    for (Block& b : part) s.blocks.push_back(std::move(b));
  return s;
}

}  // namespace specd::report
