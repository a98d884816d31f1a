#pragma once
// --save-memory: CSD's correction memory as decoding left it, written back as a new artifact.
// The online rejections join the calibrated ones (under one extra prompts row, "online"), so the
// new artifact's pairs are again the summary of its rejections and its provenance says how it grew.
#include <string>

#include "speculative/correction_memory.h"

namespace specd {

// Reads the artifact in `artifact_dir`, adds `memory`'s online records and writes the result to
// `out_dir` atomically.
void write_updated_memory(const std::string& artifact_dir, const CorrectionMemory& memory, const std::string& command_line,
                          const std::string& out_dir);

}  // namespace specd
