#include "util/progress.h"

#include <unistd.h>

namespace specd {
namespace {

// A line is drawn as a carriage return, the text, then this "erase to the end of the line" (a
// shorter line leaves no tail of the longer one before it).
constexpr const char* kEraseLine = "\033[K";

}  // namespace

Progress::Progress(int64_t total, std::string label, std::string unit)
    : Progress(total, std::move(label), std::move(unit), stderr, ::isatty(STDERR_FILENO) == 1) {}

Progress::Progress(int64_t total, std::string label, std::string unit, std::FILE* out, bool interactive, double log_interval_s)
    : total_(total), label_(std::move(label)), unit_(std::move(unit)), out_(out), interactive_(interactive),
      log_interval_s_(log_interval_s), start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() { done(); }

double Progress::elapsed_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

void Progress::draw(const std::string& text) {
  if (!interactive_) return;
  std::fprintf(out_, "\r%s: %s%s", label_.c_str(), text.c_str(), kEraseLine);
  std::fflush(out_);
  drawn_ = true;
}

void Progress::note(const std::string& what) { draw(what); }

void Progress::step(const std::string& what) {
  ++finished_;
  const double elapsed = elapsed_s();
  const double rate = elapsed > 0 ? finished_ / elapsed : 0;
  const double eta = finished_ ? elapsed / finished_ * (total_ - finished_) : 0;
  char line[160];
  std::snprintf(line, sizeof line, " %lld/%lld, %.1f s elapsed, %.2f %s/s, ETA %.0f s", static_cast<long long>(finished_),
                static_cast<long long>(total_), elapsed, rate, unit_.c_str(), eta);
  if (interactive_) {
    draw(what + line);
  } else if (elapsed - logged_s_ >= log_interval_s_) {
    std::fprintf(out_, "%s: %s%s\n", label_.c_str(), what.c_str(), line);
    std::fflush(out_);
    logged_s_ = elapsed;
  }
}

void Progress::done() {
  if (!drawn_) return;
  std::fprintf(out_, "\r%s", kEraseLine);
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace specd
