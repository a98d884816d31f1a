#include "bench_timing.h"

#include <algorithm>
#include <cstdio>

#include "decode/forward_cost.h"

namespace specd::cli {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

std::vector<std::vector<double>> time_forwards(const LlamaModel& model, int64_t prefix, const std::vector<int64_t>& sizes,
                                               int repeats, const std::function<void()>& on_repeat) {
  if (sizes.empty()) return {};
  ForwardTimer timer(model, prefix, *std::max_element(sizes.begin(), sizes.end()));
  // Each sample is the mean over enough forwards to fill ~50 ms, so timer noise does not dominate.
  std::vector<int> inner;
  for (int64_t n : sizes) {
    timer.time_ms(n);  // warm-up
    inner.push_back(std::max(1, static_cast<int>(50.0 / std::max(timer.time_ms(n), 1e-3))));
  }
  std::vector<std::vector<double>> samples(sizes.size());
  for (int r = 0; r < repeats; ++r) {
    for (size_t s = 0; s < sizes.size(); ++s) {
      double total = 0;
      for (int i = 0; i < inner[s]; ++i) total += timer.time_ms(sizes[s]);
      samples[s].push_back(total / inner[s]);
      on_repeat();
    }
  }
  return samples;
}

BenchProgress::BenchProgress(int64_t total, std::string label)
    : total_(total), label_(std::move(label)), start_(std::chrono::steady_clock::now()) {}

void BenchProgress::step(const std::string& what) {
  ++finished_;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double eta = finished_ ? elapsed / finished_ * (total_ - finished_) : 0;
  std::fprintf(stderr, "\r%s: %s %lld/%lld, %.1f s elapsed, ETA %.0f s   ", label_.c_str(), what.c_str(), static_cast<long long>(finished_),
               static_cast<long long>(total_), elapsed, eta);
  std::fflush(stderr);
}

void BenchProgress::done() { std::fprintf(stderr, "\n"); }

}  // namespace specd::cli
