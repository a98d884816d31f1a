#pragma once
// What built this binary: recorded in the artifacts and traces it writes.
namespace specd {

// The CMake project version, e.g. "0.1.0".
const char* specd_version();
// `git rev-parse HEAD` of the source tree at configure time (40 hex digits), or "unknown" when it
// was not a git checkout. The build reconfigures when HEAD or the current branch moves.
const char* specd_git_commit();

}  // namespace specd
