#pragma once
// What every specd calibrate part shares: the options (pair, prompts, --out, --resume, --shard),
// their checks, the artifact a calibration is added to and the identity of its journal.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/artifact.h"
#include "calibrate/artifact_update.h"
#include "calibrate/calibration_journal.h"
#include "options.h"
#include "sampling/sampler.h"
#include "workload/workload.h"

namespace specd::cli {

// The command as typed, for the artifact's provenance ("calibrate PART ARGS...").
std::string joined(const Args& args, const std::string& part);

// Options every calibration shares.
struct CommonArgs {
  std::string target_dir, draft_dir, prompts_path, out;
  std::string shard;  // as typed: "I/N", "auto", "auto/N" or "" (calibrate/shard_source.h)
  int32_t shard_index = 0, shard_count = 1;
  int64_t max_prompts = 0, max_new_tokens = 0;
  int32_t samples_per_prompt = 1;  // K decodes of each prompt (calibrations that sample)
  bool resume = false;
  DeviceSpec device;
};

// --target, --prompts, --max-prompts, --max-new-tokens, --out, --resume, --shard (its help says
// `shard_help`), the device options and, with `with_draft`, --draft.
void add_common(po::options_description& desc, CommonArgs& a, bool with_draft,
                const char* shard_help = "I/N: calibrate prompts I, I+N, I+2N, ... (merge shards with specd artifact merge); "
                                         "auto[/N]: I and N from a Slurm array job, a Kubernetes Indexed Job or an MPI launcher "
                                         "(docs/cluster.md; the default inside a Slurm array job)");

// --samples-per-prompt K, for the calibrations that sample (csd, arc): K decodes of each prompt,
// each with its own seed (calibrate/calibration_runs.h numbers them).
void add_samples_per_prompt(po::options_description& desc, CommonArgs& a);
// InputError naming --samples-per-prompt when K < 1, or K > 1 while decoding greedily (every seed
// would decode the same text).
void check_samples_per_prompt(const CommonArgs& a, const SamplingParams& sampling);

// Checks the common options and --out (before any decoding), reads the prompts and fills the
// provenance's command line, prompts and shard.
std::vector<WorkloadItem> prepare(CommonArgs& a, CalibrationProvenance& provenance, const std::string& command_line);

// The journal's identity: what must not change between an interrupted run and its --resume.
nlohmann::json identity(const char* policy, const Artifact& pair, const CalibrationProvenance& p);

// Notes this machine in the journal. A calibration resumed on another machine than it began on
// keeps its results (they do not depend on the machine) but its decoding time mixes the machines:
// the provenance then names none (as a merge of shards from several) and stderr says so.
void note_machine(CalibrationJournal& journal, CalibrationProvenance& provenance, const char* command);

}  // namespace specd::cli
