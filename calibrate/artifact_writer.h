#pragma once
// Writing a model pair's calibration artifact (the format: schemas/README.md).
#include <string>

#include "artifact/artifact.h"

namespace specd {

// Writes DIR atomically: calibration.sqlite (one transaction), calibration.h5 and last
// manifest.json with both files' sha256 go to DIR.tmp-XXXXXX beside DIR, which is fsynced and
// swapped into place (AtomicDirectoryWriter); on any error no DIR and no temporary directory are
// left (an existing DIR stays as it was). Before writing, the artifact is put in its stored order
// (prompts by index, the SAM documents with them, rejections by (prompt, step, depth), ARC
// samples by (prompt, step) (stable: a step's samples keep their order; ARC constants and audit
// rows keep theirs, "all" first),
// thresholds by (policy, name)), CSD pairs are derived when empty, the derived counts
// (consistency.h) are added to each provenance's counts when missing, and empty created_at /
// tool_version / git_commit become now (UTC) and this specd's. The files are always of the
// current versions (artifact.h), whatever `artifact.schema_version` says: an artifact read from
// version 1 is written back as version 2.
// Refuses (InputError naming DIR) to replace an existing DIR that is not an artifact or an empty
// directory. An artifact the reader would refuse (counts that disagree with the rows, pairs that
// do not summarize the rejections, prompt indices twice) is a bug of the caller:
// std::invalid_argument.
void write_artifact(const std::string& dir, const Artifact& artifact);

}  // namespace specd
