// 7 (CSD). What CSD would rescue at other lambda and tau, estimated from the calibration's
// recorded rejections alone (no model run).
#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/csd_settings.h"
#include "analysis/sections.h"

namespace specd::report {
namespace {

using nlohmann::json;
using PairKey = std::pair<int32_t, int32_t>;

// Rejections that Algorithm 1 would rescue: the pair's count (this event included) reaches lambda
// and the gap passes log tau, compared as the acceptor compares them (float gap, double log tau).
// `counts` gives the count each event is tested with.
int64_t rescued(const std::vector<CsdRejection>& events, const std::vector<int64_t>& counts, double lambda, double tau) {
  const double log_tau = std::log(tau);
  int64_t n = 0;
  for (size_t i = 0; i < events.size(); ++i) n += counts[i] >= lambda && events[i].logit_gap >= log_tau;
  return n;
}

}  // namespace

std::vector<Block> what_if_csd_blocks(const ReportInputs& in) {
  std::vector<Block> blocks{Heading{"CSD: rescue rate at other lambda and tau"}};
  if (!in.artifact.csd) {
    blocks.push_back(csd_not_calibrated());
    return blocks;
  }
  const std::vector<CsdRejection>& events = in.artifact.csd->rejections;
  if (events.empty()) {
    blocks.push_back(Paragraph{"The csd calibration recorded no rejection: nothing to estimate from."});
    return blocks;
  }
  // Two memories. With the calibrated table: each event is tested with its pair's count in the
  // whole table, which is what a deploy memory (the table, plus this event's own record) holds
  // when this event is left out of the table; it is the estimate for a deployment whose rejections
  // look like the calibration's. From an empty memory in calibration order (prompt, step, depth):
  // the count so far, this event included (Algorithm 1 updates the memory before the test), what
  // CSD without a calibrated table would have rescued on this stream.
  std::map<PairKey, int64_t> table, so_far;
  for (const CsdRejection& r : events) ++table[{r.draft_token, r.target_token}];
  std::vector<int64_t> with_table, from_empty;
  for (const CsdRejection& r : events) {
    with_table.push_back(table[{r.draft_token, r.target_token}]);
    from_empty.push_back(++so_far[{r.draft_token, r.target_token}]);
  }

  const CsdDeployed deployed = csd_deployed(in.artifact);
  std::vector<double> lambdas{1, 2, 3, 6, 10, 20}, taus{0.001, 0.01, 0.1, 0.5};
  for (auto [grid, value] : {std::pair{&lambdas, deployed.lambda}, std::pair{&taus, deployed.tau}})
    if (std::find(grid->begin(), grid->end(), value) == grid->end()) {
      grid->push_back(value);
      std::sort(grid->begin(), grid->end());
    }
  Table t{"Share of the " + std::to_string(events.size()) + " recorded rejections that CSD would rescue",
          {{"lambda", "lambda (rejections of the pair seen)"},
           {"tau", "tau (probability ratio)"},
           {"rescued_table", "rescued, calibrated table"},
           {"share_table", "rescued, calibrated table (%)", 2},
           {"rescued_empty", "rescued, empty memory"},
           {"share_empty", "rescued, empty memory (%)", 2},
           {"deployed", "deployed"}},
          json::array()};
  const double n = static_cast<double>(events.size());
  for (double tau : taus)
    for (double lambda : lambdas) {
      const int64_t a = rescued(events, with_table, lambda, tau), b = rescued(events, from_empty, lambda, tau);
      t.rows.push_back({{"lambda", lambda},
                        {"tau", tau},
                        {"rescued_table", a},
                        {"share_table", 100.0 * a / n},
                        {"rescued_empty", b},
                        {"share_empty", 100.0 * b / n},
                        {"deployed", lambda == deployed.lambda && tau == deployed.tau ? "yes" : ""}});
    }
  blocks.push_back(Paragraph{
      "first-rejection estimates: each recorded rejection is the first rejection of its step; a rescued token changes the rest "
      "of the step, which these cannot see."});
  blocks.push_back(Paragraph{
      "A rejection counts as rescued when its pair's count reaches lambda and its logit gap z(draft) - z(target) is at least "
      "log tau (the CSD paper Algorithm 1; the event counts toward its own threshold, as the acceptor counts it). \"Calibrated table\": "
      "the count is the pair's count in the whole calibrated memory, which is what the deployed memory holds when it meets such "
      "a rejection (the table without this event, plus this event's own record): the estimate for a deployment like the "
      "calibration. \"Empty memory\": the memory starts empty and learns the events in calibration order (prompt, step, depth): "
      "CSD without a calibrated table. Deployed: lambda = " +
      number_text(deployed.lambda) + " (" + deployed.lambda_source + "), tau = " + number_text(deployed.tau) + " (" +
      deployed.tau_source + ")."});
  Chart c{"CSD rescue share of the recorded rejections against lambda, one line per tau (solid: calibrated table, dashed: empty memory)",
          {{"transform", {{{"fold", {"share_table", "share_empty"}}, {"as", {"memory", "share"}}}}},
           {"mark", {{"type", "line"}, {"point", true}}},
           {"encoding",
            {{"x", {{"field", "lambda"}, {"type", "quantitative"}, {"scale", {{"type", "log"}}}, {"title", "lambda (rejections of the pair seen, log scale)"}}},
             {"y", {{"field", "share"}, {"type", "quantitative"}, {"title", "rejections rescued (%)"}}},
             {"color", {{"field", "tau"}, {"type", "nominal"}, {"title", "tau"}}},
             {"strokeDash", {{"field", "memory"}, {"type", "nominal"}, {"title", "memory"}}}}}},
          t};
  blocks.push_back(c);
  return blocks;
}

}  // namespace specd::report
