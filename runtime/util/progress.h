#pragma once
// Progress of a long command on stderr, rewritten in place: "bench: pld 3/20, 2.1 s elapsed,
// 1.4/s, ETA 12 s". Results go to stdout, so progress never mixes with them.
#include <chrono>
#include <cstdint>
#include <string>

namespace specd {

class Progress {
 public:
  // `unit` names what is counted in the rate ("prompts", "requests").
  Progress(int64_t total, std::string label, std::string unit = "items");
  // One more finished; `what` says which.
  void step(const std::string& what);
  // Ends the line (call once, before printing results).
  void done();
  int64_t finished() const { return finished_; }
  double elapsed_s() const;

 private:
  int64_t total_, finished_ = 0;
  std::string label_, unit_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace specd
