#include "decode/forward_cost.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "stats/statistics.h"
#include "model/llama_model.h"

namespace specd {

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

std::vector<std::vector<double>> time_after_idle(const LlamaModel& model, int64_t prefix, const std::vector<double>& gaps_ms,
                                                 int forwards, int rounds, const std::function<void()>& on_round) {
  ForwardTimer timer(model, prefix, 1);
  std::vector<std::vector<double>> sums(gaps_ms.size(), std::vector<double>(static_cast<size_t>(forwards), 0.0));
  for (int r = 0; r < rounds; ++r) {
    for (size_t g = 0; g < gaps_ms.size(); ++g) {
      for (int i = 0; i < 2 * forwards; ++i) timer.time_ms(1);  // warm again after the previous gap
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(gaps_ms[g]));
      for (int i = 0; i < forwards; ++i) sums[g][static_cast<size_t>(i)] += timer.time_ms(1);
    }
    on_round();
  }
  for (auto& row : sums)
    for (double& ms : row) ms /= std::max(rounds, 1);
  return sums;
}

ForwardTimer::ForwardTimer(const LlamaModel& model, int64_t prefix, int64_t max_tokens)
    : model_(model), prefix_(prefix) {
  cache_ = model.new_cache(prefix + max_tokens);
  if (prefix == 0) return;
  ForwardRequest fill;
  for (int64_t i = 0; i < prefix; ++i) fill.tokens.push_back(static_cast<int32_t>((i * 7919) % model.config().vocab_size));
  fill.logits = LogitsWanted::None;
  model.forward(cache_, fill);
}

double ForwardTimer::time_ms(int64_t n) {
  ForwardRequest step;
  for (int64_t i = 0; i < n; ++i) step.tokens.push_back(static_cast<int32_t>((i * 104729 + 17) % model_.config().vocab_size));
  const auto start = std::chrono::steady_clock::now();
  model_.forward(cache_, step);  // logits come back in host memory: a device has finished
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  cache_.truncate(prefix_);
  return ms;
}

std::vector<std::pair<int32_t, double>> timed_forward_costs(const LlamaModel& model, int repeats) {
  std::vector<int64_t> sizes;
  for (int64_t n : {1, 2, 4, 8, 16, 32, 64})
    if (64 + n <= model.context_length()) sizes.push_back(n);
  const auto samples = time_forwards(model, 64, sizes, repeats, [] {});
  std::vector<std::pair<int32_t, double>> costs;
  for (size_t s = 0; s < sizes.size(); ++s) costs.emplace_back(static_cast<int32_t>(sizes[s]), median(samples[s]));
  return costs;
}

CostCurve measure_cost_curve(const LlamaModel& model, int32_t max_tokens, int64_t prefix, int repeats) {
  std::vector<int32_t> sizes;
  for (int32_t n : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64})
    if (n <= std::max(1, max_tokens)) sizes.push_back(n);
  prefix = std::min<int64_t>(prefix, model.context_length() - sizes.back());
  while (prefix < 0 && sizes.size() > 1) {  // a tiny context: drop the sizes that do not fit
    sizes.pop_back();
    prefix = std::min<int64_t>(64, model.context_length() - sizes.back());
  }
  prefix = std::max<int64_t>(prefix, 0);

  ForwardTimer timer(model, prefix, sizes.back());
  // The sizes take turns, so a busy spell of the machine hits them alike (the budget uses their
  // ratios); the first round is a warm-up.
  std::vector<std::vector<double>> ms(sizes.size());
  for (int r = 0; r <= repeats; ++r)
    for (size_t s = 0; s < sizes.size(); ++s) {
      const double took = timer.time_ms(sizes[s]);
      if (r > 0) ms[s].push_back(took);
    }
  std::vector<std::pair<int32_t, double>> points;
  for (size_t s = 0; s < sizes.size(); ++s) {
    std::nth_element(ms[s].begin(), ms[s].begin() + ms[s].size() / 2, ms[s].end());
    points.emplace_back(sizes[s], std::max(ms[s][ms[s].size() / 2], 1e-6));
  }
  return CostCurve(points);
}

}  // namespace specd
