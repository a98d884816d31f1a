#include "bench/method_comparison.h"

#include <stdexcept>

#include "model/llama_model.h"
#include "speculative/method_catalog.h"
#include "util/splitmix.h"
#include "tokenizer/tokenizer.h"

namespace specd {

void MethodTally::add(const MethodTally& o) {
  prompts += o.prompts, tokens += o.tokens, steps += o.steps, drafted += o.drafted, accepted += o.accepted;
  rescued += o.rescued, relaxed += o.relaxed, equal_to_ar += o.equal_to_ar, wall_ms += o.wall_ms;
  speedup.add(o.speedup), decode_speedup.add(o.decode_speedup), divergence.add(o.divergence), over_baseline.add(o.over_baseline);
  nll += o.nll, nll_tokens += o.nll_tokens, chrf_turns += o.chrf_turns;
  chrf.add(o.chrf);
}

nlohmann::json MethodTally::to_json(bool greedy, bool quality) const {
  nlohmann::json j = {{"prompts", prompts},
                      {"new_tokens", tokens},
                      {"mat", steps ? double(tokens) / steps : 0.0},
                      {"acceptance_rate", drafted ? double(accepted) / drafted : 0.0},
                      {"rescued_per_token", tokens ? double(rescued) / tokens : 0.0},
                      {"relaxed_per_token", tokens ? double(relaxed) / tokens : 0.0},
                      {"tokens_per_s", wall_ms > 0 ? tokens * 1000.0 / wall_ms : 0.0},
                      {"speedup", speedup.mean()},
                      {"speedup_ci95", speedup.ci95()},
                      {"decode_speedup", decode_speedup.mean()}};
  if (over_baseline.n > 0) {
    j["over_baseline"] = over_baseline.mean();
    j["over_baseline_ci95"] = over_baseline.ci95();
  }
  if (greedy) {
    j["equal_to_ar"] = std::to_string(equal_to_ar) + "/" + std::to_string(prompts);
    j["exact_match_rate"] = prompts ? double(equal_to_ar) / prompts : 0.0;
    j["mean_first_divergence"] = divergence.n ? nlohmann::json(divergence.mean()) : nlohmann::json(nullptr);
  }
  if (quality) {
    j["nll_per_token"] = nll_tokens ? nlohmann::json(nll / nll_tokens) : nlohmann::json(nullptr);
    j["chrf"] = chrf_turns ? nlohmann::json(chrf.score()) : nlohmann::json(nullptr);
    j["chrf_turns"] = chrf_turns;
  }
  return j;
}

nlohmann::json MethodTally::to_record() const {
  auto mean = [](const MeanAccumulator& m) { return nlohmann::json{m.n, m.sum, m.squares}; };
  nlohmann::json chrf_record = nlohmann::json::array();
  for (int k = 0; k < ChrfStats::kOrders; ++k) chrf_record.push_back({chrf.hypothesis[k], chrf.reference[k], chrf.matches[k]});
  return {{"prompts", prompts}, {"tokens", tokens}, {"steps", steps}, {"drafted", drafted}, {"accepted", accepted},
          {"rescued", rescued}, {"relaxed", relaxed}, {"equal_to_ar", equal_to_ar}, {"wall_ms", wall_ms},
          {"speedup", mean(speedup)}, {"decode_speedup", mean(decode_speedup)}, {"divergence", mean(divergence)},
          {"over_baseline", mean(over_baseline)},
          {"nll", nll}, {"nll_tokens", nll_tokens}, {"chrf", chrf_record}, {"chrf_turns", chrf_turns}};
}

MethodTally MethodTally::from_record(const nlohmann::json& r) {
  auto mean = [](const nlohmann::json& j) {
    MeanAccumulator m;
    m.n = j.at(0).get<int64_t>(), m.sum = j.at(1).get<double>(), m.squares = j.at(2).get<double>();
    return m;
  };
  MethodTally t;
  t.prompts = r.at("prompts").get<int64_t>(), t.tokens = r.at("tokens").get<int64_t>(), t.steps = r.at("steps").get<int64_t>();
  t.drafted = r.at("drafted").get<int64_t>(), t.accepted = r.at("accepted").get<int64_t>();
  t.rescued = r.at("rescued").get<int64_t>(), t.relaxed = r.at("relaxed").get<int64_t>();
  t.equal_to_ar = r.at("equal_to_ar").get<int64_t>(), t.wall_ms = r.at("wall_ms").get<double>();
  t.speedup = mean(r.at("speedup")), t.decode_speedup = mean(r.at("decode_speedup")), t.divergence = mean(r.at("divergence"));
  if (r.contains("over_baseline")) t.over_baseline = mean(r.at("over_baseline"));  // records from before it had none
  t.nll = r.at("nll").get<double>(), t.nll_tokens = r.at("nll_tokens").get<int64_t>(), t.chrf_turns = r.at("chrf_turns").get<int64_t>();
  const nlohmann::json& chrf = r.at("chrf");
  if (chrf.size() != ChrfStats::kOrders) throw std::out_of_range("chrf: expected " + std::to_string(ChrfStats::kOrders) + " orders");
  for (int k = 0; k < ChrfStats::kOrders; ++k)
    t.chrf.hypothesis[k] = chrf.at(k).at(0).get<double>(), t.chrf.reference[k] = chrf.at(k).at(1).get<double>(),
    t.chrf.matches[k] = chrf.at(k).at(2).get<double>();
  return t;
}

namespace {

// The order the methods run in for one prompt and repeat: a shuffle drawn from (prompt, repeat)
// alone, so a bench repeats exactly. In one fixed order a position can favour a method: on the
// large pair at one repeat, arc and arc-lts-only (both sd-tree there) measured 1.02x +-0.02 over
// sd-tree, which always ran right after AR (whose pass over the target likely evicts the draft's
// weights from the cache). Shuffled, position effects become noise the interval covers.
std::vector<std::string> run_order(std::vector<std::string> methods, size_t prompt, int repeat) {
  uint64_t state = splitmix64(0x6d657468u ^ (static_cast<uint64_t>(prompt) << 20) ^ static_cast<uint64_t>(repeat));
  for (size_t i = methods.size(); i > 1; --i) {  // Fisher-Yates
    state = splitmix64(state);
    std::swap(methods[i - 1], methods[state % i]);
  }
  return methods;
}

}  // namespace

ComparisonResult compare_methods(const LlamaModel& target, std::map<std::string, Policy>& policies, const Tokenizer& tokenizer,
                                 const ComparisonSetup& setup, Progress& progress, const std::function<void(const ItemResult&)>& on_item,
                                 const std::vector<std::map<std::string, MethodTally>>& finished) {
  const std::vector<std::string>& methods = setup.methods;
  ComparisonResult result;
  if (finished.size() > setup.items.size()) throw std::logic_error("compare_methods: more finished items than items");
  for (size_t i = 0; i < finished.size(); ++i)
    for (const auto& m : methods) {
      result.tallies[m][setup.items[i].category].add(finished[i].at(m));
      result.tallies[m]["overall"].add(finished[i].at(m));
    }
  // A policy that learns online (CSD's correction memory) must see each request once, as a
  // deployment would: its state is put back before every repeat, so repeats time the same
  // decoding, and the warm-up leaves no trace.
  std::map<std::string, CorrectionMemory> saved;
  auto save = [&] {
    for (const auto& m : methods)
      if (policies.at(m).memory) saved.insert_or_assign(m, *policies.at(m).memory);
  };
  auto restore = [&] {
    for (auto& [m, memory] : saved) *policies.at(m).memory = memory;
  };
  // One untimed request per method first: the first forwards after loading pay for page faults
  // and lazily built buffers, which would otherwise land on whichever method runs first.
  save();
  if (finished.size() < setup.items.size())
    for (const auto& m : methods) run_request(target, policies.at(m), tokenizer, setup.items.front(), setup.sampling, setup.stop_tokens);
  restore();
  for (size_t index = finished.size(); index < setup.items.size(); ++index) {
    const WorkloadItem& item = setup.items[index];
    save();
    ItemResult measured;
    measured.index = index;
    std::map<std::string, RequestRun>& first_run = measured.runs;
    std::map<std::string, std::vector<double>> samples, decode_samples;  // wall and decode ms per repeat
    std::map<std::string, double> wall, decode;                          // their medians
    for (int r = 0; r < setup.repeats; ++r) {
      if (r > 0) restore();
      for (const auto& m : run_order(methods, index, r)) {
        RequestRun run = run_request(target, policies.at(m), tokenizer, item, setup.sampling, setup.stop_tokens);
        progress.step(item.category + " " + m);
        samples[m].push_back(run.wall_ms);
        decode_samples[m].push_back(run.wall_ms - run.prefill_ms);
        if (r == 0) first_run[m] = std::move(run);
      }
    }
    for (const auto& m : methods) wall[m] = median(samples[m]), decode[m] = median(decode_samples[m]);
    const RequestRun& ar = first_run.at(methods.front());
    const double ar_throughput = ar.tokens.size() / wall[methods.front()];
    const double ar_decode_throughput = ar.tokens.size() / decode[methods.front()];
    for (const auto& m : methods) {
      const RequestRun& run = first_run[m];
      MethodTally t;
      t.prompts = 1;
      t.tokens = static_cast<int64_t>(run.tokens.size());
      t.steps = run.steps;
      t.drafted = run.drafted;
      t.accepted = run.accepted;
      for (const StepTrace& step : run.traces) t.rescued += step.rescued, t.relaxed += step.relaxed;
      t.wall_ms = wall[m];
      t.speedup.add((run.tokens.size() / wall[m]) / ar_throughput);
      t.decode_speedup.add((run.tokens.size() / decode[m]) / ar_decode_throughput);
      const auto named = setup.baselines.find(m);
      const std::string base = named != setup.baselines.end() ? named->second : paper_baseline(m);
      if (first_run.count(base))
        t.over_baseline.add((run.tokens.size() / wall[m]) / (first_run.at(base).tokens.size() / wall[base]));
      const int64_t divergence = first_divergence(run.tokens, ar.tokens);
      t.equal_to_ar = divergence < 0 ? 1 : 0;
      if (divergence >= 0) t.divergence.add(static_cast<double>(divergence));
      if (setup.quality) {
        t.nll = target_nll(target, run);
        t.nll_tokens = t.tokens;
        for (size_t turn = 0; turn < run.turn_texts.size() && turn < item.references.size(); ++turn) {
          t.chrf.add(chrf_stats(run.turn_texts[turn], item.references[turn]));
          ++t.chrf_turns;
        }
      }
      result.tallies[m][item.category].add(t);
      result.tallies[m]["overall"].add(t);
      measured.tallies[m] = t;
    }
    if (on_item) on_item(measured);
  }
  for (const auto& [category, tally] : result.tallies[methods.front()])
    if (category != "overall") result.categories.push_back(category);
  result.categories.push_back("overall");
  return result;
}

}  // namespace specd
