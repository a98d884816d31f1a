#pragma once
// Turns one row of logits into a token: greedy at temperature 0, otherwise a draw from the
// distribution shaped by temperature, then top-k, then top-p (Hugging Face's order), with a
// seeded generator so that a run can be repeated exactly.
#include <cstdint>
#include <random>
#include <vector>

namespace specd {

// The smallest positive temperature: below it sampling is the argmax in all but name (a logit gap
// of 1e-4 already weighs e^100), and far enough down logits / T overflows. 0 is greedy.
constexpr double kMinTemperature = 1e-6;

struct SamplingParams {
  double temperature = 0.0;  // 0: greedy
  int top_k = 0;             // 0: off. Keeps tokens whose logit >= the k-th largest (ties kept)
  double top_p = 1.0;        // 1: off. Keeps the most likely tokens until their mass reaches p
  uint64_t seed = 0;
};

// Throws InputError naming the option when a value is out of range.
void validate(const SamplingParams& params);

// Index of the largest logit; ties go to the lowest id (as torch.argmax).
int32_t argmax(const float* logits, int64_t vocab);

// The distribution a sampled token is drawn from: softmax(logits / T) restricted by top-k and
// top-p and renormalised; zero outside the kept set. Needs temperature > 0.
std::vector<double> shaped_distribution(const float* logits, int64_t vocab, const SamplingParams& params);

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);
  int32_t sample(const float* logits, int64_t vocab);
  // A uniform draw in [0, 1) from this sampler's stream (also used by acceptance tests).
  double uniform();
  const SamplingParams& params() const { return params_; }

 private:
  SamplingParams params_;
  std::mt19937_64 rng_;
};

// A drafter's sampling for one request: `params` with a seed derived from the request's, so the
// drafter's stream is apart from the target's and the request's seed alone decides it.
SamplingParams drafter_stream(SamplingParams params, uint64_t request_seed);

// Draws an index from probabilities that sum to 1 (up to rounding), given u in [0, 1).
int32_t draw(const std::vector<double>& probabilities, double u);

}  // namespace specd
