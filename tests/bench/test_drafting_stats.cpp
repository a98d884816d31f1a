// The bench's drafting statistics (AdaPLD's Tables 10-12, ReSpec's trigger rate) on hand-made
// step traces: counts of every labelled value of the steps' drafting details, and the accepted
// length distribution over the steps that reused a draft.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "bench/drafting_stats.h"

using namespace specd;

namespace {

StepTrace step(const std::string& detail, int32_t accepted) {
  StepTrace s;
  s.detail = parse_step_detail(detail, "test");
  s.accepted_length = accepted;
  return s;
}

std::string adapld(const std::string& retrieval, const std::string& reuse) {
  return R"({"drafting": {"retrieval": ")" + retrieval + R"(", "candidates": 3, "anchor": 7, "reuse": ")" + reuse + R"("}})";
}

}  // namespace

TEST_CASE("drafting stats count each field's values and the reuse steps' accepted lengths", "[bench][drafting-stats]") {
  std::vector<StepTrace> trace{
      step(adapld("lexical", "main"), 1),       step(adapld("lexical", "main"), 6),
      step(adapld("lexical", "branch"), 1),     step(adapld("semantic", "branch+succ"), 2),
      step(adapld("semantic", "mismatch"), 0),  step(adapld("none", "none"), 0),
      step(adapld("lexical", "main"), 4),       step(adapld("lexical", "main"), 5),
      step("", 3),                              // no detail: not a drafting step
      step(R"({"pruning": {"pruner": "entropy", "root_entropy_normalized": 0.5, "drafted": 5, "kept": 3}})", 2),  // no drafting
  };
  DraftingStats stats;
  stats.add(trace);
  CHECK(stats.steps == 8);
  CHECK(stats.values.at("retrieval") == std::map<std::string, int64_t>{{"lexical", 5}, {"semantic", 2}, {"none", 1}});
  CHECK(stats.values.at("reuse") ==
        std::map<std::string, int64_t>{{"main", 4}, {"branch", 1}, {"branch+succ", 1}, {"mismatch", 1}, {"none", 1}});
  CHECK(stats.values.count("candidates") == 0);  // numbers are not counted as values
  CHECK(stats.reuse_steps == 6);
  CHECK(stats.reuse_accepted == 1 + 6 + 1 + 2 + 4 + 5);
  CHECK(stats.accepted_length == std::array<int64_t, 5>{2, 1, 0, 1, 2});

  const auto json = stats.to_json();
  CHECK(json["values"]["retrieval"]["semantic"] == 2);
  CHECK(json["accepted_length"][">=5"] == 2);
  CHECK(json["reuse_mean_accepted"].get<double>() == Approx(19.0 / 6));
  const auto lines = stats.summary_lines();
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "retrieval lexical 62.5 none 12.5 semantic 25.0 (% of 8 steps)");
  CHECK(lines[2] == "accepted length 1: 33.3 2: 16.7 3: 0.0 4: 16.7 >=5: 33.3, mean 3.17 (% of 6 reuse steps, 75.0% of steps)");

  // ReSpec's trigger field, no reuse field: every step with an accepted token counts as reuse.
  DraftingStats respec;
  respec.add(step(R"({"drafting": {"trigger": "retrieve", "h_min": 0.4}})", 3));
  respec.add(step(R"({"drafting": {"trigger": "fallback"}})", 0));
  CHECK(respec.values.at("trigger") == std::map<std::string, int64_t>{{"fallback", 1}, {"retrieve", 1}});
  CHECK(respec.reuse_steps == 1);

  DraftingStats merged = stats;
  merged.merge(respec);
  CHECK(merged.steps == 10);
  CHECK(merged.values.at("trigger").at("retrieve") == 1);
  CHECK(merged.accepted_length[2] == 1);
  CHECK(DraftingStats{}.summary_lines().empty());
}
