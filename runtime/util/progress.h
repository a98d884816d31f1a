#pragma once
// Progress of a long command on stderr: "bench: pld 3/20, 2.1 s elapsed, 1.4/s, ETA 12 s".
// Results go to stdout, so progress never mixes with them. On a terminal the line is rewritten in
// place and erased when done or destroyed (an error unwinding): whatever follows, results or an
// error, starts on a clean line, and an error is the only line the command leaves on stderr.
// Elsewhere (a log file, a batch job) a whole line is written after each step at most once per
// log interval (60 s; none for a command that finishes sooner), so a long calibration's log says
// how far it got without filling with rewrites.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace specd {

class Progress {
 public:
  // `unit` names what is counted in the rate ("prompts", "requests").
  Progress(int64_t total, std::string label, std::string unit = "items");
  static constexpr double kLogIntervalS = 60;
  // The same, drawn on `out` as a terminal (interactive) or not; for tests.
  Progress(int64_t total, std::string label, std::string unit, std::FILE* out, bool interactive,
           double log_interval_s = kLogIntervalS);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Says what runs before the counted work starts ("measuring the forward-cost curves").
  void note(const std::string& what);
  // One more finished; `what` says which.
  void step(const std::string& what);
  // Erases the line (before printing results; the destructor does it too).
  void done();
  int64_t finished() const { return finished_; }
  double elapsed_s() const;

 private:
  void draw(const std::string& text);

  int64_t total_, finished_ = 0;
  std::string label_, unit_;
  std::FILE* out_;
  bool interactive_;
  double log_interval_s_;
  double logged_s_ = 0;  // elapsed_s() at the last logged line (non-interactive)
  bool drawn_ = false;  // a line is on screen and not yet ended
  std::chrono::steady_clock::time_point start_;
};

}  // namespace specd
