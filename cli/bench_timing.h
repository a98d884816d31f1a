#pragma once
// Timing helpers for specd bench.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace specd {
class LlamaModel;
}

namespace specd::cli {

double median(std::vector<double> values);

// For each n in `sizes`, `repeats` timings (ms) of one forward of n chain tokens with all logits
// on a cache holding `prefix` tokens; the new rows are truncated away after each. The sizes take
// turns within each repeat, so that a busy spell of the machine hits them alike and their ratios
// (what the draft budget uses) stay right. Includes a warm-up forward per size.
std::vector<std::vector<double>> time_forwards(const LlamaModel& model, int64_t prefix, const std::vector<int64_t>& sizes,
                                               int repeats, const std::function<void()>& on_repeat);

// "bench: decode 3/20, 2.1 s elapsed, ETA 12 s" on stderr, rewritten in place.
class BenchProgress {
 public:
  explicit BenchProgress(int64_t total, std::string label = "bench");
  void step(const std::string& what);
  void done();

 private:
  int64_t total_, finished_ = 0;
  std::string label_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace specd::cli
