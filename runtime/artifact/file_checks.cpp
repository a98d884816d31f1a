#include "artifact/file_checks.h"

#include "io/sha256.h"
#include "util/error.h"

namespace specd {

void check_file_versions(const std::string& dir, const std::map<std::string, ManifestFile>& files) {
  for (const auto& [name, known] : {std::pair{kSqliteFile, kArtifactSqliteVersion}, std::pair{kH5File, kArtifactH5Version}}) {
    const int64_t version = files.at(name).schema_version;
    if (version < kOldestArtifactVersion || version > known)
      input_error(dir + "/" + kManifestFile, std::string("files.") + name + ".schema_version is " + std::to_string(version) +
                                                 ", this specd reads " + readable_versions(known));
  }
}

void check_recorded_version(const std::string& dir, const char* name, const std::map<std::string, ManifestFile>& files,
                            int64_t actual) {
  const int64_t recorded = files.at(name).schema_version;
  if (actual != recorded)
    input_error(dir + "/" + name, "schema version " + std::to_string(actual) + ", " + kManifestFile + " records " +
                                      std::to_string(recorded));
}

std::string check_sealed_file(const std::string& dir, const char* name, const std::map<std::string, ManifestFile>& files) {
  const std::string path = dir + "/" + name;
  const std::string expected = files.at(name).sha256;
  const std::string actual = sha256_file(path);
  if (actual != expected)
    input_error(path, "sha256 differs from " + std::string(kManifestFile) + " (file " + actual.substr(0, 12) + "…, manifest " +
                          expected.substr(0, 12) + "…): changed or damaged after the artifact was written");
  return path;
}

}  // namespace specd
