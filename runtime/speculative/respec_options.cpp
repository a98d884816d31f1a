#include "speculative/respec_options.h"

#include <cmath>

#include "util/error.h"

namespace specd {

void validate(const RespecOptions& o) {
  auto finite_at_least = [](const char* name, double v, double low) {
    if (!(std::isfinite(v) && v >= low)) input_error("respec", std::string(name) + " must be a finite number >= " + (low == 0 ? "0" : "1"));
  };
  finite_at_least("theta_entropy", o.theta_entropy, 0);
  finite_at_least("lambda_e", o.lambda_e, 0);
  finite_at_least("tau", o.tau, 0);
  if (o.max_key < 1 || o.max_key > 16) input_error("respec", "max_key (l) must be in [1, 16]");
  if (!(o.alpha > 0 && o.alpha <= 1)) input_error("respec", "alpha must be in (0, 1]");
  if (!(o.theta_score >= 0 && o.theta_score <= 1)) input_error("respec", "theta_score must be in [0, 1]");
  if (!(o.initial_score >= 0 && o.initial_score <= 1)) input_error("respec", "the initial score S0 must be in [0, 1]");
  if (o.candidates < 1) input_error("respec", "candidates must be at least 1");
  if (o.draft_length < 1) input_error("respec", "draft_length must be at least 1");
  if (o.phi < 0) input_error("respec", "phi must not be negative");
  if (o.min_matches < 0) input_error("respec", "min_matches (m) must not be negative");
  if (o.beta < 1) input_error("respec", "beta must be at least 1");
}

}  // namespace specd
