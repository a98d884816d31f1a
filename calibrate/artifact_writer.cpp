#include "calibrate/artifact_writer.h"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "artifact/artifact_arrays.h"
#include "artifact/artifact_tables.h"
#include "artifact/consistency.h"
#include "artifact/value_domains.h"
#include "artifact/csd_pairs.h"
#include "artifact/manifest.h"
#include "io/atomic_directory.h"
#include "io/atomic_file.h"
#include "io/sha256.h"
#include "util/error.h"
#include "util/timestamp.h"
#include "util/version.h"

namespace fs = std::filesystem;

namespace specd {
namespace {

void fill_counts(CalibrationProvenance& provenance, const nlohmann::json& derived) {
  for (const auto& [key, value] : derived.items())
    if (!provenance.counts.contains(key)) provenance.counts[key] = value;
}

void sort_prompts(std::vector<CalibratedPrompt>& prompts) {
  std::stable_sort(prompts.begin(), prompts.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
}

// The artifact in its stored order, with what the writer derives filled in.
Artifact sealed_form(const Artifact& artifact) {
  Artifact a = artifact;
  // Always the current format: an artifact read from an older version (a subset of this one) is
  // written back upgraded, never as the version it was read from with newer files.
  a.schema_version = kArtifactSchemaVersion;
  if (a.created_at.empty()) a.created_at = utc_timestamp();
  if (a.tool_version.empty()) a.tool_version = specd_version();
  if (a.git_commit.empty()) a.git_commit = specd_git_commit();
  if (a.csd) {
    sort_prompts(a.csd->prompts);
    sort_rejections(a.csd->rejections);
    if (a.csd->pairs.empty()) a.csd->pairs = summarize_pairs(a.csd->rejections);
    std::stable_sort(a.csd->pairs.begin(), a.csd->pairs.end(), [](const CsdPair& x, const CsdPair& y) {
      return std::make_tuple(-x.count, x.draft_token, x.target_token) < std::make_tuple(-y.count, y.draft_token, y.target_token);
    });
    fill_counts(a.csd->provenance, derived_counts(*a.csd));
  }
  if (a.sam_corpus && a.sam_corpus->documents.size() == a.sam_corpus->prompts.size()) {
    auto& sam = *a.sam_corpus;
    std::vector<size_t> order(sam.prompts.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return sam.prompts[x].index < sam.prompts[y].index; });
    SamCorpusCalibration sorted{sam.provenance, {}, {}};
    for (size_t i : order) {
      sorted.prompts.push_back(sam.prompts[i]);
      sorted.documents.push_back(sam.documents[i]);
    }
    sam = std::move(sorted);
  }
  if (a.sam_corpus) fill_counts(a.sam_corpus->provenance, derived_counts(*a.sam_corpus));
  if (a.arc) {
    sort_prompts(a.arc->prompts);
    // By (prompt, step); the samples of one step keep the order the calibration recorded them in.
    std::stable_sort(a.arc->samples.begin(), a.arc->samples.end(),
                     [](const ArcSample& x, const ArcSample& y) { return std::tie(x.prompt, x.step) < std::tie(y.prompt, y.step); });
    fill_counts(a.arc->provenance, derived_counts(*a.arc));
  }
  std::stable_sort(a.sweeps.begin(), a.sweeps.end(), [](const SweepCalibration& x, const SweepCalibration& y) { return x.family < y.family; });
  for (SweepCalibration& sweep : a.sweeps) {
    std::stable_sort(sweep.runs.begin(), sweep.runs.end(), [](const SweepRun& x, const SweepRun& y) { return x.index < y.index; });
    fill_counts(sweep.provenance, derived_counts(sweep));
  }
  std::sort(a.thresholds.begin(), a.thresholds.end(),
            [](const Threshold& x, const Threshold& y) { return std::tie(x.policy, x.name) < std::tie(y.policy, y.name); });
  return a;
}

// An existing DIR is replaced only when it is an artifact (it has a manifest) or empty, so a
// mistyped --out never swaps away a directory of other files.
void check_replaceable(const std::string& dir) {
  std::error_code error;
  const fs::file_status status = fs::symlink_status(dir, error);
  if (!fs::exists(status)) return;
  if (!fs::is_directory(status)) input_error(dir, "exists and is not a directory");
  if (fs::exists(fs::path(dir) / kManifestFile) || fs::is_empty(dir, error)) return;
  input_error(dir, "exists and is not a specd artifact (no manifest.json); not replacing it");
}

}  // namespace

void write_artifact(const std::string& dir, const Artifact& artifact) {
  const Artifact sealed = sealed_form(artifact);
  // Nothing is written that a reader would refuse.
  for (const auto& problems : {value_problems(sealed), consistency_problems(sealed)})
    if (!problems.empty()) throw std::invalid_argument("write_artifact: " + problems.front());
  check_replaceable(dir);

  AtomicDirectoryWriter writer(dir);
  write_artifact_tables(writer.file(kSqliteFile), sealed);
  write_artifact_arrays(writer.file(kH5File), sealed);
  const std::map<std::string, ManifestFile> files = {
      {kSqliteFile, {sha256_file(writer.file(kSqliteFile)), kArtifactSqliteVersion}},
      {kH5File, {sha256_file(writer.file(kH5File)), kArtifactH5Version}}};
  write_file_atomically(writer.file(kManifestFile), manifest_json(sealed, files).dump(2) + "\n");
  writer.commit();
}

}  // namespace specd
