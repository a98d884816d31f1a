#include "stats/arc_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>

#include "stats/arc_gate.h"
#include "stats/conformal.h"
#include "stats/intervals.h"
#include "util/error.h"

namespace specd {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// js / u, with the zero-denominator rule of fit_arc_constants.
double ratio(double js, double u) {
  if (u > 0) return js / u;
  return js == 0 ? 0.0 : kInfinity;
}

double scaled(double constant, double u) { return u == 0 ? 0.0 : constant * u; }

void check_sample(const ArcSample& s) {
  for (double v : {s.u_emb_raw, s.u_logit_raw, s.js})
    if (!(v >= 0 && std::isfinite(v)))
      throw std::invalid_argument("ARC sample of prompt " + std::to_string(s.prompt) + " step " +
                                  std::to_string(s.step) + ": a raw bound or JS is negative or not finite");
  if (std::isnan(s.root_entropy))
    throw std::invalid_argument("ARC sample of prompt " + std::to_string(s.prompt) + " step " +
                                std::to_string(s.step) + ": root entropy is NaN");
}

void check_edges(const std::vector<double>& edges) {
  if (edges.empty()) return;
  bool ok = edges.size() >= 2;
  for (size_t i = 0; ok && i < edges.size(); ++i)
    ok = std::isfinite(edges[i]) && (i == 0 || edges[i] > edges[i - 1]);
  if (!ok) throw std::invalid_argument("ARC entropy buckets: need two or more finite, increasing edges");
}

// The entropy range holding e: its index, none outside [edges.front(), edges.back()).
std::optional<size_t> entropy_bin(const std::vector<double>& edges, double e) {
  for (size_t i = 0; i + 1 < edges.size(); ++i)
    if (e >= edges[i] && e < edges[i + 1]) return i;
  return std::nullopt;
}

ArcConstants fit_bucket(const std::string& name, const std::vector<const ArcSample*>& samples, double delta, double ratio_delta,
                        const ArcConstants* all) {
  ArcConstants c;
  c.bucket = name;
  c.samples = static_cast<int64_t>(samples.size());
  c.rank = conformal_rank(c.samples, delta);
  if (c.rank > c.samples || conformal_rank(c.samples, ratio_delta) > c.samples) {
    c.rank = c.samples + 1;
    c.c_s = all->c_s, c.alpha_kappa = all->alpha_kappa, c.tau_delta = all->tau_delta;
    return c;
  }
  std::vector<double> emb, logit, bound;
  for (const ArcSample* s : samples) {
    emb.push_back(ratio(s->js, s->u_emb_raw));
    logit.push_back(ratio(s->js, s->u_logit_raw));
  }
  c.c_s = conformal_quantile(std::move(emb), ratio_delta);
  c.alpha_kappa = conformal_quantile(std::move(logit), ratio_delta);
  for (const ArcSample* s : samples) bound.push_back(arc_bound(c, s->u_emb_raw, s->u_logit_raw));
  c.tau_delta = conformal_quantile(std::move(bound), delta);
  return c;
}

ArcAuditRow audit_row(const std::string& kind, const std::string& group, int64_t samples, int64_t covered) {
  ArcAuditRow row;
  row.group_kind = kind, row.group = group;
  row.samples = samples, row.covered = covered;
  row.coverage = samples ? static_cast<double>(covered) / samples : 0.0;
  const Interval wilson = wilson_interval(covered, samples), cp = clopper_pearson_interval(covered, samples);
  row.wilson_low = wilson.low, row.wilson_high = wilson.high;
  row.cp_low = cp.low, row.cp_high = cp.high;
  return row;
}

}  // namespace

std::string entropy_bucket_name(double low, double high) {
  const auto shortest = [](double v) {
    char text[32];
    for (int precision = 1; precision <= 17; ++precision) {
      std::snprintf(text, sizeof text, "%.*g", precision, v);
      if (std::strtod(text, nullptr) == v) break;
    }
    return std::string(text);
  };
  return "entropy=[" + shortest(low) + "," + shortest(high) + ")";
}

std::vector<ArcConstants> fit_arc_constants(const std::vector<ArcSample>& samples, double delta,
                                            const ArcBuckets& buckets, double ratio_delta) {
  if (ratio_delta == 0) ratio_delta = delta;
  check_edges(buckets.entropy_edges);
  std::vector<const ArcSample*> calibration;
  std::set<int32_t> depths;
  for (const ArcSample& s : samples) {
    check_sample(s);
    if (!s.held_out && !s.deploy_site) calibration.push_back(&s), depths.insert(s.depth);
  }
  const int64_t needed = std::max(conformal_min_samples(delta), conformal_min_samples(ratio_delta));
  if (static_cast<int64_t>(calibration.size()) < needed)
    throw std::invalid_argument("ARC calibration: " + std::to_string(calibration.size()) +
                                " calibration samples, delta " + std::to_string(delta) + " needs at least " +
                                std::to_string(needed));
  std::vector<ArcConstants> constants{fit_bucket("all", calibration, delta, ratio_delta, nullptr)};

  const std::vector<double>& edges = buckets.entropy_edges;
  const size_t bins = edges.empty() ? 1 : edges.size() - 1;
  std::vector<std::optional<int32_t>> depth_keys;
  if (buckets.depth)
    for (int32_t depth : depths) depth_keys.push_back(depth);
  else
    depth_keys.push_back(std::nullopt);
  if (!buckets.depth && edges.empty()) return constants;

  for (const std::optional<int32_t>& depth : depth_keys)
    for (size_t bin = 0; bin < bins; ++bin) {
      std::string name;
      if (depth) name = "depth=" + std::to_string(*depth);
      if (!edges.empty()) name += (name.empty() ? "" : ",") + entropy_bucket_name(edges[bin], edges[bin + 1]);
      std::vector<const ArcSample*> members;
      for (const ArcSample* s : calibration) {
        if (depth && s->depth != *depth) continue;
        if (!edges.empty() && entropy_bin(edges, s->root_entropy) != bin) continue;
        members.push_back(s);
      }
      constants.push_back(fit_bucket(name, members, delta, ratio_delta, &constants.front()));
    }
  return constants;
}


double arc_bound(const ArcConstants& c, double u_emb_raw, double u_logit_raw) {
  return std::min(scaled(c.c_s, u_emb_raw), scaled(c.alpha_kappa, u_logit_raw));
}

bool arc_covered(const ArcSample& sample, const std::vector<ArcConstants>& constants) {
  return sample.js <= arc_bound(constants_for(constants, sample.depth, sample.root_entropy), sample.u_emb_raw, sample.u_logit_raw);
}

std::vector<std::pair<int64_t, int64_t>> ArcGroupTally::clusters() const {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& [prompt, counts] : per_prompt) out.push_back(counts);
  return out;
}

std::vector<ArcGroupTally> tally_arc_groups(const std::vector<ArcSample>& samples, const std::map<int32_t, std::string>& category_of_prompt,
                                            bool held_out, const std::function<bool(const ArcSample&)>& hit) {
  ArcGroupTally all{"all", "all", 0, 0, {}};
  std::map<std::string, ArcGroupTally> by_category;
  std::map<int32_t, ArcGroupTally> by_depth;
  const auto add = [](ArcGroupTally& t, int32_t prompt, bool h) {
    ++t.samples, t.hits += h;
    auto& [hits, count] = t.per_prompt[prompt];
    ++count, hits += h;
  };
  for (const ArcSample& s : samples) {
    if (s.held_out != held_out) continue;
    const auto category = category_of_prompt.find(s.prompt);
    if (category == category_of_prompt.end())
      throw std::invalid_argument("ARC audit: prompt " + std::to_string(s.prompt) + " has no category");
    const bool h = hit(s);
    add(all, s.prompt, h);
    ArcGroupTally& c = by_category.try_emplace(category->second, ArcGroupTally{"category", category->second, 0, 0, {}}).first->second;
    add(c, s.prompt, h);
    ArcGroupTally& d = by_depth.try_emplace(s.depth, ArcGroupTally{"depth", std::to_string(s.depth), 0, 0, {}}).first->second;
    add(d, s.prompt, h);
  }
  std::vector<ArcGroupTally> groups{all};
  for (auto& [name, t] : by_category) groups.push_back(std::move(t));
  for (auto& [depth, t] : by_depth) groups.push_back(std::move(t));
  return groups;
}

ArcAuditRow arc_audit_row(const ArcGroupTally& tally) { return audit_row(tally.group_kind, tally.group, tally.samples, tally.hits); }

std::vector<ArcAuditRow> audit_arc(const std::vector<ArcSample>& samples, const std::vector<ArcConstants>& constants,
                                   const std::map<int32_t, std::string>& category_of_prompt, bool held_out) {
  std::vector<ArcAuditRow> rows;
  for (const ArcGroupTally& t : tally_arc_groups(samples, category_of_prompt, held_out, [&](const ArcSample& s) { return arc_covered(s, constants); }))
    rows.push_back(arc_audit_row(t));
  return rows;
}

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
          if (used != comma - p || !(edge >= 0 && edge <= 1)) throw std::invalid_argument("edge");
          if (!buckets.entropy_edges.empty() && edge <= buckets.entropy_edges.back()) throw std::invalid_argument("order");
          buckets.entropy_edges.push_back(edge);
        } catch (const std::exception&) {
          input_error(where, "entropy edges must be two or more increasing numbers in [0, 1], e.g. entropy:0,0.5,1 (got '" + part + "')");
        }
        p = comma + 1;
      }
      if (buckets.entropy_edges.size() < 2)
        input_error(where, "entropy buckets need two or more edges, e.g. entropy:0,0.5,1 (got '" + part + "')");
    } else {
      input_error(where, "unknown bucket '" + part + "' (known: depth, entropy:E1,E2,...; join with +)");
    }
    start = plus + 1;
  }
  return buckets;
}

double arc_ratio_delta(const ArcCalibration& arc, const std::string& where) {
  const nlohmann::json& options = arc.provenance.options;
  const std::string rule = options.contains("rule") && options["rule"].is_string() ? options["rule"].get<std::string>() : "paper";
  if (rule == "paper") return arc.delta;
  if (rule == "split") return arc.delta / 2;
  input_error(where, "unknown ARC fitting rule '" + rule + "' (known: paper, split)");
}

ArcBuckets arc_buckets_of(const ArcCalibration& arc, const std::string& where) {
  const nlohmann::json& options = arc.provenance.options;
  const std::string text = options.contains("buckets") && options["buckets"].is_string() ? options["buckets"].get<std::string>() : "none";
  return parse_arc_buckets(text, where);
}

std::map<int32_t, std::string> prompt_categories(const std::vector<CalibratedPrompt>& prompts) {
  std::map<int32_t, std::string> categories;
  for (const CalibratedPrompt& p : prompts) categories[p.index] = p.category;
  return categories;
}

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
  arc.gate.clear();
  if (has_deploy_sites(arc)) {
    try {
      arc.gate = fit_arc_gate(arc.samples, arc_gate_options_of(arc, where));
    } catch (const std::invalid_argument& e) {
      input_error(where, std::string("cannot fit ARC's gate: ") + e.what());
    }
  }
}

}  // namespace specd
