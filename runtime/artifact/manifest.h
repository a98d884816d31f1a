#pragma once
// manifest.json, the artifact's table of contents (schemas/manifest.schema.json): what pair it
// is for, what made it, how each calibration was run, and each file's sha256 and schema version.
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "artifact/artifact.h"

namespace specd {

struct ManifestFile {
  std::string sha256;
  int64_t schema_version = 0;
};

struct Manifest {
  // Everything the manifest says: pair, tool, creation time and the provenance of each
  // calibration present. No rows (prompts, rejections, pairs, documents, samples) and no
  // thresholds: those live in the other two files. An arc calibration has its settings and, in
  // `constants`, only the "all" constants the manifest repeats (the tables hold every bucket).
  Artifact header;
  std::map<std::string, ManifestFile> files;  // calibration.sqlite and calibration.h5
};

nlohmann::json fingerprint_json(const ModelFingerprint& fingerprint);
nlohmann::json provenance_json(const CalibrationProvenance& provenance);
// An arc calibration's manifest entry: its provenance plus delta, top_k (K), mu, epsilon and the
// "all" constants (null when none were fitted, e.g. after a merge of shards).
nlohmann::json arc_calibration_json(const ArcCalibration& arc);
nlohmann::json arc_constants_json(const ArcConstants& constants);
// A sweep's manifest entry: its provenance plus family, lossless, grid, planned_runs, bounds,
// chosen (a run index or null) and choice (why); its runs live in calibration.sqlite.
nlohmann::json sweep_calibration_json(const SweepCalibration& sweep);
nlohmann::json manifest_json(const Artifact& artifact, const std::map<std::string, ManifestFile>& files);

// Validates every field; InputError "WHERE: problem" on the first problem. An unknown format
// version is refused before anything else is read: "WHERE: schema version 2, this specd reads 1".
Manifest parse_manifest(const nlohmann::json& manifest, const std::string& where);
CalibrationProvenance parse_provenance(const nlohmann::json& provenance, const std::string& where,
                                       const std::string& prefix);
// DIR/manifest.json, read and parsed.
Manifest read_manifest(const std::string& dir);

}  // namespace specd
