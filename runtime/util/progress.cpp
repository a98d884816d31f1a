#include "util/progress.h"

#include <cstdio>

namespace specd {

Progress::Progress(int64_t total, std::string label, std::string unit)
    : total_(total), label_(std::move(label)), unit_(std::move(unit)), start_(std::chrono::steady_clock::now()) {}

double Progress::elapsed_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

void Progress::step(const std::string& what) {
  ++finished_;
  const double elapsed = elapsed_s();
  const double rate = elapsed > 0 ? finished_ / elapsed : 0;
  const double eta = finished_ ? elapsed / finished_ * (total_ - finished_) : 0;
  std::fprintf(stderr, "\r%s: %s %lld/%lld, %.1f s elapsed, %.2f %s/s, ETA %.0f s   ", label_.c_str(), what.c_str(),
               static_cast<long long>(finished_), static_cast<long long>(total_), elapsed, rate, unit_.c_str(), eta);
  std::fflush(stderr);
}

void Progress::done() { std::fprintf(stderr, "\n"); }

}  // namespace specd
