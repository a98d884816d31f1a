// Inputs for the report's browser test (tests/report.cmake), written into DIR:
//   full/          an artifact with every calibration: csd, sam_corpus, arc (samples, fitted
//                  constants, held-out audit) and a pld sweep with its runs and chosen run;
//   csd-only/      the same pair with csd alone (the other sections must say "not calibrated");
//   traces.sqlite  deploy traces: runs ar, csd and arc over a few requests, with rescued and
//                  relaxed steps and ARC's pruning and "acceptance"/"lts" detail;
//   bench.json     a bench result shaped as specd bench --json writes it;
//   sample/        report.html and report.md of the renderers' hand-made report (several charts,
//                  text that needs escaping), so the renderer is checked in a browser on its own.
// usage: make_report_fixture DIR
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/report_document.h"
#include "artifact_fixtures.h"
#include "calibrate/sweep_choice.h"
#include "io/remove_tree.h"
#include "report_samples.h"
#include "trace/trace_sink.h"

namespace specd {
namespace {

using nlohmann::json;

SweepRun sweep_run(int32_t index, std::vector<double> values, std::string point, double speedup, double nll, double chrf) {
  SweepRun r;
  r.index = index;
  r.values = std::move(values);
  r.point = std::move(point);
  for (const char* category : {"code", "math", "qa", "overall"}) {
    const bool overall = category == std::string("overall");
    SweepStats s;
    s.category = category;
    s.prompts = overall ? 9 : 3;
    s.new_tokens = 64 * s.prompts;
    s.equal_to_ar = chrf == 100 ? s.prompts : 1;
    s.mat = 1.4 + index * 0.125;
    s.acceptance = 0.3 + index / 32.0;
    s.ar_tokens_per_s = 100;
    s.speedup = speedup + (overall ? 0 : 0.02 * s.category.size() - 0.08);
    s.speedup_ci95 = 0.04;
    s.tokens_per_s = 100 * s.speedup;
    s.decode_speedup = s.speedup * 1.1;
    s.nll_per_token = nll;
    s.ar_nll_per_token = 2.0;
    s.chrf_vs_ar = chrf;
    r.stats.push_back(s);
  }
  r.cost_curve = {{1, 2.5}, {2, 2.75}, {4, 3.0}};
  r.wall_s = 1.5 * (index + 1);
  return r;
}

// pld over tokens x match, lossless: run 0 the base point, runs 1..4 the grid.
SweepCalibration pld_sweep() {
  SweepCalibration s;
  s.provenance = test::fake_provenance("sweep");
  s.provenance.options = {{"family", "pld"}, {"grid", {{"tokens", {"5", "10"}}, {"match", {"earliest", "latest"}}}}, {"repeats", 1}};
  s.family = "pld";
  s.lossless = true;
  s.grid = {{"tokens", {5, 10}, {"5", "10"}}, {"match", {0, 1}, {"earliest", "latest"}}};
  s.planned_runs = 5;
  s.runs.push_back(sweep_run(0, {10, 0}, "tokens=10 match=earliest", 1.20, 2.0, 100));
  s.runs.push_back(sweep_run(1, {5, 0}, "tokens=5 match=earliest", 1.10, 2.0, 100));
  s.runs.push_back(sweep_run(2, {5, 1}, "tokens=5 match=latest", 1.45, 2.0, 100));
  s.runs.push_back(sweep_run(3, {10, 0}, "tokens=10 match=earliest", 1.25, 2.0, 100));
  s.runs.push_back(sweep_run(4, {10, 1}, "tokens=10 match=latest", 1.30, 2.0, 100));
  s.provenance.counts = derived_counts(s);
  return s;
}

Artifact full_artifact() {
  Artifact a = test::synthetic_artifact(/*prompts=*/30);
  if (!a.arc || a.arc->constants.empty() || a.arc->audit.empty()) throw std::runtime_error("fixture: ARC left unfitted");
  a.sweeps.push_back(pld_sweep());
  apply_sweep_choice(a, a.sweeps.back());
  return a;
}

Artifact csd_only_artifact() {
  Artifact a = test::synthetic_artifact(/*prompts=*/30);
  a.sam_corpus.reset();
  a.arc.reset();
  a.sweeps.clear();
  return a;
}

RunInfo run_info(const std::string& method, const std::string& options) {
  RunInfo run;
  run.command_line = "specd bench --methods ar,csd,arc --traces traces.sqlite";
  run.target_model = "models/target";
  run.draft_model = method == "ar" ? "" : "models/draft";
  run.method = method;
  run.options_json = options;
  run.specd_version = "0.1.0";
  run.specd_commit = std::string(40, 'a');
  return run;
}

// One step of `method` at step s of a request: CSD rescues now and then, ARC relaxes now and then
// and reports its pruning and per-node LTS scores, as the real acceptors do.
StepTrace step_of(const std::string& method, int request, int s, std::mt19937& rng) {
  StepTrace t;
  t.root_entropy = static_cast<double>(rng() % 1000) / 400.0;
  t.draft_ms = method == "ar" ? 0 : 0.5 + (rng() % 100) / 100.0;
  t.verify_ms = 2.0 + (rng() % 100) / 50.0;
  t.accept_ms = 0.05;
  if (method == "ar") {
    t.drafter = "none";
    return t;
  }
  t.drafter = method == "arc" ? "draft-tree" : "draft-model";
  t.draft_size = method == "arc" ? 8 : 4;
  t.accepted_length = static_cast<int32_t>(rng() % 5);
  std::vector<char> verdicts(static_cast<size_t>(t.accepted_length), 'A');
  if (t.accepted_length > 0 && (request + s) % 3 == 0) {
    verdicts.back() = method == "csd" ? 'C' : 'X';
    (method == "csd" ? t.rescued : t.relaxed) = 1;
    t.lossless = false;
    t.decision_scores = method == "csd" ? "[-0.75]" : "[1]";
  }
  for (int32_t i = 0; i < t.accepted_length; ++i) {
    t.accepted_sources += (i ? ",M" : "M");
    if (!t.lossless) t.accepted_verdicts += std::string(i ? "," : "") + verdicts[static_cast<size_t>(i)];
  }
  if (method == "arc") {
    t.pruned = static_cast<int32_t>(rng() % 3);
    ArcAcceptance arc;
    for (int32_t depth = 1; depth <= t.accepted_length + 1 && depth <= 5; ++depth) {
      const double u_emb = (rng() % 1000) / 2000.0, u_logit = (rng() % 1000) / 4000.0;
      const bool relaxed = t.relaxed && depth == t.accepted_length;
      arc.lts.push_back(LtsNode{depth, depth, 30 + depth, relaxed ? 40 : 30 + depth, u_emb, u_logit, 1.0 - u_emb - u_logit, relaxed});
    }
    t.detail.pruning = PruningDetail{"arc", *t.root_entropy / 10.0, t.draft_size + t.pruned, t.draft_size};
    t.detail.acceptance = arc;
  }
  return t;
}

void write_traces(const std::string& path) {
  std::filesystem::remove(path);
  SqliteTraceSink sink(path);
  std::mt19937 rng(11);
  const char* categories[] = {"code", "math", "qa"};
  for (const std::string method : {"ar", "csd", "arc"}) {
    const std::string options = json{{"temperature", method == "arc" ? 1.0 : 0.0}, {"gamma", 4}, {"artifact", "full"},
                                     {"arc-theta", 0.3}, {"max-prompts", 6}}.dump();
    const int run = sink.add_run(run_info(method, options));
    for (int r = 0; r < 6; ++r) {
      RequestRecord record;
      record.info = {r, "item-" + std::to_string(r), categories[r % 3], 40 + r};
      for (int s = 0; s < 8; ++s) record.steps.push_back(step_of(method, r, s, rng));
      for (const StepTrace& t : record.steps)
        for (int32_t k = 0; k <= t.accepted_length; ++k) record.outcome.output_tokens.push_back(30 + k);
      record.outcome.wall_ms = 20.0 + r;
      sink.write_request(run, record);
    }
    sink.finish_run(run);
  }
}

void write_bench(const std::string& path) {
  json results = json::object();
  const char* categories[] = {"code", "math", "qa", "overall"};
  for (const std::string method : {"ar", "csd", "arc"}) {
    const double speedup = method == "ar" ? 1.0 : method == "csd" ? 1.35 : 1.6;
    for (const char* category : categories) {
      const bool ar = method == "ar";
      results[method][category] = {
          {"acceptance_rate", ar ? 0.0 : 0.55}, {"chrf", ar ? 100.0 : 93.5}, {"chrf_turns", 3},
          {"decode_speedup", speedup * 1.05}, {"mat", ar ? 1.0 : 2.4}, {"new_tokens", 384}, {"nll_per_token", ar ? 2.0 : 2.03},
          {"prompts", std::string(category) == "overall" ? 6 : 2}, {"relaxed_per_token", method == "arc" ? 0.04 : 0.0},
          {"rescued_per_token", method == "csd" ? 0.03 : 0.0}, {"speedup", speedup}, {"speedup_ci95", ar ? 0.0 : 0.06},
          {"tokens_per_s", 100.0 * speedup}};
    }
  }
  const json bench = {{"artifact", "full"}, {"blas_threads", 2}, {"draft_budget", "auto"},
                      {"draft_forward_ms", {{{"ms", 0.03}, {"tokens", 1}}, {{"ms", 0.05}, {"tokens", 2}}}},
                      {"draft_ms_per_drafted_token", 0.03}, {"lossless", {{"ar", true}, {"csd", false}, {"arc", false}}},
                      {"machine", {{"cpu", "AMD EPYC 9B14"}, {"features", {"avx2", "fma", "avx512f", "avx512_bf16"}}, {"cache_level", 3},
                                   {"cache_bytes", 33554432}, {"threads", 2}, {"device", "cpu"}}},
                      {"max_prompts", 6}, {"repeats", 1}, {"results", results},
                      {"target_forward_ms", {{{"ms", 2.5}, {"tokens", 1}}, {{"ms", 2.75}, {"tokens", 2}}}}, {"temperature", 0.0}};
  std::ofstream(path) << bench.dump(1) << "\n";
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) throw std::runtime_error(path + ": cannot write");
}

}  // namespace
}  // namespace specd

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_report_fixture DIR\n");
    return 2;
  }
  try {
    const std::string dir = argv[1];
    specd::remove_tree(dir);
    std::filesystem::create_directories(dir + "/sample");
    specd::write_artifact(dir + "/full", specd::full_artifact());
    specd::write_artifact(dir + "/csd-only", specd::csd_only_artifact());
    specd::write_traces(dir + "/traces.sqlite");
    specd::write_bench(dir + "/bench.json");
    const specd::report::Report sample = specd::test::sample_report();
    specd::write_text(dir + "/sample/report.html", specd::report::render_html(sample));
    specd::write_text(dir + "/sample/report.md", specd::report::render_markdown(sample));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_report_fixture: %s\n", e.what());
    return 1;
  }
  return 0;
}
