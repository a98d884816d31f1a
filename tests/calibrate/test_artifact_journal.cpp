// The journal of a calibration in progress: finished prompts survive a restart, a journal is never
// reused by accident or by another setup, and a prompt is recorded whole or not at all.
#include <catch2/catch.hpp>

#include <filesystem>

#include "artifact_fixtures.h"
#include "calibrate/artifact_writer.h"
#include "calibrate/calibration_journal.h"
#include "killed_writer.h"
#include "util/error.h"

using namespace specd;
using test::ScopedTempDir;

namespace {

nlohmann::json identity() {
  return {{"policy", "csd"},
          {"pair", {{"target", test::fake_fingerprint("target").config_sha256}, {"draft", nullptr}}},
          {"prompts_sha256", test::fake_fingerprint("p").config_sha256},
          {"shard", {{"index", 0}, {"count", 2}}},
          {"seed", 5},
          {"sampling", {{"temperature", 0.0}, {"top_k", 0}, {"top_p", 1.0}}},
          {"options", {{"gamma", 6}}}};
}

std::vector<CsdRejection> rejections_of(const Artifact& a, int32_t prompt) {
  std::vector<CsdRejection> out;
  for (const CsdRejection& r : a.csd->rejections)
    if (r.prompt == prompt) out.push_back(r);
  return out;
}

}  // namespace

TEST_CASE("journal: recorded prompts survive a reopen with resume", "[artifact][journal]") {
  ScopedTempDir tmp("journal");
  const std::string path = tmp.file("art.partial/journal.sqlite");
  const Artifact a = test::synthetic_artifact(6);
  {
    CalibrationJournal journal(path, identity(), false);
    CHECK(journal.finished_prompts("csd").empty());
    for (int32_t i : {4, 0, 2}) journal.record_prompt("csd", a.csd->prompts[i], rejections_of(a, i));
    journal.record_document("sam_corpus", a.sam_corpus->prompts[3], a.sam_corpus->documents[3]);
    journal.record_document("sam_corpus", a.sam_corpus->prompts[1], a.sam_corpus->documents[1]);
  }
  CalibrationJournal journal(path, identity(), true);
  CHECK(journal.finished_prompts("csd") == std::set<int32_t>{0, 2, 4});
  CHECK(journal.finished_prompts("sam_corpus") == std::set<int32_t>{1, 3});
  CHECK(journal.prompts("csd") == std::vector<CalibratedPrompt>{a.csd->prompts[0], a.csd->prompts[2], a.csd->prompts[4]});
  std::vector<CsdRejection> expected;
  for (int32_t i : {0, 2, 4})
    for (const CsdRejection& r : rejections_of(a, i)) expected.push_back(r);
  sort_rejections(expected);
  CHECK(journal.rejections("csd") == expected);
  CHECK(journal.rejections("sam_corpus").empty());
  CHECK(journal.documents("sam_corpus") == std::vector<std::vector<int32_t>>{a.sam_corpus->documents[1], a.sam_corpus->documents[3]});

  // The rest, then the journal goes.
  for (int32_t i : {1, 3, 5}) journal.record_prompt("csd", a.csd->prompts[i], rejections_of(a, i));
  CHECK(journal.prompts("csd") == a.csd->prompts);
  CHECK(journal.rejections("csd") == a.csd->rejections);
  journal.remove();
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("journal: the machines its runs decoded on, each once, in the order first seen", "[artifact][journal]") {
  ScopedTempDir tmp("journal-machines");
  const std::string path = tmp.file("art.csd-journal.sqlite");
  const Artifact a = test::synthetic_artifact(2);
  const nlohmann::json here = {{"cpu", "EPYC"}, {"threads", 2}}, there = {{"cpu", "Xeon"}, {"threads", 2}};
  {
    CalibrationJournal journal(path, identity(), false);
    CHECK(journal.note_machine(here) == std::vector<nlohmann::json>{here});
    CHECK(journal.note_machine(here) == std::vector<nlohmann::json>{here});
    journal.record_prompt("csd", a.csd->prompts[0], rejections_of(a, 0));
  }
  CalibrationJournal resumed(path, identity(), true);
  CHECK(resumed.note_machine(there) == std::vector<nlohmann::json>{here, there});
  CHECK(resumed.note_machine(here) == std::vector<nlohmann::json>{here, there});
}

TEST_CASE("journal: an existing journal is refused without resume, or for another setup", "[artifact][journal]") {
  ScopedTempDir tmp("journal");
  const std::string path = tmp.file("journal.sqlite");
  const Artifact a = test::synthetic_artifact(6);
  {
    CalibrationJournal journal(path, identity(), false);
    journal.record_prompt("csd", a.csd->prompts[0], {});  // finished work: what refusing protects
  }
  CHECK(CalibrationJournal::holds_work(path));
  CHECK_THROWS_WITH(CalibrationJournal(path, identity(), false),
                    path + ": an interrupted calibration is there: pass --resume or delete it");
  nlohmann::json other = identity();
  other["seed"] = 6;
  CHECK_THROWS_WITH(CalibrationJournal(path, other, true),
                    path + ": an interrupted calibration with other settings is there (seed: 5 there, 6 now): "
                           "rerun it with its settings or delete it");
  other = identity();
  other["options"]["gamma"] = 4;
  CHECK_THROWS_WITH(CalibrationJournal(path, other, true), Catch::Contains("(options/gamma: 6 there, 4 now)"));
  CHECK_NOTHROW(CalibrationJournal(path, identity(), true));
  CHECK_NOTHROW(CalibrationJournal(tmp.file("fresh.sqlite"), identity(), true));  // nothing to resume: a new journal

  test::write_text_file(tmp.file("notes.sqlite"), std::string(4096, 'x'));
  CHECK_THROWS_AS(CalibrationJournal(tmp.file("notes.sqlite"), identity(), true), InputError);
}

TEST_CASE("journal: one whose writer was killed inside a transaction holds only what it committed", "[artifact][journal]") {
  ScopedTempDir tmp("journal");
  const std::string path = tmp.file("journal.sqlite");
  { CalibrationJournal journal(path, identity(), false); }  // created; no prompt finished
  // Killed while noting its machine: a hot journal, which a read-only connection cannot roll back.
  test::kill_writer_inside_transaction(
      path, [](int i) { return "INSERT INTO machines (json) VALUES ('" + std::to_string(i) + std::string(1000, 'x') + "')"; });
  CHECK_FALSE(CalibrationJournal::holds_work(path));  // rolled back: nothing finished, not "unreadable"
  CHECK_NOTHROW(CalibrationJournal(path, identity(), false));
}

TEST_CASE("journal: one left with no finished work (a refused or killed run) does not block the corrected rerun", "[artifact][journal]") {
  ScopedTempDir tmp("journal");
  const std::string path = tmp.file("journal.sqlite");
  { CalibrationJournal journal(path, identity(), false); }  // created, then the run was refused
  CHECK_FALSE(CalibrationJournal::holds_work(path));
  nlohmann::json corrected = identity();
  corrected["seed"] = 6;
  CHECK_NOTHROW(CalibrationJournal(path, corrected, false));  // replaced: nothing was recorded
  CHECK_NOTHROW(CalibrationJournal(path, identity(), true));   // with --resume and other settings too
  test::write_text_file(tmp.file("notes.sqlite"), std::string(4096, 'x'));
  CHECK(CalibrationJournal::holds_work(tmp.file("notes.sqlite")));  // not a journal: kept, refused
  CHECK_THROWS_AS(CalibrationJournal(tmp.file("notes.sqlite"), identity(), false), InputError);
  CHECK(std::filesystem::exists(tmp.file("notes.sqlite")));
}

TEST_CASE("journal: one whose run wrote its artifact before it was stopped is told from one whose run did not", "[artifact][journal]") {
  // Writing the artifact and deleting the journal are two steps: a kill between them leaves both.
  ScopedTempDir tmp("journal");
  const std::string dir = tmp.file("art");
  const std::string path = dir + ".csd-journal.sqlite";
  const Artifact before = test::synthetic_artifact(5), after = test::synthetic_artifact(6);
  auto run_until_delivery = [&](const nlohmann::json& id) {
    CalibrationJournal journal(path, id, false, dir);
    journal.record_prompt("csd", after.csd->prompts[0], rejections_of(after, 0));
    journal.mark_delivery(dir);  // then killed, before or after the write
  };
  SECTION("a new artifact") {
    run_until_delivery(identity());
    CHECK_FALSE(CalibrationJournal::delivered(path, dir));  // killed before the write: nothing is there
    CHECK_THROWS_WITH(CalibrationJournal(path, identity(), false, dir), Catch::Contains("pass --resume"));
    write_artifact(dir, after);
  }
  SECTION("an artifact that held other calibrations") {
    write_artifact(dir, before);
    run_until_delivery(identity());
    CHECK_FALSE(CalibrationJournal::delivered(path, dir));  // the manifest is the one noted
    CHECK_THROWS_WITH(CalibrationJournal(path, identity(), false, dir), Catch::Contains("pass --resume"));
    CHECK(CalibrationJournal(path, identity(), true, dir).finished_prompts("csd") == std::set<int32_t>{0});
    write_artifact(dir, after);
  }
  CHECK(CalibrationJournal::holds_work(path));
  CHECK(CalibrationJournal::delivered(path, dir));
  CHECK_FALSE(CalibrationJournal::delivered(path, tmp.file("elsewhere")));
  CHECK_FALSE(CalibrationJournal::delivered(path, ""));
  CHECK_THROWS_WITH(CalibrationJournal(path, identity(), false), Catch::Contains("pass --resume"));  // no artifact named: kept
  nlohmann::json next = identity();
  next["seed"] = 6;
  CalibrationJournal replaced(path, next, false, dir);  // the next run, other settings and all, is not blocked
  CHECK(replaced.finished_prompts("csd").empty());
  CHECK(replaced.identity() == next);
}

TEST_CASE("journal: a prompt whose record fails leaves nothing behind", "[artifact][journal]") {
  ScopedTempDir tmp("journal");
  const std::string path = tmp.file("journal.sqlite");
  const Artifact a = test::synthetic_artifact(6);
  CalibrationJournal journal(path, identity(), false);
  journal.record_prompt("csd", a.csd->prompts[0], rejections_of(a, 0));

  // The prompt row goes in first; the third rejection then violates a CHECK and the whole
  // transaction rolls back, as it would if the process died there.
  CalibratedPrompt prompt = a.csd->prompts[1];
  prompt.rejections = 3;
  std::vector<CsdRejection> broken = {{1, 0, 0, 1, 2, -1.f}, {1, 1, 0, 1, 2, -1.f}, {1, 2, 0, -1, 2, -1.f}};
  CHECK_THROWS_AS(journal.record_prompt("csd", prompt, broken), InputError);
  CHECK(journal.finished_prompts("csd") == std::set<int32_t>{0});
  CHECK(journal.rejections("csd") == rejections_of(a, 0));

  // The same prompt twice: refused, the first record stays as it was.
  CHECK_THROWS_AS(journal.record_prompt("csd", a.csd->prompts[0], {{0, 9, 0, 1, 2, -1.f}}), InputError);
  CHECK(journal.rejections("csd") == rejections_of(a, 0));

  // A retry of the failed prompt succeeds.
  broken[2].draft_token = 3;
  journal.record_prompt("csd", prompt, broken);
  CHECK(journal.finished_prompts("csd") == std::set<int32_t>{0, 1});
}
