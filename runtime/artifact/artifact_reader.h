#pragma once
// Reading an artifact directory: all of it (read_artifact, for inspection, merges and
// verification) or what deployment needs (ArtifactReader: the manifest, then tables on demand).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "artifact/artifact.h"
#include "artifact/manifest.h"
#include "io/directory_lock.h"

namespace specd {

// Reads and validates everything: the manifest, each file's sha256 against it, schema versions,
// tables, datasets, their dtypes and lengths, and the consistency of the three files. The first
// problem throws InputError "DIR/FILE: problem" in one line. Under DIR's shared lock
// (io/directory_lock.h), as ArtifactReader: a writer's swap never lands midway.
Artifact read_artifact(const std::string& dir);
// The same, for a caller that holds DIR's exclusive lock (calibrate/artifact_update.h).
Artifact read_artifact_locked(const std::string& dir);

// Whether the manifest of `artifact` lists the calibration `policy` (csd, sam_corpus, arc).
bool lists_policy(const Artifact& artifact, const std::string& policy);

// Deployment: the constructor reads manifest.json only; each accessor opens the file it needs
// after checking its sha256 against the manifest, so a changed or damaged file is refused naming
// it. Nothing is cached: call each once. The reader holds DIR's shared lock while it lives, so
// the files it opens are the version its manifest names (a writer waits).
class ArtifactReader {
 public:
  enum class Lock { Shared, HeldByCaller };  // HeldByCaller: the caller holds DIR's exclusive lock
  explicit ArtifactReader(std::string dir, Lock lock = Lock::Shared);

  const std::string& dir() const { return dir_; }
  // Pair, tool, creation time and each calibration's provenance (no rows).
  const Artifact& manifest() const { return manifest_.header; }
  // Each file's sha256 and schema version as the manifest records them.
  const std::map<std::string, ManifestFile>& files() const { return manifest_.files; }

  // CSD's correction memory (InputError when the artifact holds no CSD calibration).
  std::vector<CsdPair> csd_pairs() const;
  std::vector<Threshold> thresholds() const;
  // Every parameter sweep with its runs (manifest plus calibration.sqlite), by family.
  std::vector<SweepCalibration> sweeps() const;
  // The SAM corpus documents from calibration.h5 (InputError when it holds none).
  std::vector<std::vector<int32_t>> sam_corpus_documents() const;

  // ARC-Decode's whole calibration: settings from the manifest, prompts, constants (every bucket,
  // "all" first) and audit from calibration.sqlite, whitening and samples from calibration.h5,
  // checked for consistency (InputError when the artifact holds no arc calibration). The runtime
  // needs the constants and whitening; `specd audit arc` the samples.
  ArcCalibration arc_calibration() const;

  // check_pair (fingerprint.h) against the models being deployed.
  void check_pair(const std::string& target_dir, const std::string& draft_dir) const;

 private:
  std::string sealed_file(const char* name) const;  // DIR/name once its sha256 matches the manifest

  std::string dir_;
  std::optional<DirectoryLock> lock_;
  Manifest manifest_;
};

}  // namespace specd
