#pragma once
// Workload files (data/workloads/*.jsonl): one prompt per line, as
// {"id", "category", "prompt" | "turns": [...], "max_new_tokens", "reference" | "references": [...],
// "source", "license"}.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace specd {

struct WorkloadItem {
  std::string id;
  std::string category;
  std::vector<std::string> turns;  // a single prompt is one turn
  int64_t max_new_tokens = 0;
  std::vector<std::string> references;  // none, or one per turn (for quality checks such as chrF)
  std::string source, license;
};

// Throws InputError "PATH:LINE: problem" for an unreadable file or a malformed line.
std::vector<WorkloadItem> read_workload(const std::string& path);
// The same for a file's text already read (PATH names it in errors).
std::vector<WorkloadItem> parse_workload(std::string_view text, const std::string& path);

// A workload suite: DIR/C.jsonl for each category C in `categories`, or every DIR/*.jsonl in name
// order when it is empty; the first `per_file` items of each file. InputError naming DIR when it is
// not a directory or holds no items.
std::vector<WorkloadItem> read_workload_suite(const std::string& dir, const std::vector<std::string>& categories, int64_t per_file);

}  // namespace specd
