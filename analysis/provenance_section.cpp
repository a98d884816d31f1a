// 1. The pair and its provenance: the models' fingerprints, the tool that wrote the artifact,
// artifact verify's verdict, how each calibration was made, and the thresholds deployed.
#include <string>
#include <utility>
#include <vector>

#include "analysis/sections.h"
#include "io/output_path.h"
#include "util/machine.h"

namespace specd::report {
namespace {

// Enough of a sha256 to tell two apart by eye; the manifest holds the whole.
std::string short_sha(const std::string& sha) { return sha.size() > 12 ? sha.substr(0, 12) : sha; }

Table pair_table(const Artifact& a) {
  Table t{"The pair's fingerprints (sha256 shortened to 12 hex digits; path: where the model was when calibrated)",
          {{"role", "model"},
           {"path", "path"},
           {"config", "config.json sha256"},
           {"tokenizer", "tokenizer sha256"},
           {"embedding", "embedding sha256"},
           {"vocab", "vocabulary (tokens)"}},
          nlohmann::json::array()};
  auto add = [&](const char* role, const ModelFingerprint& f) {
    t.rows.push_back({{"role", role}, {"path", portable_path(f.path)}, {"config", short_sha(f.config_sha256)},
                      {"tokenizer", short_sha(f.tokenizer_sha256)}, {"embedding", short_sha(f.embedding_sha256)}, {"vocab", f.vocab_size}});
  };
  add("target", a.target);
  if (a.draft) add("draft", *a.draft);
  return t;
}

Table tool_table(const ReportInputs& in) {
  const Artifact& a = in.artifact;
  Table t{"The artifact", {{"item", "item"}, {"value", "value"}}, nlohmann::json::array()};
  for (const auto& [item, value] : std::vector<std::pair<std::string, std::string>>{
           {"directory", in.artifact_dir},
           {"schema version", std::to_string(a.schema_version)},
           {"written by", "specd " + a.tool_version},
           {"git commit", a.git_commit.empty() ? "unknown" : a.git_commit},
           {"created at (UTC)", a.created_at}})
    t.rows.push_back({{"item", item}, {"value", value}});
  return t;
}

std::string shard_text(const CalibrationProvenance& p) {
  if (!p.shards.empty()) return "merged from " + std::to_string(p.shards.size()) + " shards";
  if (p.shard_count > 1) return "shard " + std::to_string(p.shard_index) + " of " + std::to_string(p.shard_count);
  return "whole (1 shard)";
}

// The machine a calibration ran on; a merge of shards from several machines names none (the
// manifest keeps each shard's), an artifact before version 6 recorded none.
std::string machine_of(const CalibrationProvenance& p) {
  const std::string text = machine_text(p.machine);
  if (!text.empty()) return text;
  return p.shards.empty() ? "not recorded" : "several (each shard's is in the manifest)";
}

// Every calibration the artifact holds, by name, with its provenance.
std::vector<std::pair<std::string, const CalibrationProvenance*>> calibrations(const Artifact& a) {
  std::vector<std::pair<std::string, const CalibrationProvenance*>> out;
  if (a.csd) out.emplace_back(kCsdPolicy, &a.csd->provenance);
  if (a.sam_corpus) out.emplace_back(kSamCorpusPolicy, &a.sam_corpus->provenance);
  if (a.arc) out.emplace_back(kArcPolicy, &a.arc->provenance);
  for (const SweepCalibration& s : a.sweeps) out.emplace_back(std::string(kSweepCalibration) + " " + s.family, &s.provenance);
  return out;
}

Table settings_table(const Artifact& a) {
  Table t{"How each calibration was made (sampling settings are the target's; top-k 0: off; its wall time, and a sweep's speeds, are "
          "the machine's it ran on)",
          {{"calibration", "calibration"},
           {"command", "command line"},
           {"prompts", "prompts file"},
           {"prompts_sha256", "prompts sha256"},
           {"prompt_count", "prompts"},
           {"shard", "shards"},
           {"seed", "seed"},
           {"temperature", "temperature", 2},
           {"top_k", "top-k (tokens)"},
           {"top_p", "top-p", 2},
           {"wall_s", "wall time (s)", 1},
           {"machine", "ran on"}},
          nlohmann::json::array()};
  for (const auto& [name, p] : calibrations(a))
    t.rows.push_back({{"calibration", name}, {"command", p->command_line}, {"prompts", portable_path(p->prompts_path)},
                      {"prompts_sha256", short_sha(p->prompts_sha256)}, {"prompt_count", p->prompt_count}, {"shard", shard_text(*p)},
                      // a string: the seed is a 64-bit unsigned integer, more than a double holds exactly
                      {"seed", std::to_string(p->seed)}, {"temperature", p->temperature}, {"top_k", p->top_k},
                      {"top_p", p->top_p}, {"wall_s", p->wall_s}, {"machine", machine_of(*p)}});
  return t;
}

Table options_table(const Artifact& a) {
  Table t{"Each calibration's options and counts, as the manifest records them (JSON)",
          {{"calibration", "calibration"}, {"options", "options"}, {"counts", "counts"}}, nlohmann::json::array()};
  for (const auto& [name, p] : calibrations(a))
    t.rows.push_back({{"calibration", name}, {"options", p->options.dump()}, {"counts", p->counts.dump()}});
  return t;
}

Table thresholds_table(const Artifact& a) {
  Table t{"Thresholds the artifact deploys (generate and bench --artifact use them unless an option is typed)",
          {{"policy", "policy"}, {"name", "parameter"}, {"value", "value"}, {"source", "source"}},
          nlohmann::json::array()};
  for (const Threshold& th : a.thresholds)
    t.rows.push_back({{"policy", th.policy}, {"name", th.name}, {"value", th.value}, {"source", th.source}});
  return t;
}

}  // namespace

Section provenance_section(const ReportInputs& in) {
  const Artifact& a = in.artifact;
  Section s{"provenance", "The pair and its provenance", {}};
  s.blocks.push_back(pair_table(a));
  if (!a.draft) s.blocks.push_back(Paragraph{"no draft model: a model-free pair (retrieval drafters only)"});
  s.blocks.push_back(tool_table(in));

  s.blocks.push_back(Heading{"artifact verify"});
  if (in.verify_problems.empty()) {
    s.blocks.push_back(Paragraph{"verified: every check of specd artifact verify passed (files' sha256, SQLite integrity, tables, "
                                 "HDF5 datasets, counts)"});
  } else {
    s.blocks.push_back(Paragraph{"NOT VERIFIED: specd artifact verify found " + std::to_string(in.verify_problems.size()) + " problem" +
                                     (in.verify_problems.size() == 1 ? "" : "s") + ":",
                                 Tone::Flag});
    for (const std::string& problem : in.verify_problems) s.blocks.push_back(Paragraph{problem, Tone::Flag});
  }

  s.blocks.push_back(Heading{"Calibrations"});
  if (calibrations(a).empty()) {
    s.blocks.push_back(Paragraph{"not calibrated: the artifact holds no calibration; run specd calibrate csd|arc|sweep --out " + in.artifact_dir,
                                 Tone::NotCalibrated});
  } else {
    s.blocks.push_back(settings_table(a));
    s.blocks.push_back(options_table(a));
  }

  s.blocks.push_back(Heading{"Deployed thresholds"});
  if (a.thresholds.empty())
    s.blocks.push_back(Paragraph{"no thresholds: every policy runs with its defaults or the options typed"});
  else
    s.blocks.push_back(thresholds_table(a));
  return s;
}

}  // namespace specd::report
