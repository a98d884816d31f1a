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

bool print_deploy_audit(const ArcDeployAudit& audit, double delta) {
  const double share = audit.relaxed ? 100.0 * static_cast<double>(audit.relaxed_argmax) / static_cast<double>(audit.relaxed) : 0.0;
  std::printf("  %lld relaxed tokens: %lld with t_d = t_m (%.1f%%; no substitution, so no JS: their cost is a bias to the argmax), "
              "%lld substituted\n",
              static_cast<long long>(audit.relaxed), static_cast<long long>(audit.relaxed_argmax), share,
              static_cast<long long>(audit.relaxed - audit.relaxed_argmax));
  std::printf("  deploy coverage of JS <= U_min at the substituted ones (target %.1f%%; 95%% intervals):\n", 100 * (1 - delta));
  std::printf("    %-9s %-18s %8s %9s %18s %18s\n", "group", "", "tokens", "coverage", "Wilson", "request-clustered");
  bool drift = false;
  std::string lines;
  char line[512];
  for (size_t i = 0; i < audit.rows.size(); ++i) {
    const ArcAuditRow& r = audit.rows[i];
    const Interval c = i < audit.clustered.size() ? audit.clustered[i] : Interval{0, 1};
    std::printf("    %-9s %-18s %8lld %8.1f%% [%6.1f%%, %6.1f%%] [%6.1f%%, %6.1f%%]\n", r.group_kind.c_str(), r.group.c_str(),
                static_cast<long long>(r.samples), 100 * r.coverage, 100 * r.wilson_low, 100 * r.wilson_high, 100 * c.low, 100 * c.high);
    if (r.samples > 0 && (r.wilson_high < 1 - delta || c.high < 1 - delta)) {
      std::snprintf(line, sizeof line, "  DRIFT: %s %s covers %.1f%% (Wilson [%.1f%%, %.1f%%], clustered [%.1f%%, %.1f%%]), below 1-delta = %.1f%%\n",
                    r.group_kind.c_str(), r.group.c_str(), 100 * r.coverage, 100 * r.wilson_low, 100 * r.wilson_high, 100 * c.low,
                    100 * c.high, 100 * (1 - delta));
      lines += line;
    }
  }
  if (audit.gate) {
    std::printf("  the gate's contract: JS > %.3g nats on at most %.3g of the substituted relaxed tokens (95%% intervals of the miss rate):\n",
                audit.gate->js_tolerance, audit.gate->risk);
    std::printf("    %-9s %-18s %8s %8s %8s %9s %18s %18s\n", "group", "", "requests", "tokens", "misses", "rate", "Wilson", "request-clustered");
    for (const ArcMissRow& m : audit.misses) {
      std::printf("    %-9s %-18s %8lld %8lld %8lld %8.1f%% [%6.1f%%, %6.1f%%] [%6.1f%%, %6.1f%%]\n", m.group_kind.c_str(), m.group.c_str(),
                  static_cast<long long>(m.requests), static_cast<long long>(m.tokens), static_cast<long long>(m.misses), 100 * m.rate,
                  100 * m.wilson.low, 100 * m.wilson.high, 100 * m.clustered.low, 100 * m.clustered.high);
      if (m.tokens > 0 && (m.wilson.low > audit.gate->risk || m.clustered.low > audit.gate->risk)) {
        std::snprintf(line, sizeof line, "  DRIFT: %s %s misses on %.1f%% of %lld relaxed tokens (Wilson [%.1f%%, %.1f%%], clustered [%.1f%%, %.1f%%]), above the contract's %.1f%%\n",
                      m.group_kind.c_str(), m.group.c_str(), 100 * m.rate, static_cast<long long>(m.tokens), 100 * m.wilson.low,
                      100 * m.wilson.high, 100 * m.clustered.low, 100 * m.clustered.high, 100 * audit.gate->risk);
        lines += line;
      }
    }
  }
  drift = !lines.empty();
  std::fputs(lines.c_str(), stdout);
  return drift;
}

}  // namespace specd::cli
