#include "artifact/artifact_summary.h"

#include <cstdio>

#include "artifact/csd_pairs.h"
#include "artifact/manifest.h"
#include "util/machine.h"

namespace specd {

using nlohmann::json;

namespace {

std::string short_hash(const json& hash) { return hash.get<std::string>().substr(0, 12); }

void print_model(std::ostream& out, const char* role, const json& model) {
  out << "  " << role << ": ";
  if (model.is_null()) {
    out << "none (model-free pair)\n";
    return;
  }
  out << model["path"].get<std::string>() << "  vocab " << model["vocab_size"] << ", config " << short_hash(model["config_sha256"])
      << ", tokenizer " << short_hash(model["tokenizer_sha256"]) << ", embedding " << short_hash(model["embedding_sha256"]) << "\n";
}

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string general(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

// " (slurm job 41, task 2)" for a shard a scheduler ran, else "".
std::string job_text(const json& shard) {
  if (!shard.contains("job")) return "";
  const json& job = shard["job"];
  return " (" + job["scheduler"].get<std::string>() + " job " + job["job_id"].get<std::string>() + ", task " +
         job["task_id"].get<std::string>() + ")";
}

// "12.3 s, 87.8 prompts/min on AMD EPYC 9B14, 32 MiB L3, 2 threads": a calibration's decoding
// time, its throughput in prompts and the machine (from version 6).
std::string time_text(const json& c) {
  const double wall_s = c["wall_s"].get<double>();
  std::string text = fixed(wall_s, 1) + " s";
  if (c["counts"].contains("prompts") && wall_s > 0)
    text += ", " + fixed(60 * c["counts"]["prompts"].get<double>() / wall_s, 1) + " prompts/min";
  const std::string machine = machine_text(c.value("machine", json()));
  if (!machine.empty()) text += " on " + machine;
  return text;
}

// Which shard this is, or the shards it was merged from with each one's time, counts and job.
void print_shards(std::ostream& out, const json& c) {
  if (!c.contains("shards")) {
    out << "  shard " << c["shard"]["index"] << " of " << c["shard"]["count"] << job_text(c["shard"]) << "\n";
    return;
  }
  out << "  merged from " << c["shards"].size() << " shards (shard: decoding time, counts):";
  for (const json& s : c["shards"]) {
    out << "\n    " << s["shard"]["index"] << ": " << time_text(s) << ",";
    for (const auto& [key, value] : s["counts"].items()) out << " " << key << " " << value.dump();
    out << job_text(s["shard"]);
  }
  out << "\n";
}

// ARC's settings, constants per bucket and held-out audit (the paper's Table 5).
void print_arc(std::ostream& out, const json& c) {
  out << "  delta " << general(c["delta"].get<double>()) << ", K " << c["top_k"] << ", mu " << general(c["mu"].get<double>())
      << ", epsilon " << general(c["epsilon"].get<double>()) << "\n";
  out << "  constants (bucket: samples, rank, c'_s, alpha kappa, tau_delta):" << (c["buckets"].empty() ? " none fitted" : "");
  for (const json& b : c["buckets"])
    out << "\n    " << b["bucket"].get<std::string>() << ": " << b["samples"] << ", " << b["rank"] << ", "
        << general(b["c_s"].get<double>()) << ", " << general(b["alpha_kappa"].get<double>()) << ", "
        << general(b["tau_delta"].get<double>());
  out << "\n  held-out coverage of JS <= U_min (group: covered/samples, coverage, Wilson 95%, Clopper-Pearson 95%):"
      << (c["audit"].empty() ? " none" : "");
  for (const json& r : c["audit"]) {
    const std::string kind = r["group_kind"];
    out << "\n    " << (kind == "all" ? std::string("all") : kind + " " + r["group"].get<std::string>()) << ": " << r["covered"] << "/"
        << r["samples"] << ", " << fixed(r["coverage"].get<double>(), 4) << ", [" << fixed(r["wilson_low"].get<double>(), 4) << ", "
        << fixed(r["wilson_high"].get<double>(), 4) << "], [" << fixed(r["cp_low"].get<double>(), 4) << ", "
        << fixed(r["cp_high"].get<double>(), 4) << "]";
  }
  if (c.contains("gate") && !c["gate"].empty()) {
    out << "\n  gate on deploy sites (theta: prompts, sites, relaxed t_d != t_m, t_d = t_m, misses, risk, one-sided high, p-value):";
    for (const json& r : c["gate"])
      out << "\n    " << general(r["theta"].get<double>()) << ": " << r["prompts"] << ", " << r["sites"] << ", " << r["relaxed"] << ", "
          << r["relaxed_argmax"] << ", " << r["misses"] << ", " << fixed(r["risk"].get<double>(), 4) << ", "
          << fixed(r["risk_high"].get<double>(), 4) << ", " << general(r["p_value"].get<double>()) << (r["valid"].get<bool>() ? ", valid" : "");
  }
  out << "\n";
}

void print_calibration(std::ostream& out, const std::string& name, const json& c) {
  out << name << ":\n  counts:";
  for (const auto& [key, value] : c["counts"].items()) out << " " << key << " " << value.dump();
  out << "\n  made by: " << c["command_line"].get<std::string>() << "\n";
  out << "  prompts: " << c["prompts"]["path"].get<std::string>() << " (" << c["prompts"]["count"] << " prompts, sha256 "
      << short_hash(c["prompts"]["sha256"]) << ")\n";
  out << "  seed " << c["seed"] << ", temperature " << c["sampling"]["temperature"] << ", top_k " << c["sampling"]["top_k"]
      << ", top_p " << c["sampling"]["top_p"] << ", options " << c["options"].dump() << "\n";
  out << "  decoding time: " << time_text(c) << (c.contains("shards") ? " over all shards" : "") << "\n";
  print_shards(out, c);
  if (c.contains("audit")) print_arc(out, c);
  if (!c.contains("top_pairs")) return;
  char shares[64];
  std::snprintf(shares, sizeof shares, "%.1f%% / %.1f%%", 100 * c["pareto"]["top_10"].get<double>(),
                100 * c["pareto"]["top_20"].get<double>());
  out << "  pareto: the top 10% / 20% of pairs cover " << shares << " of the rejections\n";
  out << "  top pairs (draft id -> target id: count, median logit gap in nats):";
  for (const json& p : c["top_pairs"]) {
    char gap[32];
    std::snprintf(gap, sizeof gap, "%.2f", p["gap_median"].get<double>());
    out << "\n    " << p["draft_token"] << " -> " << p["target_token"] << ": " << p["count"] << ", " << gap;
  }
  out << "\n";
}

// A sweep: its grid, bounds and every run's overall row, the chosen one marked.
void print_sweep(std::ostream& out, const std::string& family, const json& c) {
  out << "sweep " << family << (c["lossless"].get<bool>() ? " (lossless)" : " (lossy)") << ":\n  grid:";
  for (const json& axis : c["grid"]) {
    out << " " << axis["name"].get<std::string>() << "=";
    std::string values;
    for (const json& t : axis["texts"]) values += (values.empty() ? "" : ",") + t.get<std::string>();
    out << values;
  }
  out << "; " << c["counts"]["runs"] << " of " << c["planned_runs"] << " runs";
  out << "\n  made by: " << c["command_line"].get<std::string>() << "\n";
  const std::string machine = machine_text(c.value("machine", json()));
  if (!machine.empty()) out << "  measured on: " << machine << " (its speedups are this machine's)\n";
  if (c.contains("shards") || c["shard"]["count"].get<int64_t>() > 1) print_shards(out, c);
  out << "  prompts: " << c["prompts"]["path"].get<std::string>() << " (" << c["prompts"]["count"] << "), temperature "
      << c["sampling"]["temperature"] << ", bounds: NLL +" << general(c["bounds"]["max_nll_increase"].get<double>()) << ", chrF >= "
      << general(c["bounds"]["min_chrf"].get<double>()) << ", changed <= " << general(c["bounds"]["max_changed"].get<double>())
      << ", confidence " << general(c["bounds"]["confidence"].get<double>()) << "\n";
  out << "  runs (point: MAT, acceptance, speedup +- 95%, NLL delta, chrF vs AR):";
  for (const json& r : c["runs"])
    out << "\n    " << (c["chosen"] == r["index"] ? "* " : "  ") << r["index"] << " " << r["point"].get<std::string>() << ": "
        << fixed(r["mat"].get<double>(), 2) << ", " << fixed(r["acceptance"].get<double>(), 3) << ", " << fixed(r["speedup"].get<double>(), 2)
        << "x +- " << fixed(r["speedup_ci95"].get<double>(), 2) << ", " << fixed(r["nll_delta"].get<double>(), 4) << ", "
        << fixed(r["chrf_vs_ar"].get<double>(), 1);
  out << "\n  chosen: " << (c["chosen"].is_null() ? std::string("none") : "run " + c["chosen"].dump()) << " (" << c["choice"].get<std::string>()
      << ")\n";
}

}  // namespace

json artifact_summary(const std::string& dir, const Artifact& artifact, size_t top_pairs) {
  json summary = manifest_json(artifact, {});
  summary.erase("files");
  summary["dir"] = dir;
  json& calibrations = summary["calibrations"];
  if (artifact.csd) {
    json pairs = json::array();
    for (size_t i = 0; i < std::min(top_pairs, artifact.csd->pairs.size()); ++i) {
      const CsdPair& p = artifact.csd->pairs[i];
      pairs.push_back({{"draft_token", p.draft_token}, {"target_token", p.target_token}, {"count", p.count}, {"gap_mean", p.gap_mean},
                       {"gap_min", p.gap_min}, {"gap_p10", p.gap_p10}, {"gap_median", p.gap_median}, {"gap_p90", p.gap_p90},
                       {"gap_max", p.gap_max}});
    }
    calibrations[kCsdPolicy]["top_pairs"] = pairs;
    calibrations[kCsdPolicy]["pareto"] = {{"top_10", pareto_share(artifact.csd->pairs, 0.1)},
                                          {"top_20", pareto_share(artifact.csd->pairs, 0.2)}};
  }
  if (artifact.arc) {
    json buckets = json::array();
    for (const ArcConstants& c : artifact.arc->constants) buckets.push_back(arc_constants_json(c));
    json audit = json::array();
    for (const ArcAuditRow& r : artifact.arc->audit)
      audit.push_back({{"group_kind", r.group_kind}, {"group", r.group}, {"samples", r.samples}, {"covered", r.covered},
                       {"coverage", r.coverage}, {"wilson_low", r.wilson_low}, {"wilson_high", r.wilson_high}, {"cp_low", r.cp_low},
                       {"cp_high", r.cp_high}});
    calibrations[kArcPolicy]["buckets"] = buckets;
    calibrations[kArcPolicy]["audit"] = audit;
    json gate = json::array();
    for (const ArcGateRow& r : artifact.arc->gate)
      gate.push_back({{"theta", r.theta}, {"prompts", r.prompts}, {"sites", r.sites}, {"relaxed", r.relaxed},
                      {"relaxed_argmax", r.relaxed_argmax}, {"misses", r.misses}, {"risk", r.risk}, {"risk_high", r.risk_high},
                      {"p_value", r.p_value}, {"valid", r.valid}});
    calibrations[kArcPolicy]["gate"] = gate;
    calibrations[kArcPolicy]["whitening_size"] = artifact.arc->whitening.size();
  }
  for (const SweepCalibration& sweep : artifact.sweeps) {
    json runs = json::array();
    for (const SweepRun& r : sweep.runs) {
      const SweepStats& o = r.overall();
      runs.push_back({{"index", r.index}, {"point", r.point}, {"mat", o.mat}, {"acceptance", o.acceptance}, {"speedup", o.speedup},
                      {"speedup_ci95", o.speedup_ci95}, {"nll_delta", o.nll_per_token - o.ar_nll_per_token}, {"chrf_vs_ar", o.chrf_vs_ar},
                      {"equal_to_ar", o.equal_to_ar}, {"prompts", o.prompts}});
    }
    calibrations[kSweepCalibration][sweep.family]["runs"] = runs;
  }
  json thresholds = json::array();
  for (const Threshold& t : artifact.thresholds)
    thresholds.push_back({{"policy", t.policy}, {"name", t.name}, {"value", t.value}, {"source", t.source}});
  summary["thresholds"] = thresholds;
  return summary;
}

void print_artifact_summary(std::ostream& out, const json& s) {
  out << s["dir"].get<std::string>() << ": specd artifact, schema version " << s["schema_version"] << "\n";
  out << "made " << s["created_at"].get<std::string>() << " by specd " << s["tool"]["version"].get<std::string>() << " (commit "
      << s["tool"]["git_commit"].get<std::string>().substr(0, 12) << ")\n";
  out << "pair:\n";
  print_model(out, "target", s["pair"]["target"]);
  print_model(out, "draft", s["pair"]["draft"]);
  if (s["calibrations"].empty()) out << "no calibrations\n";
  for (const auto& [name, calibration] : s["calibrations"].items()) {
    if (name != kSweepCalibration) print_calibration(out, name, calibration);
    else
      for (const auto& [family, sweep] : calibration.items()) print_sweep(out, family, sweep);
  }
  out << "thresholds:" << (s["thresholds"].empty() ? " none" : "") << "\n";
  for (const json& t : s["thresholds"])
    out << "  " << t["policy"].get<std::string>() << "." << t["name"].get<std::string>() << " = " << t["value"] << " ("
        << t["source"].get<std::string>() << ")\n";
}

std::string artifact_contents_line(const Artifact& a) {
  std::string line;
  if (a.csd)
    line += "csd: " + std::to_string(a.csd->prompts.size()) + " prompts, " + std::to_string(a.csd->rejections.size()) +
            " rejections, " + std::to_string(a.csd->pairs.size()) + " pairs";
  if (a.sam_corpus) {
    size_t tokens = 0;
    for (const auto& d : a.sam_corpus->documents) tokens += d.size();
    line += std::string(line.empty() ? "" : "; ") + "sam_corpus: " + std::to_string(a.sam_corpus->documents.size()) +
            " documents, " + std::to_string(tokens) + " tokens";
  }
  if (a.arc) {
    size_t held_out = 0, deploy_sites = 0;
    for (const ArcSample& x : a.arc->samples) held_out += x.held_out, deploy_sites += x.deploy_site;
    line += std::string(line.empty() ? "" : "; ") + "arc: " + std::to_string(a.arc->prompts.size()) + " prompts, " +
            std::to_string(a.arc->samples.size() - held_out - deploy_sites) + " calibration samples, " + std::to_string(held_out) +
            " held-out samples, " + (deploy_sites ? std::to_string(deploy_sites) + " deploy-site samples, " : std::string()) +
            std::to_string(a.arc->constants.size()) + " buckets";
  }
  for (const SweepCalibration& sweep : a.sweeps)
    line += std::string(line.empty() ? "" : "; ") + "sweep " + sweep.family + ": " + std::to_string(sweep.runs.size()) + " of " +
            std::to_string(sweep.planned_runs) + " runs, " + (sweep.chosen ? "chosen run " + std::to_string(*sweep.chosen) : std::string("none chosen"));
  return line.empty() ? "no calibrations" : line;
}

}  // namespace specd
