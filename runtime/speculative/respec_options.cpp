#include "speculative/respec_options.h"

#include <cmath>

#include "speculative/method_params.h"
#include "util/error.h"

namespace specd {

void validate(const RespecOptions& o) {
  MethodOptions options;  // the tunable values' ranges are the parameter table's (method_params.cpp)
  options.respec = o;
  check_params(options, "respec", "respec");
  if (!(o.initial_score >= 0 && o.initial_score <= 1)) input_error("respec", "the initial score S0 must be in [0, 1]");
}

}  // namespace specd
