// specd artifact inspect|verify|merge|diff: read, check, merge and compare the per-pair calibration artifacts
// that specd calibrate writes (the format: schemas/README.md).
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "artifact/artifact_reader.h"
#include "artifact/artifact_summary.h"
#include "artifact/verify.h"
#include "speculative/method_params.h"
#include "calibrate/artifact_diff.h"
#include "calibrate/artifact_merge.h"
#include "stats/arc_gate.h"
#include "calibrate/artifact_writer.h"
#include "commands.h"
#include "io/directory_lock.h"
#include "options.h"
#include "util/error.h"

namespace specd::cli {
namespace {

constexpr const char* kUsage =
    "usage: specd artifact inspect DIR [--json] | specd artifact verify DIR [--target T] [--draft D] | "
    "specd artifact merge --out DIR IN... | specd artifact diff A B";

int run_inspect(const Args& args) {
  std::string dir;
  bool as_json = false;
  size_t top_pairs = 10;
  po::options_description desc("specd artifact inspect");
  desc.add_options()
      ("dir", po::value(&dir)->required(), "artifact directory")
      ("json", po::bool_switch(&as_json), "print one JSON object")
      ("top-pairs", po::value(&top_pairs)->default_value(10), "CSD pairs to list, most frequent first");
  po::positional_options_description positional;
  positional.add("dir", 1);
  po::variables_map vm;
  if (!parse(args, desc, positional, vm, "usage: specd artifact inspect DIR [--json]")) return 0;
  const nlohmann::json summary = artifact_summary(dir, read_artifact(dir), top_pairs);
  if (as_json) std::cout << summary.dump(2) << "\n";
  else print_artifact_summary(std::cout, summary);
  return 0;
}

int run_verify(const Args& args) {
  std::string dir, target_dir, draft_dir;
  po::options_description desc("specd artifact verify");
  desc.add_options()
      ("dir", po::value(&dir)->required(), "artifact directory")
      ("target", po::value(&target_dir), "also check the artifact was made for this target model")
      ("draft", po::value(&draft_dir), "also check the artifact was made with this draft model");
  po::positional_options_description positional;
  positional.add("dir", 1);
  po::variables_map vm;
  if (!parse(args, desc, positional, vm, "usage: specd artifact verify DIR [--target T] [--draft D]")) return 0;
  const std::vector<std::string> problems = verify_artifact(dir, target_dir, draft_dir, threshold_problems);
  for (const std::string& problem : problems) std::cout << problem << "\n";
  if (!problems.empty()) return 2;
  std::string checked = artifact_contents_line(read_artifact(dir));
  if (!target_dir.empty()) checked += "; made for target " + target_dir;
  if (!draft_dir.empty()) checked += " and draft " + draft_dir;
  std::cout << dir << ": ok (" << checked << ")\n";
  return 0;
}

int run_merge(const Args& args) {
  std::string out;
  std::vector<std::string> inputs;
  po::options_description desc("specd artifact merge");
  desc.add_options()
      ("out", po::value(&out)->required(), "artifact directory to write; it must not exist yet (or be empty)")
      ("inputs", po::value(&inputs)->required()->multitoken(), "the shards' artifact directories");
  po::positional_options_description positional;
  positional.add("inputs", -1);
  po::variables_map vm;
  if (!parse(args, desc, positional, vm, "usage: specd artifact merge --out DIR IN...")) return 0;
  check_outputs({{"--out", out, Output::Directory}});
  // Merge writes a new artifact: replacing an existing one would drop its other calibrations.
  auto refuse_existing = [&] {
    std::error_code error;
    if (std::filesystem::is_symlink(std::filesystem::symlink_status(out, error)) ||
        (std::filesystem::exists(out, error) && !std::filesystem::is_empty(out, error)))
      input_error("--out", out + " exists: merge writes a new artifact and does not replace one (give a directory that does not exist)");
  };
  refuse_existing();
  std::vector<Artifact> shards;
  for (const std::string& input : inputs) shards.push_back(read_artifact(input));
  const Artifact merged = merge_artifacts(shards, inputs);
  // Again under the lock: a calibration may have created it meanwhile.
  DirectoryLock lock(out, DirectoryLock::Mode::Exclusive);
  refuse_existing();
  write_artifact(out, merged);
  std::cout << "wrote " << out << ": " << inputs.size() << " shards merged (" << artifact_contents_line(merged) << ")\n";
  // A sweep's run to deploy is chosen over the merged runs (calibrate/sweep_choice.h).
  for (const SweepCalibration& sweep : merged.sweeps) std::cout << "  sweep " << sweep.family << ": " << sweep.choice << "\n";
  // So is ARC's gate over the deploy sites of every shard (calibrate/arc_onpolicy.h).
  for (const Threshold& t : merged.thresholds)
    if (merged.arc && has_deploy_sites(*merged.arc) && t.policy == kArcPolicy && t.name == "theta")
      std::cout << "  arc gate: theta " << t.value << ": " << t.source << "\n";
  return 0;
}

int run_diff(const Args& args) {
  std::vector<std::string> dirs;
  po::options_description desc("specd artifact diff");
  desc.add_options()("dirs", po::value(&dirs)->required()->multitoken(), "the two artifact directories");
  po::positional_options_description positional;
  positional.add("dirs", -1);
  po::variables_map vm;
  if (!parse(args, desc, positional, vm, "usage: specd artifact diff A B")) return 0;
  if (dirs.size() != 2) input_error("diff", "takes two artifact directories, not " + std::to_string(dirs.size()));
  const Artifact a = read_artifact(dirs[0]), b = read_artifact(dirs[1]);
  const std::vector<std::string> differences = artifact_differences(a, b);
  for (const std::string& line : differences) std::cout << line << "\n";
  if (!differences.empty()) return 1;
  std::cout << dirs[0] << " and " << dirs[1] << " hold the same calibrated data (" << artifact_contents_line(a) << ")\n";
  return 0;
}

}  // namespace

int run_artifact(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::printf("%s\n\n", kUsage);
    std::printf("inspect   what an artifact holds, for which model pair, made how\n");
    std::printf("verify    check every file against the manifest and the format (exit 2 on any problem)\n");
    std::printf("merge     merge the shards of one calibration into one artifact\n");
    std::printf("diff      what differs between two artifacts' calibrated data (exit 1 if anything), not when or where they ran\n");
    return args.empty() ? 2 : 0;
  }
  const Args rest(args.begin() + 1, args.end());
  if (args[0] == "inspect") return run_inspect(rest);
  if (args[0] == "verify") return run_verify(rest);
  if (args[0] == "merge") return run_merge(rest);
  if (args[0] == "diff") return run_diff(rest);
  input_error("artifact", "unknown action '" + args[0] + "' (known: inspect, verify, merge, diff)");
}

}  // namespace specd::cli
