#pragma once
// The checks that tie calibration.sqlite and calibration.h5 to the manifest that lists them.
#include <map>
#include <string>

#include "artifact/manifest.h"

namespace specd {

// InputError "DIR/manifest.json: files.NAME.schema_version is N, this specd reads 1 to 2" for a file
// format this specd does not read.
void check_file_versions(const std::string& dir, const std::map<std::string, ManifestFile>& files);

// InputError "DIR/NAME: schema version A, manifest.json records B" when the file's own version
// (`actual`) is not the one the manifest lists for it.
void check_recorded_version(const std::string& dir, const char* name, const std::map<std::string, ManifestFile>& files,
                            int64_t actual);

// DIR/NAME when its sha256 equals the manifest's; otherwise InputError "DIR/NAME: sha256 differs
// from manifest.json (...)" (the file changed or was damaged after the artifact was written).
std::string check_sealed_file(const std::string& dir, const char* name, const std::map<std::string, ManifestFile>& files);

}  // namespace specd
