#pragma once
// calibration.h5 (schemas/artifact-h5.md): CSD's rejection events, the SAM corpus documents and
// ARC's whitening and samples as one-dimensional datasets; a calibration's group is absent when
// the artifact lacks it.
#include <string>
#include <vector>

#include "artifact/artifact.h"
#include "io/hdf5_file.h"

namespace specd {

// Creates PATH with the root attribute schema_version and the arrays of `artifact`'s calibrations.
void write_artifact_arrays(const std::string& path, const Artifact& artifact);

// Opens read-only and checks the root attribute schema_version: InputError "PATH: schema version
// N, this specd reads 1 to 2" for another.
Hdf5File open_artifact_arrays(const std::string& path);

// The root attribute schema_version (open_artifact_arrays has checked it is readable).
int64_t artifact_arrays_version(const Hdf5File& file);

bool has_csd_rejections(const Hdf5File& file);
bool has_sam_corpus(const Hdf5File& file);
bool has_arc(const Hdf5File& file);
// One line per group holding objects specd does not write there ("/csd holds 3 objects, specd
// writes 2 of them: ..."; another tool's, or a typo): nothing in an artifact goes unchecked.
// verify reports them; readers refuse them.
std::vector<std::string> unexpected_objects(const Hdf5File& file);
// Each dataset's dtype and rank, and equal lengths: "PATH: /csd/rejections/step has 10 rows,
// /csd/rejections/prompt 12".
std::vector<CsdRejection> read_csd_rejections(const Hdf5File& file);
// Offsets start at 0, never decrease and end at the token count.
std::vector<std::vector<int32_t>> read_sam_documents(const Hdf5File& file);
// /arc/whitening (float32) and /arc/samples/* (one dataset per ArcSample field, equal lengths;
// held_out is int32 0 or 1).
void write_arc_arrays(Hdf5File& file, const ArcCalibration& arc);
std::vector<float> read_arc_whitening(const Hdf5File& file);
std::vector<ArcSample> read_arc_samples(const Hdf5File& file);

}  // namespace specd
