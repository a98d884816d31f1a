#include "arc_tables.h"

#include <cstdio>
#include <stdexcept>

#include "util/error.h"

namespace specd::cli {

ArcBuckets parse_arc_buckets(const std::string& text, const std::string& where) {
  ArcBuckets buckets;
  if (text.empty() || text == "none") return buckets;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t plus = std::min(text.find('+', start), text.size());
    const std::string part = text.substr(start, plus - start);
    if (part == "depth") {
      buckets.depth = true;
    } else if (part.rfind("entropy:", 0) == 0) {
      std::string rest = part.substr(8);
      size_t p = 0;
      while (p <= rest.size()) {
        const size_t comma = std::min(rest.find(',', p), rest.size());
        try {
          size_t used = 0;
          const double edge = std::stod(rest.substr(p, comma - p), &used);
          if (used != comma - p || !(edge > 0 && edge < 1)) throw std::invalid_argument("edge");
          if (!buckets.entropy_edges.empty() && edge <= buckets.entropy_edges.back()) throw std::invalid_argument("order");
          buckets.entropy_edges.push_back(edge);
        } catch (const std::exception&) {
          input_error(where, "entropy edges must be increasing numbers in (0, 1), e.g. entropy:0.2,0.5 (got '" + part + "')");
        }
        p = comma + 1;
      }
    } else {
      input_error(where, "unknown bucket '" + part + "' (known: depth, entropy:E1,E2,...; join with +)");
    }
    start = plus + 1;
  }
  return buckets;
}

void print_constants(const std::vector<ArcConstants>& constants, double delta) {
  std::printf("  constants at delta %.3g (conformal rank ceil((n+1)(1-delta)) of n calibration samples):\n", delta);
  std::printf("    %-22s %8s %8s %12s %12s %12s\n", "bucket", "n", "rank", "c'_s", "alpha*kappa", "tau_delta");
  for (const ArcConstants& c : constants)
    std::printf("    %-22s %8lld %8lld %12.4g %12.4g %12.4g\n", c.bucket.c_str(), static_cast<long long>(c.samples),
                static_cast<long long>(c.rank), c.c_s, c.alpha_kappa, c.tau_delta);
}

void print_audit(const std::vector<ArcAuditRow>& audit, double delta, const char* what) {
  std::printf("  %s coverage of JS <= U_min (target %.1f%%; 95%% intervals):\n", what, 100 * (1 - delta));
  std::printf("    %-9s %-18s %8s %9s %18s %18s\n", "group", "", "samples", "coverage", "Wilson", "Clopper-Pearson");
  for (const ArcAuditRow& r : audit)
    std::printf("    %-9s %-18s %8lld %8.1f%% [%6.1f%%, %6.1f%%] [%6.1f%%, %6.1f%%]%s\n", r.group_kind.c_str(), r.group.c_str(),
                static_cast<long long>(r.samples), 100 * r.coverage, 100 * r.wilson_low, 100 * r.wilson_high, 100 * r.cp_low,
                100 * r.cp_high, r.samples > 0 && r.wilson_high < 1 - delta ? "  BELOW 1-delta (the whole interval)" : "");
}

}  // namespace specd::cli
