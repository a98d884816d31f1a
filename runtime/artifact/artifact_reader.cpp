#include "artifact/artifact_reader.h"

#include "artifact/artifact_arrays.h"
#include "artifact/artifact_tables.h"
#include "artifact/consistency.h"
#include "artifact/fingerprint.h"
#include "artifact/file_checks.h"
#include "util/error.h"

namespace specd {

Artifact read_artifact(const std::string& dir) {
  ArtifactReader reader(dir);
  Artifact artifact = reader.manifest();
  const std::string sqlite_path = check_sealed_file(dir, kSqliteFile, reader.files());
  const std::string h5_path = check_sealed_file(dir, kH5File, reader.files());

  ArtifactTables tables(sqlite_path);
  for (const std::string& problem : tables.integrity_problems(false)) input_error(sqlite_path, problem);
  for (const std::string& policy : tables.policies())
    if (!(policy == kCsdPolicy && artifact.csd) && !(policy == kSamCorpusPolicy && artifact.sam_corpus))
      input_error(sqlite_path, "prompts of policy '" + policy + "', which the manifest does not list");
  artifact.thresholds = tables.thresholds();

  const Hdf5File arrays = open_artifact_arrays(h5_path);
  if (has_csd_rejections(arrays) && !artifact.csd) input_error(h5_path, "/csd is present but the manifest lists no csd calibration");
  if (has_sam_corpus(arrays) && !artifact.sam_corpus)
    input_error(h5_path, "/sam_corpus is present but the manifest lists no sam_corpus calibration");
  if (artifact.csd) {
    artifact.csd->prompts = tables.prompts(kCsdPolicy);
    artifact.csd->pairs = tables.csd_pairs();
    artifact.csd->rejections = read_csd_rejections(arrays);
  }
  if (artifact.sam_corpus) {
    artifact.sam_corpus->prompts = tables.prompts(kSamCorpusPolicy);
    artifact.sam_corpus->documents = read_sam_documents(arrays);
  }
  for (const std::string& problem : consistency_problems(artifact)) throw InputError(dir + "/" + problem);
  return artifact;
}

ArtifactReader::ArtifactReader(std::string dir) : dir_(std::move(dir)), manifest_(read_manifest(dir_)) {
  check_file_versions(dir_, manifest_.files);
}

std::string ArtifactReader::sealed_file(const char* name) const { return check_sealed_file(dir_, name, manifest_.files); }

std::vector<CsdPair> ArtifactReader::csd_pairs() const {
  if (!manifest().csd) input_error(dir_, "holds no csd calibration (run specd calibrate csd)");
  return ArtifactTables(sealed_file(kSqliteFile)).csd_pairs();
}

std::vector<Threshold> ArtifactReader::thresholds() const { return ArtifactTables(sealed_file(kSqliteFile)).thresholds(); }

std::vector<std::vector<int32_t>> ArtifactReader::sam_corpus_documents() const {
  if (!manifest().sam_corpus) input_error(dir_, "holds no sam_corpus calibration (run specd calibrate sam-corpus)");
  return read_sam_documents(open_artifact_arrays(sealed_file(kH5File)));
}

void ArtifactReader::check_pair(const std::string& target_dir, const std::string& draft_dir) const {
  specd::check_pair(dir_, manifest(), target_dir, draft_dir);
}

}  // namespace specd
