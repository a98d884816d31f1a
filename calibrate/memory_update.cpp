#include "calibrate/memory_update.h"

#include <filesystem>

#include "artifact/artifact_reader.h"
#include "calibrate/artifact_writer.h"
#include "io/directory_lock.h"
#include "util/error.h"

namespace specd {

void write_updated_memory(const std::string& artifact_dir, const CorrectionMemory& memory, const std::string& command_line,
                          const std::string& out_dir) {
  // A read-modify-write when the two are one artifact: under its exclusive lock (io/directory_lock.h).
  DirectoryLock lock(out_dir, DirectoryLock::Mode::Exclusive);
  std::error_code ignored;
  const bool same = std::filesystem::weakly_canonical(artifact_dir, ignored) == std::filesystem::weakly_canonical(out_dir, ignored);
  Artifact artifact = same ? read_artifact_locked(artifact_dir) : read_artifact(artifact_dir);
  if (!artifact.csd) input_error(artifact_dir, "holds no CSD calibration to update");
  CsdCalibration& csd = *artifact.csd;
  int32_t online_prompt = 0;
  for (const CalibratedPrompt& p : csd.prompts) online_prompt = std::max(online_prompt, p.index + 1);
  CalibratedPrompt online;
  online.index = online_prompt;
  online.id = "online";
  online.category = "online";
  int32_t step = 0;
  for (const CorrectionMemory::Record& r : memory.online_log()) {
    csd.rejections.push_back(CsdRejection{online_prompt, step++, r.depth, r.draft_token, r.target_token, r.logit_gap});
    ++online.rejections;
  }
  csd.prompts.push_back(online);
  csd.pairs.clear();  // the writer summarizes the rejections again
  csd.provenance.counts = nlohmann::json::object();  // ... and derives the counts
  csd.provenance.options["online_update"] = {{"from", artifact_dir}, {"command_line", command_line}, {"records", memory.online_records()}};
  artifact.created_at.clear();
  artifact.tool_version.clear();
  artifact.git_commit.clear();
  write_artifact(out_dir, artifact);
}

}  // namespace specd
