// specd artifact diff's comparison: a merge of shards and the unsharded run hold the same data; a
// changed row, setting or calibration is named; what differs between any two runs is not.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "artifact_fixtures.h"
#include "calibrate/artifact_diff.h"

using namespace specd;

namespace {

// The parts named, "csd.rejections" for "csd.rejections: 11 rows vs 11, ...".
std::set<std::string> parts(const std::vector<std::string>& lines) {
  std::set<std::string> names;
  for (const std::string& line : lines) names.insert(line.substr(0, line.find(':')));
  return names;
}

}  // namespace

TEST_CASE("artifact diff: merged shards hold what the whole run holds", "[artifact][diff]") {
  test::ScopedTempDir tmp("diff");
  const Artifact whole = test::synthetic_artifact(11);
  for (int32_t count : {2, 3}) CHECK(artifact_differences(test::merge_written_shards(whole, count, tmp), whole).empty());
  CHECK(artifact_differences(whole, whole).empty());
}

TEST_CASE("artifact diff: where and when a run happened is not compared, what it calibrated is", "[artifact][diff]") {
  const Artifact whole = test::synthetic_artifact(11);
  Artifact moved = whole;
  moved.created_at = "2000-01-01T00:00:00Z";
  moved.target.path = "/elsewhere/target";
  moved.csd->provenance.command_line = "calibrate csd --out elsewhere";
  moved.csd->provenance.prompts_path = "/elsewhere/prompts.jsonl";
  moved.csd->provenance.wall_s += 100;
  moved.csd->provenance.job = {{"scheduler", "slurm"}, {"job_id", "7"}, {"task_id", "0"}};
  moved.csd->prompts[0].wall_ms += 5;
  CHECK(artifact_differences(moved, whole).empty());

  Artifact changed = whole;
  changed.csd->rejections.at(4).logit_gap += 0.5f;
  changed.csd->provenance.seed += 1;
  changed.arc->whitening.pop_back();
  changed.sam_corpus.reset();
  changed.target.vocab_size += 1;
  const std::vector<std::string> lines = artifact_differences(changed, whole);
  CHECK(parts(lines) == std::set<std::string>{"pair.target", "csd.settings", "csd.rejections", "arc.whitening", "sam_corpus"});
  const size_t n = whole.csd->rejections.size();
  CHECK(std::count(lines.begin(), lines.end(),
                   "csd.rejections: " + std::to_string(n) + " rows vs " + std::to_string(n) + ", first difference at row 4") == 1);
  CHECK(std::count(lines.begin(), lines.end(), "sam_corpus: only in the second") == 1);
}

TEST_CASE("artifact diff: a sweep's timings and the choice they make are not compared, its quality columns are", "[artifact][diff]") {
  Artifact a = test::synthetic_artifact(5), b = a;
  a.sweeps = {test::pld_sweep(120, 2.5)};
  b.sweeps = {test::pld_sweep(180, 2.5)};
  a.thresholds.push_back({"pld", "tokens", 5, "sweep run 1 of 3"});
  CHECK(artifact_differences(a, b).empty());
  b.sweeps = {test::pld_sweep(180, 2.4)};
  CHECK(parts(artifact_differences(a, b)) == std::set<std::string>{"sweep.pld.runs"});
  b.sweeps.clear();
  CHECK(artifact_differences(a, b) == std::vector<std::string>{"sweep.pld: only in the first"});
}
