#pragma once
// Drafting statistics over step traces (AdaPLD's Tables 10-12, ReSpec's trigger rate): sums the
// drafting details of the steps (StepDetail::drafting). Generic: for every labelled value, how
// many steps held each label (retrieval = "lexical" -> retrieval/lexical += 1); plus the distribution of
// accepted lengths 1, 2, 3, 4, >= 5 over the steps that reused a draft (accepted_length >= 1 and
// a "reuse" field, when there is one, other than "mismatch" or "none").
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trace/trace_records.h"

namespace specd {

struct DraftingStats {
  int64_t steps = 0;  // steps with a drafting object
  std::map<std::string, std::map<std::string, int64_t>> values;  // field -> value -> steps
  int64_t reuse_steps = 0, reuse_accepted = 0;  // steps that reused a draft, their accepted tokens
  std::array<int64_t, 5> accepted_length{};     // of reuse steps: 1, 2, 3, 4, >= 5

  // Adds one step; a step without a drafting detail is skipped.
  void add(const StepTrace& step);
  void add(const std::vector<StepTrace>& steps);
  void merge(const DraftingStats& other);
  bool empty() const { return steps == 0; }
  nlohmann::ordered_json to_json() const;
  // Compact lines: "retrieval lexical 61.2 semantic 26.2 none 12.7 (% of 120 steps)" per field,
  // then the accepted-length distribution.
  std::vector<std::string> summary_lines() const;
};

}  // namespace specd
