#include "calibrate/arc_fitting.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "util/error.h"

namespace specd {

void fit_arc(ArcCalibration& arc, const ArcBuckets& buckets, const std::string& where) {
  try {
    arc.constants = fit_arc_constants(arc.samples, arc.delta, buckets, arc_ratio_delta(arc, where));
  } catch (const std::invalid_argument& e) {
    input_error(where, std::string("cannot fit ARC's constants: ") + e.what() + " (calibrate more prompts or raise --delta)");
  }
  for (const ArcConstants& c : arc.constants)
    if (!std::isfinite(c.c_s) || !std::isfinite(c.alpha_kappa) || !std::isfinite(c.tau_delta))
      input_error(where, "ARC's constants of bucket " + c.bucket +
                             " are infinite: more than delta of its samples diverge where a raw bound is 0 (tokens with equal embeddings, or "
                             "both outside top-k/top-p)");
  const bool any_held_out = std::any_of(arc.samples.begin(), arc.samples.end(), [](const ArcSample& s) { return s.held_out; });
  arc.audit = any_held_out ? audit_arc(arc.samples, arc.constants, prompt_categories(arc.prompts), /*held_out=*/true)
                           : std::vector<ArcAuditRow>{};
}

}  // namespace specd
