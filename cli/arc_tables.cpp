#include "arc_tables.h"

#include <cstdio>

namespace specd::cli {

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

void print_gate(const std::vector<ArcGateRow>& gate, double js_tolerance, double risk, double confidence) {
  std::printf("  gate on deploy sites: P(JS > %.3g nats | relaxed, t_d != t_m) <= %.3g, %.3g%% confidence over %zu thresholds (Bonferroni):\n",
              js_tolerance, risk, 100 * confidence, gate.size());
  std::printf("    %6s %8s %8s %8s %10s %8s %8s %10s %10s  %s\n", "theta", "prompts", "sites", "relaxed", "t_d=t_m", "misses", "risk",
              "risk_high", "p-value", "");
  for (const ArcGateRow& r : gate)
    std::printf("    %6.3g %8lld %8lld %8lld %10lld %8lld %7.1f%% %9.1f%% %10.3g  %s\n", r.theta, static_cast<long long>(r.prompts),
                static_cast<long long>(r.sites), static_cast<long long>(r.relaxed), static_cast<long long>(r.relaxed_argmax),
                static_cast<long long>(r.misses), 100 * r.risk, 100 * r.risk_high, r.p_value, r.valid ? "valid" : "");
}

}  // namespace specd::cli
