#include "io/rope_frequencies.h"

#include <cmath>

namespace specd {

std::vector<double> rope_inverse_frequencies(const ModelConfig& config) {
  const int64_t dim = config.head_dim;
  std::vector<double> inv_freq(static_cast<size_t>(dim / 2));
  for (size_t i = 0; i < inv_freq.size(); ++i) {
    inv_freq[i] = 1.0 / std::pow(config.rope_theta, static_cast<double>(2 * i) / dim);
  }

  const RopeScaling& s = config.rope_scaling;
  if (s.type == RopeScalingType::Linear) {
    // Linear scaling divides positions by the factor; dividing the frequencies is the same.
    for (double& f : inv_freq) f /= s.factor;
  } else if (s.type == RopeScalingType::Llama3) {
    // Wavelengths shorter than original/high_freq_factor keep their frequency, those longer than
    // original/low_freq_factor are slowed by the factor, and those between are blended smoothly.
    const double original = static_cast<double>(s.original_max_position_embeddings);
    const double low_freq_wavelen = original / s.low_freq_factor;
    const double high_freq_wavelen = original / s.high_freq_factor;
    for (double& f : inv_freq) {
      const double wavelen = 2 * M_PI / f;
      if (wavelen > low_freq_wavelen) {
        f /= s.factor;
      } else if (wavelen >= high_freq_wavelen) {
        const double smooth =
            (original / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        f = (1 - smooth) * f / s.factor + smooth * f;
      }
    }
  }
  return inv_freq;
}

}  // namespace specd
