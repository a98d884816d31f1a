#pragma once
// `specd artifact verify`: every check this specd can make of an artifact directory.
#include <functional>
#include <string>
#include <vector>

#include "artifact/artifact.h"

namespace specd {

// One line "DIR/FILE: problem" per problem found: the manifest's fields and schema versions, each
// file's sha256 against the manifest, SQLite's full integrity_check, the tables and columns of
// schemas/artifact.sql, the HDF5 datasets with their dtypes and lengths, the counts the manifest
// records against the rows, every value in its domain (value_domains.h), `more` of the whole
// artifact read (the CLI passes the method table's threshold_problems, which this layer does not
// know), and, when target_dir / draft_dir are not "", the fingerprints of those models. Empty
// when all is well. Later checks that need a sound file are skipped when it is not.
using ArtifactCheck = std::function<std::vector<std::string>(const Artifact&)>;
std::vector<std::string> verify_artifact(const std::string& dir, const std::string& target_dir, const std::string& draft_dir,
                                         const ArtifactCheck& more = {});

}  // namespace specd
