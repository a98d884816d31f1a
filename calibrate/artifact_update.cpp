#include "calibrate/artifact_update.h"

#include <filesystem>

#include "artifact/artifact_reader.h"
#include "artifact/fingerprint.h"
#include "calibrate/artifact_writer.h"
#include "calibrate/calibration_journal.h"
#include "io/directory_lock.h"

namespace specd {
namespace {

// artifact_for without taking the shared lock (the caller holds the exclusive one).
Artifact read_or_start(const std::string& dir, const std::string& target_dir, const std::string& draft_dir, bool locked) {
  std::error_code error;
  if (std::filesystem::exists(dir, error) && !std::filesystem::is_empty(dir, error)) {
    Artifact existing = locked ? read_artifact_locked(dir) : read_artifact(dir);
    check_pair(dir, existing, target_dir, draft_dir);
    // The writer stamps the time and this specd anew.
    existing.created_at.clear();
    existing.tool_version.clear();
    existing.git_commit.clear();
    return existing;
  }
  Artifact artifact;
  artifact.target = fingerprint_model(target_dir);
  if (!draft_dir.empty()) artifact.draft = fingerprint_model(draft_dir);
  return artifact;
}

}  // namespace

Artifact artifact_for(const std::string& dir, const std::string& target_dir, const std::string& draft_dir) {
  return read_or_start(dir, target_dir, draft_dir, /*locked=*/false);
}

void update_artifact(const std::string& dir, const std::string& target_dir, const std::string& draft_dir,
                     const std::function<void(Artifact&)>& add) {
  DirectoryLock lock(dir, DirectoryLock::Mode::Exclusive);
  Artifact artifact = read_or_start(dir, target_dir, draft_dir, /*locked=*/true);
  add(artifact);
  write_artifact(dir, artifact);
}

void deliver_to_artifact(CalibrationJournal& journal, const std::string& dir, const std::string& target_dir,
                         const std::string& draft_dir, const std::function<void(Artifact&)>& add) {
  update_artifact(dir, target_dir, draft_dir, [&](Artifact& artifact) {
    journal.mark_delivery(dir);
    add(artifact);
  });
  journal.remove();
}

}  // namespace specd
