#include "artifact_diff.h"

#include <map>
#include <tuple>

#include "artifact/manifest.h"
#include "calibrate/artifact_merge.h"

namespace specd {
namespace {

using Lines = std::vector<std::string>;

void value(Lines& out, const std::string& name, const nlohmann::json& a, const nlohmann::json& b) {
  if (a != b) out.push_back(name + ": " + a.dump() + " vs " + b.dump());
}

template <typename T, typename Same>
void rows(Lines& out, const std::string& name, const std::vector<T>& a, const std::vector<T>& b, Same same) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && same(a[i], b[i])) ++i;
  if (i == a.size() && i == b.size()) return;
  out.push_back(name + ": " + std::to_string(a.size()) + " rows vs " + std::to_string(b.size()) + ", first difference at row " +
                std::to_string(i));
}

template <typename T>
void rows(Lines& out, const std::string& name, const std::vector<T>& a, const std::vector<T>& b) {
  rows(out, name, a, b, [](const T& x, const T& y) { return x == y; });
}

// The settings and totals a rerun keeps (not where or when it ran).
nlohmann::json settings(const CalibrationProvenance& p) {
  nlohmann::json kept = calibration_settings(p);
  kept["counts"] = p.counts;
  return kept;
}

// A sweep run's columns that do not depend on the machine's speed.
auto measured_quality(const SweepStats& s) {
  return std::tie(s.category, s.prompts, s.new_tokens, s.equal_to_ar, s.mat, s.acceptance, s.relaxed_per_token, s.rescued_per_token,
                  s.nll_per_token, s.ar_nll_per_token, s.chrf_vs_ar);
}

bool same_run(const SweepRun& a, const SweepRun& b) {
  if (std::tie(a.index, a.values, a.point) != std::tie(b.index, b.values, b.point) || a.stats.size() != b.stats.size()) return false;
  for (size_t i = 0; i < a.stats.size(); ++i)
    if (measured_quality(a.stats[i]) != measured_quality(b.stats[i])) return false;
  return true;
}

// Both present: compare with `each`; one present: say which.
template <typename T, typename Each>
void part(Lines& out, const std::string& name, const std::optional<T>& a, const std::optional<T>& b, Each each) {
  if (a && b) each(*a, *b);
  else if (a || b) out.push_back(name + ": only in the " + (a ? "first" : "second"));
}

}  // namespace

std::vector<std::string> artifact_differences(const Artifact& a, const Artifact& b) {
  Lines out;
  value(out, "pair.target", portable_fingerprint(a.target), portable_fingerprint(b.target));
  value(out, "pair.draft", portable_fingerprint(a.draft), portable_fingerprint(b.draft));
  part(out, "csd", a.csd, b.csd, [&](const CsdCalibration& x, const CsdCalibration& y) {
    value(out, "csd.settings", settings(x.provenance), settings(y.provenance));
    rows(out, "csd.prompts", x.prompts, y.prompts);
    rows(out, "csd.rejections", x.rejections, y.rejections);
    rows(out, "csd.pairs", x.pairs, y.pairs);
  });
  part(out, "sam_corpus", a.sam_corpus, b.sam_corpus, [&](const SamCorpusCalibration& x, const SamCorpusCalibration& y) {
    value(out, "sam_corpus.settings", settings(x.provenance), settings(y.provenance));
    rows(out, "sam_corpus.prompts", x.prompts, y.prompts);
    rows(out, "sam_corpus.documents", x.documents, y.documents);
  });
  part(out, "arc", a.arc, b.arc, [&](const ArcCalibration& x, const ArcCalibration& y) {
    value(out, "arc.settings", settings(x.provenance), settings(y.provenance));
    value(out, "arc.parameters", {x.delta, x.top_k, x.mu, x.epsilon}, {y.delta, y.top_k, y.mu, y.epsilon});
    rows(out, "arc.prompts", x.prompts, y.prompts);
    rows(out, "arc.whitening", x.whitening, y.whitening);
    rows(out, "arc.samples", x.samples, y.samples);
    rows(out, "arc.constants", x.constants, y.constants);
    rows(out, "arc.audit", x.audit, y.audit);
    rows(out, "arc.gate", x.gate, y.gate);
  });
  std::map<std::string, const SweepCalibration*> sweeps_a, sweeps_b;
  for (const SweepCalibration& s : a.sweeps) sweeps_a[s.family] = &s;
  for (const SweepCalibration& s : b.sweeps) sweeps_b[s.family] = &s;
  for (const auto& [family, x] : sweeps_a)
    if (!sweeps_b.count(family)) out.push_back("sweep." + family + ": only in the first");
  for (const auto& [family, y] : sweeps_b) {
    if (!sweeps_a.count(family)) {
      out.push_back("sweep." + family + ": only in the second");
      continue;
    }
    const SweepCalibration& x = *sweeps_a.at(family);
    const std::string name = "sweep." + family;
    value(out, name + ".settings", settings(x.provenance), settings(y->provenance));
    value(out, name + ".bounds", {x.lossless, x.max_nll_increase, x.min_chrf, x.max_changed, x.confidence, x.planned_runs},
          {y->lossless, y->max_nll_increase, y->min_chrf, y->max_changed, y->confidence, y->planned_runs});
    rows(out, name + ".grid", x.grid, y->grid);
    rows(out, name + ".runs", x.runs, y->runs, same_run);
  }
  // Thresholds a sweep chose follow its timings; the others are the calibrations' own.
  auto calibrated = [](const std::vector<Threshold>& all) {
    std::vector<Threshold> kept;
    for (const Threshold& t : all)
      if (t.source.rfind("sweep ", 0) != 0) kept.push_back(t);
    return kept;
  };
  rows(out, "thresholds", calibrated(a.thresholds), calibrated(b.thresholds));
  return out;
}

}  // namespace specd
