#include "bench/drafting_stats.h"

#include <algorithm>
#include <cstdio>

namespace specd {

void DraftingStats::add(const StepTrace& step) {
  if (step.detail.drafting.empty()) return;
  ++steps;
  bool reused = step.accepted_length >= 1;
  for (const auto& [name, value] : step.detail.drafting) {
    const std::string* label = value.label();
    if (!label) continue;
    ++values[name][*label];
    if (name == "reuse" && (*label == "mismatch" || *label == "none")) reused = false;
  }
  if (!reused) return;
  ++reuse_steps;
  reuse_accepted += step.accepted_length;
  ++accepted_length[std::min<int32_t>(step.accepted_length, 5) - 1];
}

void DraftingStats::add(const std::vector<StepTrace>& trace) {
  for (const StepTrace& step : trace) add(step);
}

void DraftingStats::merge(const DraftingStats& other) {
  steps += other.steps;
  for (const auto& [field, counts] : other.values)
    for (const auto& [value, n] : counts) values[field][value] += n;
  reuse_steps += other.reuse_steps;
  reuse_accepted += other.reuse_accepted;
  for (size_t i = 0; i < accepted_length.size(); ++i) accepted_length[i] += other.accepted_length[i];
}

nlohmann::ordered_json DraftingStats::to_json() const {
  nlohmann::ordered_json out;
  out["steps"] = steps;
  out["values"] = nlohmann::ordered_json::object();
  for (const auto& [field, counts] : values)
    for (const auto& [value, n] : counts) out["values"][field][value] = n;
  out["reuse_steps"] = reuse_steps;
  out["reuse_mean_accepted"] = reuse_steps > 0 ? static_cast<double>(reuse_accepted) / reuse_steps : 0.0;
  out["accepted_length"] = {{"1", accepted_length[0]}, {"2", accepted_length[1]}, {"3", accepted_length[2]},
                            {"4", accepted_length[3]}, {">=5", accepted_length[4]}};
  return out;
}

std::vector<std::string> DraftingStats::summary_lines() const {
  std::vector<std::string> lines;
  if (steps == 0) return lines;
  char buffer[64];
  auto percent = [&](int64_t n, int64_t of) {
    std::snprintf(buffer, sizeof buffer, "%.1f", of > 0 ? 100.0 * static_cast<double>(n) / of : 0.0);
    return std::string(buffer);
  };
  for (const auto& [field, counts] : values) {
    std::string line = field;
    for (const auto& [value, n] : counts) line += " " + value + " " + percent(n, steps);
    lines.push_back(line + " (% of " + std::to_string(steps) + " steps)");
  }
  static const char* labels[] = {"1", "2", "3", "4", ">=5"};
  std::string line = "accepted length";
  for (size_t i = 0; i < accepted_length.size(); ++i) line += std::string(" ") + labels[i] + ": " + percent(accepted_length[i], reuse_steps);
  char mean[32];
  std::snprintf(mean, sizeof mean, ", mean %.2f", reuse_steps > 0 ? static_cast<double>(reuse_accepted) / reuse_steps : 0.0);
  lines.push_back(line + mean + " (% of " + std::to_string(reuse_steps) + " reuse steps, " + percent(reuse_steps, steps) + "% of steps)");
  return lines;
}

}  // namespace specd
