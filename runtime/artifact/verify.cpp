#include "artifact/verify.h"

#include <algorithm>
#include <functional>

#include "artifact/artifact_arrays.h"
#include "artifact/artifact_reader.h"
#include "artifact/artifact_tables.h"
#include "artifact/consistency.h"
#include "artifact/file_checks.h"
#include "artifact/fingerprint.h"
#include "artifact/manifest.h"
#include "artifact/value_domains.h"
#include "io/directory_lock.h"
#include "util/error.h"

namespace specd {

std::vector<std::string> verify_artifact(const std::string& dir, const std::string& target_dir, const std::string& draft_dir,
                                         const ArtifactCheck& more) {
  const DirectoryLock lock(dir, DirectoryLock::Mode::Shared);  // one version: a writer waits
  std::vector<std::string> problems;
  // Runs one check; an InputError it throws is a problem to report, and the check counts as failed.
  auto attempt = [&problems](const std::function<void()>& check) {
    try {
      check();
      return true;
    } catch (const InputError& e) {
      problems.push_back(e.what());
      return false;
    }
  };
  Manifest manifest;
  if (!attempt([&] { manifest = read_manifest(dir); })) return problems;
  if (!attempt([&] { check_file_versions(dir, manifest.files); })) return problems;
  Artifact& artifact = manifest.header;
  const std::string manifest_path = dir + "/" + kManifestFile;
  const std::string sqlite_path = dir + "/" + kSqliteFile;
  const std::string h5_path = dir + "/" + kH5File;
  attempt([&] { check_sealed_file(dir, kSqliteFile, manifest.files); });
  attempt([&] { check_sealed_file(dir, kH5File, manifest.files); });

  bool tables_read = false;  // sound enough to compare with the other files
  attempt([&] {
    ArtifactTables tables(sqlite_path);
    check_recorded_version(dir, kSqliteFile, manifest.files, tables.version());
    std::vector<std::string> lines = tables.integrity_problems(true);
    if (lines.empty()) lines = tables.schema_problems();
    for (const std::string& line : lines) problems.push_back(sqlite_path + ": " + line);
    if (!lines.empty()) return;
    for (const std::string& policy : tables.policies())
      if (!lists_policy(artifact, policy))
        problems.push_back(sqlite_path + ": prompts of policy '" + policy + "', which the manifest does not list");
    if (artifact.csd) {
      artifact.csd->prompts = tables.prompts(kCsdPolicy);
      artifact.csd->pairs = tables.csd_pairs();
    }
    if (artifact.sam_corpus) artifact.sam_corpus->prompts = tables.prompts(kSamCorpusPolicy);
    if (artifact.arc) {
      artifact.arc->prompts = tables.prompts(kArcPolicy);
      std::vector<ArcConstants> stored = tables.arc_constants();
      for (const std::string& problem : arc_manifest_problems(artifact.arc->constants, stored)) problems.push_back(dir + "/" + problem);
      artifact.arc->constants = std::move(stored);
      artifact.arc->audit = tables.arc_audit();
    }
    for (const std::string& family : tables.sweep_families())
      if (std::none_of(artifact.sweeps.begin(), artifact.sweeps.end(), [&](const SweepCalibration& s) { return s.family == family; }))
        problems.push_back(sqlite_path + ": sweep runs of '" + family + "', which the manifest does not list");
    for (SweepCalibration& sweep : artifact.sweeps) sweep.runs = tables.sweep_runs(sweep.family);
    artifact.thresholds = tables.thresholds();
    tables_read = true;
  });

  const bool arrays_read = attempt([&] {
    const Hdf5File arrays = open_artifact_arrays(h5_path);
    check_recorded_version(dir, kH5File, manifest.files, artifact_arrays_version(arrays));
    for (const std::string& problem : unexpected_objects(arrays)) problems.push_back(h5_path + ": " + problem);
    if (has_csd_rejections(arrays) != artifact.csd.has_value())
      problems.push_back(h5_path + (artifact.csd ? ": /csd is missing" : ": /csd is present but the manifest lists no csd calibration"));
    if (has_sam_corpus(arrays) != artifact.sam_corpus.has_value())
      problems.push_back(h5_path + (artifact.sam_corpus ? ": /sam_corpus is missing"
                                                        : ": /sam_corpus is present but the manifest lists no sam_corpus calibration"));
    if (has_arc(arrays) != artifact.arc.has_value())
      problems.push_back(h5_path + (artifact.arc ? ": /arc is missing" : ": /arc is present but the manifest lists no arc calibration"));
    if (artifact.csd) artifact.csd->rejections = read_csd_rejections(arrays);
    if (artifact.arc) {
      artifact.arc->whitening = read_arc_whitening(arrays);
      artifact.arc->samples = read_arc_samples(arrays);
    }
    if (artifact.sam_corpus) artifact.sam_corpus->documents = read_sam_documents(arrays);
  });
  if (tables_read && arrays_read) {
    for (const std::string& problem : value_problems(artifact)) problems.push_back(dir + "/" + problem);
    for (const std::string& problem : consistency_problems(artifact)) problems.push_back(dir + "/" + problem);
    if (more)
      for (const std::string& problem : more(artifact)) problems.push_back(dir + "/" + problem);
  }

  auto check_model = [&](const std::string& role, const std::optional<ModelFingerprint>& recorded, const std::string& model_dir) {
    if (model_dir.empty()) return;
    if (!recorded) {
      problems.push_back(manifest_path + ": calibrated without a " + role + " model, but --" + role + " " + model_dir + " was given");
      return;
    }
    attempt([&] {
      for (const std::string& line : compare_fingerprints(role, *recorded, fingerprint_model(model_dir)))
        problems.push_back(manifest_path + ": " + line + " (" + model_dir + ")");
    });
  };
  check_model("target", artifact.target, target_dir);
  check_model("draft", artifact.draft, draft_dir);
  return problems;
}

}  // namespace specd
