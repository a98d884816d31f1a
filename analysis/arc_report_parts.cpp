#include "analysis/arc_report_parts.h"

#include <cstdio>
#include <stdexcept>

#include "stats/arc_fit.h"
#include "stats/intervals.h"
#include "util/format.h"

namespace specd::report {

const ArcCalibration* fitted_arc(const ReportInputs& in, Paragraph& why_not) {
  const std::string& dir = in.artifact_dir;
  if (!in.artifact.arc) {
    why_not = {"not calibrated: the artifact holds no ARC-Decode calibration; run specd calibrate arc --target T --draft D --temperature 1 --out " + dir,
               Tone::NotCalibrated};
    return nullptr;
  }
  if (in.artifact.arc->constants.empty()) {
    why_not = {"not calibrated: the ARC-Decode calibration holds samples but no constants (a shard); merge the shards with specd artifact merge",
               Tone::NotCalibrated};
    return nullptr;
  }
  return &*in.artifact.arc;
}

std::optional<std::vector<ArcConstants>> refit_arc_at(const ArcCalibration& arc, double delta, const std::string& where) {
  // The rule fixes the ratios' level relative to delta: equal ("paper") or half ("split").
  const bool split = arc_ratio_delta(arc, where + ": manifest arc options.rule") != arc.delta;
  const ArcBuckets buckets = arc_buckets_of(arc, where + ": manifest arc options.buckets");
  try {
    return fit_arc_constants(arc.samples, delta, buckets, split ? delta / 2 : delta);
  } catch (const std::invalid_argument&) {  // too few calibration samples for this delta
    return std::nullopt;
  }
}

SampleBound sample_bound(const std::vector<ArcConstants>& constants, const ArcSample& sample) {
  const ArcConstants& c = constants_for(constants, sample.depth, sample.root_entropy);
  const double u_min = arc_bound(c, sample.u_emb_raw, sample.u_logit_raw);
  // Each side as arc_bound takes it: a zero raw bound contributes 0 even against an infinite constant.
  auto side = [](double constant, double raw) { return raw == 0 ? 0.0 : constant * raw; };
  const bool logit_binds = side(c.alpha_kappa, sample.u_logit_raw) < side(c.c_s, sample.u_emb_raw);
  return {u_min, c.tau_delta, logit_binds};
}

std::string percent_text(double share) { return strprintf("%.1f%%", pct(share)); }

std::string g_text(double value) { return strprintf("%.4g", value); }

void put_share(nlohmann::json& row, const std::string& prefix, int64_t successes, int64_t n) {
  const Interval w = wilson_interval(successes, n);
  row[prefix] = n > 0 ? nlohmann::json(pct(static_cast<double>(successes) / n)) : nlohmann::json();
  row[prefix + "_low"] = pct(w.low);
  row[prefix + "_high"] = pct(w.high);
}

}  // namespace specd::report
