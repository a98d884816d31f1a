#pragma once
// The work store of a calibration in progress, so an interrupted run resumes without losing
// finished prompts (e.g. DIR.partial/journal.sqlite beside the artifact DIR it will become).
// Each prompt's results are committed in one SQLite transaction: a process killed at any moment
// loses at most the prompt in flight and never records anything twice.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/artifact.h"

namespace specd {

namespace sqlite {
class Database;
}

class CalibrationJournal {
 public:
  // Creates PATH (and its folder) holding `identity`: what makes two runs the same calibration
  // (policy, the pair's fingerprints, the prompts' sha256, shard, seed, sampling, options), or,
  // with `resume`, reopens the journal there. InputError naming PATH when it exists and resume is
  // false ("an interrupted calibration is there: pass --resume or delete it"), when resuming with
  // another identity (naming the first field that differs), or when it is not a journal.
  // A journal that holds no finished prompt or run (a run refused or killed before its first) is
  // replaced whatever its identity: nothing is lost, and the corrected rerun is not blocked. So is
  // one whose work reached the artifact ARTIFACT_DIR (delivered()) before its run was stopped.
  CalibrationJournal(const std::string& path, const nlohmann::json& identity, bool resume, const std::string& artifact_dir = "");
  // True when PATH is a journal holding at least one finished prompt or sweep run, or a file this
  // class cannot read (kept, never replaced).
  static bool holds_work(const std::string& path);
  // True when PATH's run wrote its artifact ARTIFACT_DIR and was stopped before deleting PATH: the
  // artifact's manifest changed after mark_delivery(). Writing the artifact and deleting the
  // journal are two steps, so a kill between them leaves both; this tells that journal from one
  // whose artifact was never written.
  static bool delivered(const std::string& path, const std::string& artifact_dir);
  ~CalibrationJournal();
  CalibrationJournal(const CalibrationJournal&) = delete;
  CalibrationJournal& operator=(const CalibrationJournal&) = delete;

  const std::string& path() const { return path_; }
  const nlohmann::json& identity() const { return identity_; }

  // Indices of the prompts of `policy` already recorded.
  std::set<int32_t> finished_prompts(const std::string& policy);

  // One prompt's row and its rejection events, in one transaction. A prompt recorded twice is an
  // InputError (the transaction rolls back, the first record stays).
  void record_prompt(const std::string& policy, const CalibratedPrompt& prompt, const std::vector<CsdRejection>& rejections);
  // One prompt's row and its SAM corpus document (the target's answer), in one transaction.
  void record_document(const std::string& policy, const CalibratedPrompt& prompt, const std::vector<int32_t>& document);

  // One prompt's row and its ARC-Decode samples, in one transaction (as record_prompt).
  void record_arc_samples(const std::string& policy, const CalibratedPrompt& prompt, const std::vector<ArcSample>& samples);

  // One finished run of a parameter sweep (specd calibrate sweep), in one transaction; a run
  // recorded twice is an InputError.
  void record_sweep_run(const SweepRun& run);
  std::vector<SweepRun> sweep_runs();  // by index

  std::vector<CalibratedPrompt> prompts(const std::string& policy);  // by index
  std::vector<CsdRejection> rejections(const std::string& policy);   // by (prompt, step, depth), then as recorded
  std::vector<std::vector<int32_t>> documents(const std::string& policy);  // in the order of prompts(policy)
  std::vector<ArcSample> arc_samples(const std::string& policy);  // by (prompt, step), then as recorded

  // Notes that this run (the first or a resumption) decodes on `machine` (machine_json) and returns
  // every machine the journal's runs decoded on, in the order first seen. A resumed calibration's
  // decoding time sums its runs', so it belongs to one machine only when all ran there.
  std::vector<nlohmann::json> note_machine(const nlohmann::json& machine);
  // Notes ARTIFACT_DIR's manifest as it is before this run writes it, holding the artifact's
  // exclusive lock so that the next change of the manifest is this run's write
  // (deliver_to_artifact, calibrate/artifact_update.h, does both).
  void mark_delivery(const std::string& artifact_dir);
  // Closes and deletes the journal file (once the artifact is written). The object is unusable after.
  void remove();

 private:
  void insert_prompt(const std::string& policy, const CalibratedPrompt& prompt);

  std::string path_;
  nlohmann::json identity_;
  std::unique_ptr<sqlite::Database> db_;
};

}  // namespace specd
