#include "speculative/adapld_options.h"

#include <cmath>

#include "speculative/method_params.h"

namespace specd {

// The ranges are the parameter table's (method_params.cpp).
void validate(const AdaPldOptions& o) {
  MethodOptions options;
  options.adapld = o;
  check_params(options, "adapld", "adapld");
}

}  // namespace specd
