#include "calibrate/arc_samples.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <cmath>
#include <numeric>
#include <tuple>

#include "model/llama_model.h"
#include "sampling/sampler.h"
#include "methods/method_registry.h"
#include "speculative/step_metrics.h"
#include "stats/divergence.h"
#include "tokenizer/tokenizer.h"
#include "util/splitmix.h"

namespace specd {

std::vector<float> embedding_whitening(const LlamaModel& target) {
  const int64_t rows = target.config().vocab_size, hidden = target.config().hidden_size;
  // Column sums in double, one row at a time: a large vocabulary never needs a copy of the table.
  std::vector<double> sum(static_cast<size_t>(hidden), 0.0), squares(static_cast<size_t>(hidden), 0.0);
  std::vector<float> row(static_cast<size_t>(hidden));
  for (int64_t r = 0; r < rows; ++r) {
    target.embedding_row(static_cast<int32_t>(r), row.data());
    for (int64_t k = 0; k < hidden; ++k) {
      sum[k] += row[k];
      squares[k] += static_cast<double>(row[k]) * row[k];
    }
  }
  std::vector<float> whitening(static_cast<size_t>(hidden));
  for (int64_t k = 0; k < hidden; ++k) {
    const double mean = sum[k] / static_cast<double>(rows);
    const double variance = std::max(0.0, squares[k] / static_cast<double>(rows) - mean * mean);
    whitening[k] = variance > 0 ? static_cast<float>(1.0 / std::sqrt(variance)) : 0.0f;
  }
  return whitening;
}

namespace {

// The K largest logits' ids, ties to the lower id.
std::vector<int32_t> top_ids(const float* logits, int64_t vocab, int32_t k) {
  std::vector<int32_t> ids(static_cast<size_t>(vocab));
  std::iota(ids.begin(), ids.end(), 0);
  const int64_t n = std::min<int64_t>(k, vocab);
  std::partial_sort(ids.begin(), ids.begin() + n, ids.end(),
                    [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
  ids.resize(static_cast<size_t>(n));
  return ids;
}

// p~: what the sampler draws from (one-hot on the argmax when greedy).
std::vector<double> processed(const float* logits, int64_t vocab, const SamplingParams& sampling) {
  if (sampling.temperature > 0) return shaped_distribution(logits, vocab, sampling);
  std::vector<double> p(static_cast<size_t>(vocab), 0.0);
  p[argmax(logits, vocab)] = 1.0;
  return p;
}

class SampleProbe {
 public:
  SampleProbe(const LlamaModel& target, const std::vector<float>& whitening, const ArcSampleOptions& options)
      : target_(target), whitening_(whitening), options_(options), vocab_(target.config().vocab_size),
        e_d_(whitening.size()), e_m_(whitening.size()) {}

  // The samples of one decoded sequence at `sites` (in increasing position).
  std::vector<ArcSample> measure(int32_t prompt_index, const std::vector<int32_t>& sequence, const std::vector<ArcSite>& sites,
                                 bool held_out) {
    std::vector<ArcSample> samples;
    if (sites.empty()) return samples;
    KvCache cache = target_.new_cache(sites.back().position + 2);
    std::vector<float> entropy;  // normalized entropy of the row after each fed position
    std::vector<float> last_row(static_cast<size_t>(vocab_));
    const double log_vocab = std::log(static_cast<double>(vocab_));
    for (const ArcSite& site : sites) {
      // Feed C = sequence[0, j): rows for the root's distribution and position j's.
      if (cache.length() < site.position) {
        ForwardRequest feed;
        feed.tokens.assign(sequence.begin() + cache.length(), sequence.begin() + site.position);
        const FloatRows logits = target_.forward(cache, feed).logits;
        for (int64_t r = 0; r < logits.rows; ++r) entropy.push_back(static_cast<float>(softmax_entropy(logits.row(r), vocab_) / log_vocab));
        std::copy_n(logits.row(logits.rows - 1), vocab_, last_row.begin());
      }
      ArcSample s;
      s.prompt = prompt_index;
      s.step = site.step;
      s.depth = site.depth;
      s.position = site.position;
      s.held_out = held_out;
      s.root_entropy = entropy[static_cast<size_t>(site.root_position - 1)];
      s.target_token = argmax(last_row.data(), vocab_);
      s.deploy_site = site.deploy_site;
      s.relaxed = site.relaxed;
      s.theta = site.theta;
      if (site.draft_token >= 0) {
        if (site.draft_token == s.target_token) {
          if (!site.deploy_site) continue;
          s.draft_token = site.draft_token;  // the argmax stratum: nothing substituted, nothing moved
          samples.push_back(s);
          continue;
        }
        s.draft_token = site.draft_token;
      } else {
        std::vector<int32_t> candidates = top_ids(last_row.data(), vocab_, options_.top_k);
        candidates.erase(std::remove(candidates.begin(), candidates.end(), s.target_token), candidates.end());
        if (candidates.empty()) continue;  // K = 1 or a one-token vocabulary: no candidate
        const uint64_t draw = splitmix64(options_.run.sampling.seed ^ splitmix64(static_cast<uint64_t>(prompt_index) << 32 | static_cast<uint32_t>(site.step)));
        s.draft_token = candidates[draw % candidates.size()];
      }

      target_.embedding_row(s.draft_token, e_d_.data());
      target_.embedding_row(s.target_token, e_m_.data());
      for (size_t k = 0; k < whitening_.size(); ++k) {
        const double d = (static_cast<double>(e_d_[k]) - e_m_[k]) * whitening_[k];
        s.u_emb_raw += d * d;
      }
      const std::vector<double> p = processed(last_row.data(), vocab_, options_.run.sampling);
      const double gap = std::log(std::max(p[s.target_token], options_.epsilon)) - std::log(std::max(p[s.draft_token], options_.epsilon));
      s.u_logit_raw = gap * gap;

      // t_d and t_m as two siblings on C, dropped again.
      ForwardRequest pair;
      pair.tokens = {s.draft_token, s.target_token};
      pair.parents = {-1, -1};
      pair.positions = {site.position, site.position};
      const FloatRows next = target_.forward(cache, pair).logits;
      cache.truncate(site.position);
      s.js = topk_js_divergence(next.row(0), next.row(1), vocab_, options_.run.sampling.temperature,
                                options_.top_k, options_.mu);
      samples.push_back(s);
    }
    return samples;
  }

 private:
  const LlamaModel& target_;
  const std::vector<float>& whitening_;
  const ArcSampleOptions& options_;
  const int64_t vocab_;
  std::vector<float> e_d_, e_m_;
};

}  // namespace

std::vector<ArcSample> measure_arc_sites(const LlamaModel& target, const std::vector<float>& whitening, const ArcSampleOptions& options,
                                         int32_t prompt_index, const std::vector<int32_t>& sequence, const std::vector<ArcSite>& sites,
                                         bool held_out) {
  SampleProbe probe(target, whitening, options);
  return probe.measure(prompt_index, sequence, sites, held_out);
}

void decode_arc_prompt(const LlamaModel& target, const Tokenizer& tokenizer, const ArcPromptWork& work, const std::vector<int32_t>& stop_tokens,
                       const std::vector<float>& whitening, const ArcSampleOptions& options,
                       const std::function<Policy(const SamplingParams&)>& make, const ArcSiteCollector& collect,
                       CalibrationJournal& journal) {
  const WorkloadItem& item = *work.item;
  GenerateOptions generate;
  generate.max_new_tokens = options.run.max_new_tokens ? options.run.max_new_tokens : item.max_new_tokens;
  generate.sampling = options.run.sampling;
  generate.sampling.seed = options.run.sampling.seed + static_cast<uint64_t>(work.index);
  generate.stop_tokens = stop_tokens;
  Policy policy = make(generate.sampling);
  const std::vector<int32_t> prompt = encode_prompt(target, tokenizer, item);

  std::vector<ArcSite> sites;
  int32_t step = 0;
  int64_t root_position = static_cast<int64_t>(prompt.size());
  auto on_step = [&](const DraftTree& tree, const AcceptResult& result, const float*, int64_t) {
    collect(tree, result, step, root_position, sites);
    root_position += static_cast<int64_t>(result.path.size());
    ++step;
  };
  const auto start = std::chrono::steady_clock::now();
  SpeculativeOutput out = decode_with(target, policy, prompt, generate, on_step);
  std::vector<int32_t> sequence = prompt;
  sequence.insert(sequence.end(), out.tokens.begin(), out.tokens.end());
  // A stop token or the budget can end the text inside a step's path: only sites whose C was emitted.
  sites.erase(std::remove_if(sites.begin(), sites.end(), [&](const ArcSite& s) { return s.position > static_cast<int64_t>(sequence.size()); }),
              sites.end());
  std::stable_sort(sites.begin(), sites.end(), [](const ArcSite& a, const ArcSite& b) { return a.position < b.position; });
  std::vector<ArcSample> samples = measure_arc_sites(target, whitening, options, work.index, sequence, sites, work.held_out);

  CalibratedPrompt record = prompt_record(work.index, item, prompt.size(), out.tokens.size());
  record.steps = static_cast<int64_t>(out.steps.size());
  for (const StepTrace& s : out.steps) record.drafted += s.draft_size, record.accepted += s.accepted_length;
  record.rejections = static_cast<int64_t>(samples.size());
  record.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  journal.record_arc_samples(kArcPolicy, record, samples);
}

void collect_arc_samples(const LlamaModel& target, std::shared_ptr<const LlamaModel> draft, const Tokenizer& tokenizer,
                         const std::vector<ArcPromptWork>& work, const std::vector<int32_t>& stop_tokens,
                         const std::vector<float>& whitening, const ArcSampleOptions& options, CalibrationJournal& journal,
                         Progress& progress) {
  const std::set<int32_t> done = journal.finished_prompts(kArcPolicy);
  MethodOptions sd;
  sd.tree = options.tree;
  sd.adaptive_budget = false;  // the whole tree every step: sites at every depth
  auto make = [&](const SamplingParams& sampling) { return make_policy("sd-tree", MethodContext{target, draft, sampling, sd, nullptr}); };
  // The position after the step's last accepted node, when the target rejected its children.
  auto collect = [](const DraftTree& tree, const AcceptResult& result, int32_t step, int64_t root_position, std::vector<ArcSite>& sites) {
    const int32_t last = result.path.back();
    if (!tree.children(last).empty()) sites.push_back(ArcSite{step, tree.depths[last] + 1, root_position + tree.depths[last] + 1, root_position});
  };
  for (const ArcPromptWork& w : work) {
    if (done.count(w.index)) continue;
    decode_arc_prompt(target, tokenizer, w, stop_tokens, whitening, options, make, collect, journal);
    progress.step("prompt");
  }
}

void sort_arc_rows(ArcCalibration& arc) {
  std::stable_sort(arc.prompts.begin(), arc.prompts.end(), [](const auto& x, const auto& y) { return x.index < y.index; });
  std::stable_sort(arc.samples.begin(), arc.samples.end(),
                   [](const ArcSample& x, const ArcSample& y) { return std::tie(x.prompt, x.step) < std::tie(y.prompt, y.step); });
}

}  // namespace specd
