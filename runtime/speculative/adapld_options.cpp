#include "speculative/adapld_options.h"

#include <cmath>

#include "util/error.h"

namespace specd {

void validate(const AdaPldOptions& o) {
  if (o.branches < 0) input_error("adapld", "branches (K) must not be negative");
  if (o.max_copy < 1) input_error("adapld", "max_copy (L) must be at least 1");
  if (!(std::isfinite(o.tau_sim) && o.tau_sim >= -1 && o.tau_sim <= 1)) input_error("adapld", "tau_sim must be in [-1, 1]");
  if (o.layer < -1) input_error("adapld", "layer must be -1 (the middle one) or a layer number");
}

}  // namespace specd
