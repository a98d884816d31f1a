#include "calibrate_common.h"

#include <filesystem>

#include "artifact/artifact_reader.h"
#include "artifact/fingerprint.h"
#include "io/output_path.h"
#include "io/sha256.h"
#include "model_files.h"
#include "run_metadata.h"
#include "util/error.h"

namespace specd::cli {

std::string joined(const Args& args, const std::string& part) {
  Args all{part};
  all.insert(all.end(), args.begin(), args.end());
  return command_line("calibrate", all);
}

void parse_shard(const std::string& text, int32_t& index, int32_t& count) {
  const size_t slash = text.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    index = std::stoi(text.substr(0, slash));
    count = std::stoi(text.substr(slash + 1));
  } catch (const std::exception&) {
    input_error("--shard", "must be I/N, e.g. 0/4 (got '" + text + "')");
  }
  if (count < 1 || index < 0 || index >= count) input_error("--shard", "needs 0 <= I < N (got '" + text + "')");
}

Artifact artifact_for(const std::string& out, const std::string& target_dir, const std::string& draft_dir) {
  if (std::filesystem::exists(out) && !std::filesystem::is_empty(out)) {
    Artifact existing = read_artifact(out);
    check_pair(out, existing, target_dir, draft_dir);
    existing.created_at.clear();
    existing.tool_version.clear();
    existing.git_commit.clear();
    return existing;
  }
  Artifact artifact;
  artifact.target = fingerprint_model(target_dir);
  if (!draft_dir.empty()) artifact.draft = fingerprint_model(draft_dir);
  return artifact;
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
      ("shard", po::value(&a.shard)->default_value("0/1"), shard_help);
  if (with_draft) desc.add_options()("draft", po::value(&a.draft_dir)->default_value(data_dir() + "/models/demo-draft"), "draft model directory");
  add_device_options(desc, a.device);
}

std::vector<WorkloadItem> prepare(CommonArgs& a, CalibrationProvenance& provenance, const std::string& command_line) {
  if (a.max_prompts < 0) input_error("--max-prompts", "must not be negative");
  if (a.max_new_tokens < 0) input_error("--max-new-tokens", "must not be negative");
  parse_shard(a.shard, a.shard_index, a.shard_count);
  // A bad --out fails now, not after minutes of decoding.
  check_outputs({{"--out", a.out, Output::Directory}});
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
  return items;
}

nlohmann::json identity(const char* policy, const Artifact& pair, const CalibrationProvenance& p) {
  return {{"policy", policy},
          {"target", pair.target.config_sha256 + pair.target.embedding_sha256 + pair.target.tokenizer_sha256},
          {"draft", pair.draft ? pair.draft->config_sha256 + pair.draft->embedding_sha256 : ""},
          {"prompts_sha256", p.prompts_sha256}, {"prompt_count", p.prompt_count}, {"shard", {p.shard_index, p.shard_count}},
          {"seed", p.seed}, {"sampling", {p.temperature, p.top_k, p.top_p}}, {"options", p.options}};
}

}  // namespace specd::cli
