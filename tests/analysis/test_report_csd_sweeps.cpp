// The report's CSD memory, sweeps and CSD what-if parts, against independent recomputations: the
// Pareto shares and top pairs by brute force over a synthetic memory, the what-if rescue shares
// by replaying the rejections, the sweep's chosen, fastest, default and slowest runs against
// calibrate/sweep_choice and a scan of the runs, rescues at deploy from hand-made traces, and
// "not calibrated" where the artifact lacks the calibration.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>

#include "analysis/sections.h"
#include "artifact_fixtures.h"
#include "calibrate/sweep_choice.h"

namespace specd {
namespace {

using nlohmann::json;
using report::Block;
using report::Chart;
using report::Paragraph;
using report::Section;
using report::Table;
using report::Tone;
using PairKey = std::pair<int32_t, int32_t>;

const Table& table_starting(const std::vector<Block>& blocks, const std::string& caption) {
  for (const Block& b : blocks) {
    if (const auto* t = std::get_if<Table>(&b); t && t->caption.rfind(caption, 0) == 0) return *t;
    if (const auto* c = std::get_if<Chart>(&b); c && c->table.caption.rfind(caption, 0) == 0) return c->table;
  }
  FAIL("no table captioned \"" << caption << "...\"");
  throw std::logic_error("unreachable");
}

std::vector<const Chart*> charts(const std::vector<Block>& blocks) {
  std::vector<const Chart*> out;
  for (const Block& b : blocks)
    if (const auto* c = std::get_if<Chart>(&b)) out.push_back(c);
  return out;
}

std::vector<std::string> paragraphs(const std::vector<Block>& blocks, Tone tone) {
  std::vector<std::string> out;
  for (const Block& b : blocks)
    if (const auto* p = std::get_if<Paragraph>(&b); p && p->tone == tone) out.push_back(p->text);
  return out;
}

bool mentions(const std::vector<Block>& blocks, const std::string& text) {
  for (const Block& b : blocks)
    if (const auto* p = std::get_if<Paragraph>(&b); p && p->text.find(text) != std::string::npos) return true;
  return false;
}

// A memory of a few hundred pairs with a long tail: pair k = a * b / 300 for a, b uniform in
// [0, 300), so small k are frequent.
report::ReportInputs csd_inputs(uint32_t seed = 3) {
  report::ReportInputs in;
  in.artifact = test::synthetic_artifact();
  CsdCalibration& csd = *in.artifact.csd;
  csd.rejections.clear();
  std::mt19937 rng(seed);
  for (int32_t prompt = 0; prompt < 40; ++prompt)
    for (int32_t step = 0; step < 60; ++step) {
      const int32_t k = static_cast<int32_t>((rng() % 300) * (rng() % 300) / 300);
      CsdRejection r;
      r.prompt = prompt;
      r.step = step;
      r.depth = 1 + static_cast<int32_t>(rng() % 6);
      r.draft_token = k % 37;
      r.target_token = 100 + k / 37;
      r.logit_gap = -static_cast<float>(rng() % 1200) / 128.0f;  // 0 to -9.4 nats: log 0.001 = -6.9
      csd.rejections.push_back(r);
    }
  csd.pairs = summarize_pairs(csd.rejections);
  return in;
}

std::map<PairKey, int64_t> brute_counts(const std::vector<CsdRejection>& rejections) {
  std::map<PairKey, int64_t> counts;
  for (const CsdRejection& r : rejections) ++counts[{r.draft_token, r.target_token}];
  return counts;
}

}  // namespace

TEST_CASE("report csd: the Pareto shares equal a brute-force count over the memory", "[report][csd]") {
  const report::ReportInputs in = csd_inputs();
  const Section s = report::csd_memory_section(in);
  std::vector<int64_t> counts;
  int64_t total = 0;
  for (const auto& [key, n] : brute_counts(in.artifact.csd->rejections)) counts.push_back(n), total += n;
  std::sort(counts.rbegin(), counts.rend());
  REQUIRE((counts.size() > 200 && counts.size() < 500));  // ranks 1, 2, 5, 10, 20, 50, 100, 200 and all

  const Table& t = table_starting(s.blocks, "Cumulative share of rejections");
  std::vector<size_t> ranks;
  for (const json& row : t.rows) ranks.push_back(row["rank"].get<size_t>());
  CHECK(ranks == std::vector<size_t>{1, 2, 5, 10, 20, 50, 100, 200, counts.size()});
  for (const json& row : t.rows) {
    const size_t rank = row["rank"];
    int64_t sum = 0;
    for (size_t i = 0; i < rank; ++i) sum += counts[i];
    CAPTURE(rank);
    CHECK(row["rejections"] == sum);
    CHECK(row["cumulative_share"].get<double>() == Approx(100.0 * sum / total));
    CHECK(row["pair_share"].get<double>() == Approx(100.0 * rank / counts.size()));
  }
  CHECK(t.rows.back()["cumulative_share"].get<double>() == Approx(100.0));
  // The chart draws that very table.
  bool drawn = false;
  for (const Chart* c : charts(s.blocks)) drawn = drawn || (c->table.rows == t.rows && c->spec.dump().find("cumulative_share") != std::string::npos);
  CHECK(drawn);

  const Table& size = table_starting(s.blocks, "Memory size");
  std::map<std::string, json> value;
  for (const json& row : size.rows) value[row["quantity"]] = row["value"];
  CHECK(value["pairs (draft token, target token)"] == counts.size());
  CHECK(value["rejection events (sum of the pairs' counts)"] == total);
  CHECK(value["calibration prompts"] == in.artifact.csd->prompts.size());
}

TEST_CASE("report csd: the top pairs come in count order, decoded to text with visible whitespace", "[report][csd]") {
  report::ReportInputs in = csd_inputs();
  in.token_text = [](int32_t id) -> std::string {
    if (id == 0) return " the";
    if (id == 100) return "\n";
    if (id == 1) return "\xe2";  // part of a character, as a byte-level token can be
    return "t" + std::to_string(id);
  };
  const Section s = report::csd_memory_section(in);
  const Table& t = table_starting(s.blocks, "The 20 most frequent pairs");
  REQUIRE(t.rows.size() == 20);
  // Brute force: every pair by count descending, then draft and target ascending.
  std::vector<std::pair<int64_t, PairKey>> order;
  for (const auto& [key, n] : brute_counts(in.artifact.csd->rejections)) order.push_back({-n, key});
  std::sort(order.begin(), order.end());
  const double log_tau = std::log(0.01);
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const json& row = t.rows[i];
    CAPTURE(i);
    CHECK(row["rank"] == i + 1);
    CHECK(row["draft_token"] == order[i].second.first);
    CHECK(row["target_token"] == order[i].second.second);
    CHECK(row["count"] == -order[i].first);
    CHECK(row["rescuable"] == (-order[i].first >= 6 ? "yes" : "no"));
    int64_t passing = 0;
    std::vector<float> gaps;
    for (const CsdRejection& r : in.artifact.csd->rejections)
      if (PairKey{r.draft_token, r.target_token} == order[i].second) passing += r.logit_gap >= log_tau, gaps.push_back(r.logit_gap);
    CHECK(row["gate_pass"].get<double>() == Approx(100.0 * passing / gaps.size()));
    CHECK(row["gap_min"].get<double>() == *std::min_element(gaps.begin(), gaps.end()));
    CHECK(row["gap_max"].get<double>() == *std::max_element(gaps.begin(), gaps.end()));
  }
  // Pair 0 -> 100 (k = 0): " the" -> newline, shown visibly.
  bool visible = false, partial = false;
  for (const json& row : t.rows) visible = visible || row["pair"] == "'\u2423the' \u2192 '\u21b5' (0 \u2192 100)";
  CHECK(visible);
  for (const json& row : t.rows) partial = partial || row["pair"].get<std::string>().find("'\\xe2'") != std::string::npos;
  CHECK(partial);
  CHECK_NOTHROW(t.rows.dump());  // valid UTF-8 throughout

  in.token_text = nullptr;  // ids only
  const Section plain = report::csd_memory_section(in);
  const json& first = table_starting(plain.blocks, "The 20 most frequent pairs").rows[0];
  CHECK(first["pair"] == std::to_string(first["draft_token"].get<int>()) + " \u2192 " + std::to_string(first["target_token"].get<int>()));
}

TEST_CASE("report csd: the what-if rescue shares equal a replay of the recorded rejections", "[report][csd]") {
  const report::ReportInputs in = csd_inputs(11);
  const auto blocks = report::what_if_csd_blocks(in);
  CHECK(mentions(blocks, "first-rejection estimates: each recorded rejection is the first rejection of its step"));
  const Table& t = table_starting(blocks, "Share of the");
  const auto& events = in.artifact.csd->rejections;
  const std::map<PairKey, int64_t> whole = brute_counts(events);
  REQUIRE(t.rows.size() == 6 * 4);
  int deployed = 0;
  for (const json& row : t.rows) {
    const double lambda = row["lambda"], tau = row["tau"];
    int64_t from_empty = 0, with_table = 0;
    std::map<PairKey, int64_t> seen;
    for (const CsdRejection& r : events) {
      const int64_t count = ++seen[{r.draft_token, r.target_token}];  // updated before the test
      const bool safe = static_cast<double>(r.logit_gap) >= std::log(tau);
      from_empty += count >= lambda && safe;
      with_table += whole.at({r.draft_token, r.target_token}) >= lambda && safe;
    }
    CAPTURE(lambda, tau);
    CHECK(row["rescued_empty"] == from_empty);
    CHECK(row["rescued_table"] == with_table);
    CHECK(row["share_table"].get<double>() == Approx(100.0 * with_table / events.size()));
    deployed += row["deployed"] == "yes";
    if (row["deployed"] == "yes") CHECK((lambda == 6 && tau == 0.01));
  }
  CHECK(deployed == 1);
  REQUIRE(charts(blocks).size() == 1);
  CHECK(charts(blocks)[0]->table.rows == t.rows);

  // A deployed lambda off the grid joins it.
  report::ReportInputs other = in;
  for (Threshold& th : other.artifact.thresholds)
    if (th.name == "lambda") th.value = 4;
  CHECK(table_starting(report::what_if_csd_blocks(other), "Share of the").rows.size() == 7 * 4);
}

TEST_CASE("report csd: rescues at deploy by pair, per run and category, from the traces' csd runs", "[report][csd]") {
  report::ReportInputs in = csd_inputs();
  const auto rescue_section = [&]() { return report::csd_memory_section(in); };
  CHECK(mentions(rescue_section().blocks, "no deploy traces given"));

  auto request = [](int64_t index, const std::string& category, size_t tokens) {
    TraceRequest r;
    r.info.index = index;
    r.info.category = category;
    r.outcome.output_tokens.assign(tokens, 1);
    return r;
  };
  auto step = [](int64_t req, const std::string& category, int32_t rescued, const std::string& detail) {
    StepTraceRow s;
    s.request = req;
    s.category = category;
    s.record.rescued = rescued;
    s.record.detail = parse_step_detail(detail, "test");
    return s;
  };
  report::TraceRunData ar;
  ar.run.id = 1;
  ar.run.info.method = "ar";
  ar.requests = {request(0, "code", 10)};
  in.traces.push_back({"t.sqlite", {ar}});
  CHECK(mentions(rescue_section().blocks, "no csd runs in the traces given"));

  report::TraceRunData csd;
  csd.run.id = 2;
  csd.run.info.method = "csd";
  csd.run.info.options_json = R"j({"settings": "gamma=4 (default), lambda=6 (artifact), tau=0.01 (artifact)"})j";
  csd.requests = {request(0, "code", 40), request(1, "qa", 60)};
  const std::string two = R"({"acceptance": {"rescues": [{"draft": 5, "target": 100, "gap": -1.0}, {"draft": 0, "target": 100, "gap": -0.5}]}})";
  const std::string one = R"({"acceptance": {"rescues": [{"draft": 5, "target": 100, "gap": -3.0}]}})";
  csd.steps = {step(0, "code", 2, two), step(0, "code", 0, ""), step(1, "qa", 1, one), step(1, "qa", 1, "")};  // the last: an old trace
  in.traces.back().runs.push_back(csd);
  const Section s = rescue_section();

  const Table& runs = table_starting(s.blocks, "Rescued tokens per csd run");
  REQUIRE(runs.rows.size() == 3);  // code, qa, all; the ar run is not a csd run
  CHECK((runs.rows[0]["category"] == "code" && runs.rows[0]["rescued"] == 2 && runs.rows[0]["new_tokens"] == 40));
  CHECK((runs.rows[1]["category"] == "qa" && runs.rows[1]["rescued"] == 2 && runs.rows[1]["new_tokens"] == 60));
  CHECK((runs.rows[2]["category"] == "all" && runs.rows[2]["rescued"] == 4 && runs.rows[2]["requests"] == 2));
  CHECK(runs.rows[2]["rescued_share"].get<double>() == Approx(4.0));
  CHECK(paragraphs(s.blocks, Tone::Flag).size() == 1);  // one rescue without its pair
  CHECK(mentions(s.blocks, "Deployed with t.sqlite run 2 (csd): gamma=4 (default), lambda=6 (artifact), tau=0.01 (artifact)"));

  const Table& pairs = table_starting(s.blocks, "The 2 pairs rescued most often at deploy");
  const std::map<PairKey, int64_t> calibrated = brute_counts(in.artifact.csd->rejections);
  CHECK((pairs.rows[0]["draft_token"] == 5 && pairs.rows[0]["target_token"] == 100 && pairs.rows[0]["rescues"] == 2));
  CHECK(pairs.rows[0]["gap_median"].get<double>() == -3.0);  // the lower middle of {-3, -1}
  CHECK(pairs.rows[0]["calibrated"] == calibrated.at({5, 100}));
  CHECK((pairs.rows[1]["draft_token"] == 0 && pairs.rows[1]["target_token"] == 100 && pairs.rows[1]["rescues"] == 1));
  CHECK(pairs.rows[1]["calibrated"] == calibrated.at({0, 100}));
}

TEST_CASE("report csd: an artifact without a csd calibration says not calibrated in every csd part", "[report][csd]") {
  report::ReportInputs in;
  in.artifact = test::synthetic_artifact();
  in.artifact.csd.reset();
  for (const auto& blocks : {report::csd_memory_section(in).blocks, report::what_if_csd_blocks(in)}) {
    const auto lines = paragraphs(blocks, Tone::NotCalibrated);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].rfind("not calibrated: run specd calibrate csd", 0) == 0);
    CHECK(charts(blocks).empty());
  }
}

namespace {

// A run with an 'overall' row and two categories.
SweepRun sweep_run(int32_t index, std::vector<double> values, std::string point, double speedup, double nll, double chrf) {
  SweepRun r;
  r.index = index;
  r.values = std::move(values);
  r.point = std::move(point);
  for (const char* category : {"code", "qa", "overall"}) {
    SweepStats s;
    s.category = category;
    s.prompts = 3;
    s.mat = 1.5 + index / 8.0;
    s.acceptance = 0.25 + index / 64.0;
    s.speedup = speedup;
    s.speedup_ci95 = 0.0625;
    s.nll_per_token = nll;
    s.ar_nll_per_token = 2.0;
    s.chrf_vs_ar = chrf;
    r.stats.push_back(s);
  }
  return r;
}

// pld over tokens x match (3 x 2), lossy at T = 0 for the bounds' sake: run 0 the base point,
// which repeats grid run 3.
SweepCalibration synthetic_sweep(bool lossless) {
  SweepCalibration s;
  s.provenance = test::fake_provenance("sweep");
  s.family = "pld";
  s.lossless = lossless;
  s.grid = {{"tokens", {5, 10, 20}, {"5", "10", "20"}}, {"match", {0, 1}, {"earliest", "latest"}}};
  s.planned_runs = 7;
  s.confidence = 0;  // the point-estimate rule (version 3), which the runs below are built around
  //                        index values   point                        speedup nll   chrF
  s.runs.push_back(sweep_run(0, {10, 0}, "tokens=10 match=earliest", 1.20, 2.00, 100));
  s.runs.push_back(sweep_run(1, {5, 0}, "tokens=5 match=earliest", 1.10, 2.01, 95));
  s.runs.push_back(sweep_run(2, {5, 1}, "tokens=5 match=latest", 1.50, 2.10, 97));     // fastest, NLL +0.10
  s.runs.push_back(sweep_run(3, {10, 0}, "tokens=10 match=earliest", 1.22, 2.00, 100));
  s.runs.push_back(sweep_run(4, {10, 1}, "tokens=10 match=latest", 1.30, 2.05, 92));   // NLL +0.05: on the bound
  s.runs.push_back(sweep_run(5, {20, 0}, "tokens=20 match=earliest", 0.90, 2.00, 85));  // slowest; chrF below 90
  s.runs.push_back(sweep_run(6, {20, 1}, "tokens=20 match=latest", 1.40, 2.02, 80));   // chrF below 90
  return s;
}

}  // namespace

TEST_CASE("report sweep: chosen, fastest, default and slowest match the choice rule and a scan of the runs", "[report][sweep]") {
  for (const bool lossless : {false, true}) {
    CAPTURE(lossless);
    report::ReportInputs in;
    in.artifact = test::synthetic_artifact();
    SweepCalibration sweep = synthetic_sweep(lossless);
    const SweepChoice choice = apply_sweep_choice(in.artifact, sweep);
    REQUIRE(choice.run);
    CHECK(*choice.run == (lossless ? 2 : 4));
    in.artifact.sweeps.push_back(sweep);
    const Section s = report::sweeps_section(in);
    CHECK(paragraphs(s.blocks, Tone::Flag).empty());  // the stored choice is the recomputed one

    const Table& roles = table_starting(s.blocks, "Chosen, fastest, default (run 0) and slowest run");
    std::map<std::string, json> by_role;
    for (const json& row : roles.rows) by_role[row["role"]] = row;
    const SweepRun* fastest = &sweep.runs[0];
    const SweepRun* slowest = &sweep.runs[0];
    for (const SweepRun& r : sweep.runs) {
      if (r.overall().speedup > fastest->overall().speedup) fastest = &r;
      if (r.overall().speedup < slowest->overall().speedup) slowest = &r;
    }
    CHECK(by_role["chosen"]["run"] == *choice.run);
    CHECK(by_role["fastest"]["run"] == fastest->index);
    CHECK(by_role["default (run 0)"]["run"] == 0);
    CHECK(by_role["slowest"]["run"] == slowest->index);
    CHECK(by_role["chosen"]["speedup_low"].get<double>() == Approx(sweep.runs[*choice.run].overall().speedup - 0.0625));
    CHECK(by_role["fastest"]["within_bounds"] == (lossless ? "yes" : "no"));

    // The frontier holds every run, the chosen one marked, each as the stored numbers.
    const Table& frontier = table_starting(s.blocks, "Every run");
    REQUIRE(frontier.rows.size() == sweep.runs.size());
    for (size_t i = 0; i < sweep.runs.size(); ++i) {
      const SweepStats& o = sweep.runs[i].overall();
      CHECK(frontier.rows[i]["run"] == sweep.runs[i].index);
      CHECK(frontier.rows[i]["speedup"].get<double>() == o.speedup);
      CHECK(frontier.rows[i]["nll_increase"].get<double>() == Approx(o.nll_per_token - o.ar_nll_per_token));
      CHECK(frontier.rows[i]["chrf_loss"].get<double>() == Approx(100 - o.chrf_vs_ar));
      CHECK(frontier.rows[i]["status"] == (sweep.runs[i].index == *choice.run ? "chosen"
                                           : sweep_run_within_bounds(sweep, sweep.runs[i]) ? "within bounds" : "outside bounds"));
    }
    // Lossy at T = 0: a frontier against NLL and one against chrF, each with its bound; lossless: one, no bound.
    int frontiers = 0;
    for (const Chart* c : charts(s.blocks))
      if (c->table.caption == "Every run: speed against drift") {
        ++frontiers;
        CHECK((c->spec.dump().find("datum") != std::string::npos) == !lossless);
      }
    CHECK(frontiers == (lossless ? 1 : 2));

    // Sensitivity to tokens at the chosen run's match; run 0 repeats run 3 and is left out.
    const Table& tokens = table_starting(s.blocks, "Sensitivity to tokens");
    std::vector<int32_t> runs;
    for (const json& row : tokens.rows) runs.push_back(row["run"]);
    CHECK(runs == std::vector<int32_t>{2, 4, 6});
    const Table& matches = table_starting(s.blocks, "Sensitivity to match");
    runs.clear();
    for (const json& row : matches.rows) runs.push_back(row["run"]);
    CHECK(runs == (lossless ? std::vector<int32_t>{1, 2} : std::vector<int32_t>{3, 4}));
    CHECK(matches.rows[0]["value_text"] == "earliest");

    const Table& categories = table_starting(s.blocks, "The chosen run");
    REQUIRE(categories.rows.size() == 3);
    CHECK(categories.rows[2]["category"] == "overall");
  }
}

TEST_CASE("report sweep: a chosen base point stays in its sensitivity slices, its grid twin gives the noise", "[report][sweep]") {
  report::ReportInputs in;
  in.artifact = test::synthetic_artifact();
  SweepCalibration sweep = synthetic_sweep(true);
  sweep.runs[0].stats.back().speedup = 2.0;  // run 0 (tokens=10 match=earliest), repeated by run 3, is the fastest
  REQUIRE(*apply_sweep_choice(in.artifact, sweep).run == 0);
  in.artifact.sweeps.push_back(sweep);
  const Section s = report::sweeps_section(in);
  std::vector<int32_t> runs;
  for (const json& row : table_starting(s.blocks, "Sensitivity to match").rows) runs.push_back(row["run"]);
  CHECK(runs == std::vector<int32_t>{0, 4});  // not run 3, the same point
  runs.clear();
  for (const json& row : table_starting(s.blocks, "Sensitivity to tokens").rows) runs.push_back(row["run"]);
  CHECK(runs == std::vector<int32_t>{1, 0, 5});
  CHECK(mentions(s.blocks, "Run 0 and run 3 measured the same point (tokens=10 match=earliest): speedup 2.000x and 1.220x"));
}

TEST_CASE("report sweep: a stored choice that the runs do not give is flagged, no sweep says not calibrated", "[report][sweep]") {
  report::ReportInputs in;
  in.artifact = test::synthetic_artifact();
  const auto lines = paragraphs(report::sweeps_section(in).blocks, Tone::NotCalibrated);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind("not calibrated: run specd calibrate sweep --policy P", 0) == 0);

  SweepCalibration sweep = synthetic_sweep(true);
  apply_sweep_choice(in.artifact, sweep);
  sweep.chosen = 1;  // edited by hand
  in.artifact.sweeps.push_back(sweep);
  const auto flags = paragraphs(report::sweeps_section(in).blocks, Tone::Flag);
  REQUIRE(flags.size() == 1);
  CHECK(flags[0].find("run 2") != std::string::npos);
}

}  // namespace specd
