#pragma once
// Summary statistics of repeated measurements: medians over repeats, and means over prompts with
// the half-width of their normal 95% interval.
#include <cstdint>
#include <vector>

namespace specd {

double median(std::vector<double> values);

// Running sums of one quantity over prompts.
struct MeanAccumulator {
  int64_t n = 0;
  double sum = 0, squares = 0;
  void add(double value) { ++n, sum += value, squares += value * value; }
  void add(const MeanAccumulator& other) { n += other.n, sum += other.sum, squares += other.squares; }
  double mean() const { return n ? sum / n : 0.0; }
  // Half-width of the normal 95% interval of the mean (0 below two values): how far the mean
  // could move with other prompts of the same kind and other timing noise.
  double ci95() const;
};

}  // namespace specd
