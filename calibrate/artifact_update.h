#pragma once
// Adding one calibration to a pair's artifact while other calibrations may write it too: each
// reads the artifact when it starts, and writes only its own part at the end, under the
// artifact's exclusive lock (io/directory_lock.h) after reading it again, so two calibrations of
// one artifact running at once both land.
#include <functional>
#include <string>

#include "artifact/artifact.h"

namespace specd {

class CalibrationJournal;

// The artifact a calibration starts from: the one in `dir` (bound to the pair; InputError when it
// was made for another), or a new one for the pair when `dir` is absent or empty.
Artifact artifact_for(const std::string& dir, const std::string& target_dir, const std::string& draft_dir);

// Under DIR's exclusive lock: artifact_for(DIR) again (another writer may have changed or created
// it since), `add` puts this calibration's part in, and the result is written (write_artifact).
void update_artifact(const std::string& dir, const std::string& target_dir, const std::string& draft_dir,
                     const std::function<void(Artifact&)>& add);

// update_artifact for a calibration that kept `journal`: under the lock, the journal notes DIR's
// manifest before the write (CalibrationJournal::mark_delivery), and it is deleted after, so that a
// run killed between the two leaves a journal the next run knows as delivered.
void deliver_to_artifact(CalibrationJournal& journal, const std::string& dir, const std::string& target_dir,
                         const std::string& draft_dir, const std::function<void(Artifact&)>& add);

}  // namespace specd
