#include "bench/method_comparison.h"

#include "model/llama_model.h"
#include "tokenizer/tokenizer.h"

namespace specd {

void MethodTally::add(const MethodTally& o) {
  prompts += o.prompts, tokens += o.tokens, steps += o.steps, drafted += o.drafted, accepted += o.accepted;
  rescued += o.rescued, relaxed += o.relaxed, equal_to_ar += o.equal_to_ar, wall_ms += o.wall_ms;
  speedup.add(o.speedup), decode_speedup.add(o.decode_speedup), divergence.add(o.divergence);
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

ComparisonResult compare_methods(const LlamaModel& target, std::map<std::string, Policy>& policies, const Tokenizer& tokenizer,
                                 const ComparisonSetup& setup, Progress& progress) {
  const std::vector<std::string>& methods = setup.methods;
  ComparisonResult result;
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
  if (!setup.items.empty())
    for (const auto& m : methods) run_request(target, policies.at(m), tokenizer, setup.items.front(), setup.sampling, setup.stop_tokens);
  restore();
  for (const WorkloadItem& item : setup.items) {
    save();
    std::map<std::string, RequestRun> first_run;
    std::map<std::string, std::vector<double>> samples, decode_samples;  // wall and decode ms per repeat
    std::map<std::string, double> wall, decode;                          // their medians
    for (int r = 0; r < setup.repeats; ++r) {
      if (r > 0) restore();
      for (const auto& m : methods) {
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
    }
    if (setup.keep_runs)
      for (const auto& m : methods) result.runs[m].emplace_back(&item, std::move(first_run[m]));
  }
  for (const auto& [category, tally] : result.tallies[methods.front()])
    if (category != "overall") result.categories.push_back(category);
  result.categories.push_back("overall");
  return result;
}

}  // namespace specd
