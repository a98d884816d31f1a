#pragma once
// Merging the shards of one calibration (specd calibrate ... --shard I/N run on several machines).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/artifact.h"

namespace specd {

// The artifact the unsharded run would have written: prompts, rejections and documents
// concatenated in stored order (ARC samples by (prompt, step)), CSD pairs recomputed, counts and
// wall_s added; ARC's whitening (equal in every shard) kept and its constants and audit left
// empty (they cannot be merged from the shards'; see merge_arc); each calibration's
// provenance becomes shard 0 of 1 and lists the shards' provenances in `shards`, in shard order;
// its command_line names the merge. created_at, tool_version and git_commit are left empty for the
// writer to fill. Refuses with InputError naming the input (names[i], e.g. its directory) shards
// of different calibrations (another pair, prompts file, seed, sampling, options, set of
// calibrations or thresholds), shard indices that repeat or leave a gap in 0..N-1, a shard
// count other than the number of inputs, and a prompt found in two shards.
Artifact merge_artifacts(const std::vector<Artifact>& shards, const std::vector<std::string>& names);

// What two runs of one calibration share wherever they ran (artifact merge refuses shards that
// differ in it; artifact diff compares it): a model's fingerprint without its path, or null for
// none; and a calibration's prompts, seed, sampling and options.
nlohmann::json portable_fingerprint(const std::optional<ModelFingerprint>& fingerprint);
nlohmann::json calibration_settings(const CalibrationProvenance& p);

}  // namespace specd
