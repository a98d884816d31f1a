#include "calibrate_common.h"

#include <cstdio>
#include <filesystem>

#include "artifact/artifact_reader.h"
#include "artifact/fingerprint.h"
#include "calibrate/shard_source.h"
#include "io/output_path.h"
#include "io/sha256.h"
#include "model_files.h"
#include "run_metadata.h"
#include "util/error.h"
#include "util/machine.h"

namespace specd::cli {

std::string joined(const Args& args, const std::string& part) {
  Args all{part};
  all.insert(all.end(), args.begin(), args.end());
  return command_line("calibrate", all);
}

void add_common(po::options_description& desc, CommonArgs& a, bool with_draft, const char* shard_help) {
  desc.add_options()
      ("target", po::value(&a.target_dir)->default_value(default_model_dir()), "target model directory")
      ("prompts", po::value(&a.prompts_path)->default_value(data_dir() + "/calibration/prompts.jsonl"),
       "calibration prompts (workload format); keep them apart from the prompts you measure on")
      ("max-prompts", po::value(&a.max_prompts)->default_value(0), "use only the first N prompts (0: all)")
      ("max-new-tokens", po::value(&a.max_new_tokens)->default_value(0), "tokens per answer (0: each prompt's max_new_tokens)")
      ("out", po::value(&a.out)->required(), "the pair's artifact directory (created, or added to)")
      ("resume", po::bool_switch(&a.resume), "continue an interrupted run of the same command from its last finished prompt")
      ("shard", po::value(&a.shard), shard_help);
  if (with_draft) desc.add_options()("draft", po::value(&a.draft_dir), "draft model directory (default: the demo target's own draft)");
  add_device_options(desc, a.device);
}

void add_samples_per_prompt(po::options_description& desc, CommonArgs& a) {
  desc.add_options()("samples-per-prompt", po::value(&a.samples_per_prompt)->default_value(1),
                     "K: decode each prompt K times, sample k of prompt i (of P) with seed + k*P + i; shards split the K*P decodes");
}

void check_samples_per_prompt(const CommonArgs& a, const SamplingParams& sampling) {
  if (a.samples_per_prompt < 1) input_error("--samples-per-prompt", "must be at least 1");
  if (a.samples_per_prompt > 1 && sampling.temperature <= 0)
    input_error("--samples-per-prompt", "needs a temperature above 0: greedy decoding gives every seed the same text");
}

std::vector<WorkloadItem> prepare(CommonArgs& a, CalibrationProvenance& provenance, const std::string& command_line) {
  if (a.max_prompts < 0) input_error("--max-prompts", "must not be negative");
  if (a.max_new_tokens < 0) input_error("--max-new-tokens", "must not be negative");
  const ShardSource shard = resolve_shard(a.shard, process_environment());
  a.shard_index = shard.index;
  a.shard_count = shard.count;
  // A bad --out fails now, not after minutes of decoding.
  check_outputs({{"--out", a.out, Output::Directory}});
  std::error_code link_error;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(a.out, link_error)))
    input_error("--out", a.out + " is a symbolic link: give the artifact's own directory (a calibration replaces it whole)");
  if (std::filesystem::is_directory(a.out) && !std::filesystem::is_empty(a.out) &&
      !std::filesystem::exists(std::filesystem::path(a.out) / kManifestFile))
    input_error(a.out, "exists and is not a specd artifact (no manifest.json): choose another --out");
  std::vector<WorkloadItem> items = read_workload(a.prompts_path);
  if (a.max_prompts > 0 && static_cast<int64_t>(items.size()) > a.max_prompts) items.resize(a.max_prompts);
  if (items.empty()) input_error(a.prompts_path, "holds no prompts");
  provenance.command_line = command_line;
  provenance.prompts_path = portable_path(a.prompts_path);
  provenance.prompts_sha256 = sha256_file(a.prompts_path);
  provenance.prompt_count = static_cast<int64_t>(items.size());
  provenance.shard_index = a.shard_index;
  provenance.shard_count = a.shard_count;
  provenance.job = shard.job_json();
  provenance.machine = this_machine(a.device);
  return items;
}

void note_machine(CalibrationJournal& journal, CalibrationProvenance& provenance, const char* command) {
  const std::vector<nlohmann::json> machines = journal.note_machine(provenance.machine);
  if (machines.size() <= 1) return;
  std::fprintf(stderr, "%s: resumed on another machine than it began on (%s); its decoding time mixes %zu machines, so the provenance names none\n",
               command, machine_text(machines.front()).c_str(), machines.size());
  provenance.machine = nullptr;
}

nlohmann::json identity(const char* policy, const Artifact& pair, const CalibrationProvenance& p) {
  return {{"policy", policy},
          {"target", pair.target.config_sha256 + pair.target.embedding_sha256 + pair.target.tokenizer_sha256},
          {"draft", pair.draft ? pair.draft->config_sha256 + pair.draft->embedding_sha256 : ""},
          {"prompts_sha256", p.prompts_sha256}, {"prompt_count", p.prompt_count}, {"shard", {p.shard_index, p.shard_count}},
          {"seed", p.seed}, {"sampling", {p.temperature, p.top_k, p.top_p}}, {"options", p.options}};
}

}  // namespace specd::cli
