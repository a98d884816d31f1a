#include "artifact/artifact_reader.h"

#include "artifact/artifact_arrays.h"
#include "artifact/artifact_tables.h"
#include "artifact/consistency.h"
#include "artifact/fingerprint.h"
#include "artifact/file_checks.h"
#include "artifact/value_domains.h"
#include "io/directory_lock.h"
#include "util/error.h"

#include <algorithm>

namespace specd {

bool lists_policy(const Artifact& artifact, const std::string& policy) {
  return (policy == kCsdPolicy && artifact.csd) || (policy == kSamCorpusPolicy && artifact.sam_corpus) ||
         (policy == kArcPolicy && artifact.arc);
}

namespace {

Artifact read_whole(const std::string& dir, ArtifactReader::Lock lock) {
  ArtifactReader reader(dir, lock);
  Artifact artifact = reader.manifest();
  const std::string sqlite_path = check_sealed_file(dir, kSqliteFile, reader.files());
  const std::string h5_path = check_sealed_file(dir, kH5File, reader.files());

  ArtifactTables tables(sqlite_path);
  for (const std::string& problem : tables.integrity_problems(false)) input_error(sqlite_path, problem);
  check_recorded_version(dir, kSqliteFile, reader.files(), tables.version());
  for (const std::string& problem : tables.schema_problems()) input_error(sqlite_path, problem);
  for (const std::string& policy : tables.policies())
    if (!lists_policy(artifact, policy)) input_error(sqlite_path, "prompts of policy '" + policy + "', which the manifest does not list");
  artifact.thresholds = tables.thresholds();
  for (const std::string& family : tables.sweep_families())
    if (std::none_of(artifact.sweeps.begin(), artifact.sweeps.end(), [&](const SweepCalibration& s) { return s.family == family; }))
      input_error(sqlite_path, "sweep runs of '" + family + "', which the manifest does not list");
  for (SweepCalibration& sweep : artifact.sweeps) sweep.runs = tables.sweep_runs(sweep.family);

  const Hdf5File arrays = open_artifact_arrays(h5_path);
  check_recorded_version(dir, kH5File, reader.files(), artifact_arrays_version(arrays));
  for (const std::string& problem : unexpected_objects(arrays)) input_error(h5_path, problem);
  if (has_csd_rejections(arrays) && !artifact.csd) input_error(h5_path, "/csd is present but the manifest lists no csd calibration");
  if (has_sam_corpus(arrays) && !artifact.sam_corpus)
    input_error(h5_path, "/sam_corpus is present but the manifest lists no sam_corpus calibration");
  if (has_arc(arrays) && !artifact.arc) input_error(h5_path, "/arc is present but the manifest lists no arc calibration");
  if (artifact.csd) {
    artifact.csd->prompts = tables.prompts(kCsdPolicy);
    artifact.csd->pairs = tables.csd_pairs();
    artifact.csd->rejections = read_csd_rejections(arrays);
  }
  if (artifact.sam_corpus) {
    artifact.sam_corpus->prompts = tables.prompts(kSamCorpusPolicy);
    artifact.sam_corpus->documents = read_sam_documents(arrays);
  }
  if (artifact.arc) {
    ArcCalibration& arc = *artifact.arc;
    const std::vector<ArcConstants> manifest_constants = std::move(arc.constants);
    arc.prompts = tables.prompts(kArcPolicy);
    arc.constants = tables.arc_constants();
    arc.audit = tables.arc_audit();
  arc.gate = tables.arc_gate();
    arc.gate = tables.arc_gate();
    arc.whitening = read_arc_whitening(arrays);
    arc.samples = read_arc_samples(arrays);
    for (const std::string& problem : arc_manifest_problems(manifest_constants, arc.constants)) throw InputError(dir + "/" + problem);
  }
  // Values in their domains first: an agreement between rows means little when a value is NaN.
  for (const std::string& problem : value_problems(artifact)) throw InputError(dir + "/" + problem);
  for (const std::string& problem : consistency_problems(artifact)) throw InputError(dir + "/" + problem);
  return artifact;
}

}  // namespace

Artifact read_artifact(const std::string& dir) { return read_whole(dir, ArtifactReader::Lock::Shared); }

Artifact read_artifact_locked(const std::string& dir) { return read_whole(dir, ArtifactReader::Lock::HeldByCaller); }

ArtifactReader::ArtifactReader(std::string dir, Lock lock) : dir_(std::move(dir)) {
  if (lock == Lock::Shared) lock_.emplace(dir_, DirectoryLock::Mode::Shared);
  manifest_ = read_manifest(dir_);
  check_file_versions(dir_, manifest_.files);
}

std::string ArtifactReader::sealed_file(const char* name) const { return check_sealed_file(dir_, name, manifest_.files); }

std::vector<CsdPair> ArtifactReader::csd_pairs() const {
  if (!manifest().csd) input_error(dir_, "holds no csd calibration (run specd calibrate csd)");
  return ArtifactTables(sealed_file(kSqliteFile)).csd_pairs();
}

std::vector<SweepCalibration> ArtifactReader::sweeps() const {
  std::vector<SweepCalibration> sweeps = manifest().sweeps;
  if (sweeps.empty()) return sweeps;
  ArtifactTables tables(sealed_file(kSqliteFile));
  for (SweepCalibration& sweep : sweeps) sweep.runs = tables.sweep_runs(sweep.family);
  return sweeps;
}

std::vector<Threshold> ArtifactReader::thresholds() const { return ArtifactTables(sealed_file(kSqliteFile)).thresholds(); }

std::vector<std::vector<int32_t>> ArtifactReader::sam_corpus_documents() const {
  if (!manifest().sam_corpus) input_error(dir_, "holds no sam_corpus calibration (run specd calibrate sam-corpus)");
  return read_sam_documents(open_artifact_arrays(sealed_file(kH5File)));
}

ArcCalibration ArtifactReader::arc_calibration() const {
  if (!manifest().arc) input_error(dir_, "holds no arc calibration (run specd calibrate arc)");
  ArcCalibration arc = *manifest().arc;
  ArtifactTables tables(sealed_file(kSqliteFile));
  check_recorded_version(dir_, kSqliteFile, files(), tables.version());
  arc.prompts = tables.prompts(kArcPolicy);
  arc.constants = tables.arc_constants();
  arc.audit = tables.arc_audit();
  arc.gate = tables.arc_gate();
  const Hdf5File arrays = open_artifact_arrays(sealed_file(kH5File));
  check_recorded_version(dir_, kH5File, files(), artifact_arrays_version(arrays));
  arc.whitening = read_arc_whitening(arrays);
  arc.samples = read_arc_samples(arrays);
  for (const std::string& problem : arc_manifest_problems(manifest().arc->constants, arc.constants))
    throw InputError(dir_ + "/" + problem);
  Artifact only_arc;
  only_arc.arc = arc;
  for (const std::string& problem : consistency_problems(only_arc)) throw InputError(dir_ + "/" + problem);
  return arc;
}

void ArtifactReader::check_pair(const std::string& target_dir, const std::string& draft_dir) const {
  specd::check_pair(dir_, manifest(), target_dir, draft_dir);
}

}  // namespace specd
