#pragma once
// calibration.h5 (schemas/artifact-h5.md): CSD's rejection events and the SAM corpus documents as
// one-dimensional datasets; a calibration's group is absent when the artifact lacks it.
#include <string>
#include <vector>

#include "artifact/artifact.h"
#include "io/hdf5_file.h"

namespace specd {

// Creates PATH with the root attribute schema_version and the arrays of `artifact`'s calibrations.
void write_artifact_arrays(const std::string& path, const Artifact& artifact);

// Opens read-only and checks the root attribute schema_version: InputError "PATH: schema version
// N, this specd reads 1" for another.
Hdf5File open_artifact_arrays(const std::string& path);

bool has_csd_rejections(const Hdf5File& file);
bool has_sam_corpus(const Hdf5File& file);
// Each dataset's dtype and rank, and equal lengths: "PATH: /csd/rejections/step has 10 rows,
// /csd/rejections/prompt 12".
std::vector<CsdRejection> read_csd_rejections(const Hdf5File& file);
// Offsets start at 0, never decrease and end at the token count.
std::vector<std::vector<int32_t>> read_sam_documents(const Hdf5File& file);

}  // namespace specd
