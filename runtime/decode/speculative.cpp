#include "decode/speculative.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "model/llama_model.h"
#include "speculative/step_metrics.h"
#include "util/error.h"

namespace specd {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

void check_limits(const DraftTree& tree, const DraftRequest& request, int64_t vocab) {
  tree.check();
  if (tree.tokens[0] != request.root_token) throw std::logic_error("drafter changed the root token");
  if (tree.size() - 1 > request.max_nodes) throw std::logic_error("drafter exceeded max_nodes");
  for (int32_t i = 0; i < tree.size(); ++i) {
    if (tree.depths[i] > request.max_depth) throw std::logic_error("drafter exceeded max_depth");
    if (tree.tokens[i] < 0 || tree.tokens[i] >= vocab) throw std::logic_error("drafter proposed a token outside the vocabulary");
  }
}

// The parts of a forward's outputs a drafter asked for, at the given rows (tree nodes or prompt
// positions) in order. `logits` may hold only the last rows of the forward (a prefill with
// DrafterNeeds::prefill_rows): row r is then its row r - logits_offset.
TargetOutputs target_outputs(const DrafterNeeds& needs, const FloatRows& logits, const std::vector<FloatRows>& hidden,
                             const std::vector<int32_t>& rows, int64_t logits_offset = 0) {
  TargetOutputs out;
  if (needs.target_logits && !logits.empty()) {
    out.logits = logits.data();
    out.rows = logits.rows;
    out.vocab = logits.cols;
  }
  if (needs.target_entropy && !logits.empty())
    for (int32_t row : rows) out.entropies.push_back(static_cast<float>(softmax_entropy(logits.row(row - logits_offset), logits.cols)));
  for (const FloatRows& h : hidden) {
    out.hidden_size = h.cols;
    std::vector<float> picked;
    picked.reserve(rows.size() * static_cast<size_t>(out.hidden_size));
    for (int32_t row : rows) {
      const float* r = h.row(row);
      picked.insert(picked.end(), r, r + out.hidden_size);
    }
    out.hidden.push_back(std::move(picked));
  }
  return out;
}

std::string scores_json(const AcceptResult& result) {
  std::string json;
  for (size_t i = 1; i < result.path.size(); ++i) {
    const NodeVerdict v = result.verdicts[result.path[i]];
    if (v != NodeVerdict::Rescued && v != NodeVerdict::Relaxed) continue;
    char number[32];
    std::snprintf(number, sizeof number, "%.4g", result.scores.empty() ? 0.0 : static_cast<double>(result.scores[result.path[i]]));
    json += (json.empty() ? "" : ",") + std::string(number);
  }
  return json.empty() ? "" : "[" + json + "]";
}

// H_m for the pruner (PruneContext): the entropy of a logits row's softmax over log V.
double normalized_entropy(const float* row, int64_t vocab) {
  return vocab > 1 ? softmax_entropy(row, vocab) / std::log(static_cast<double>(vocab)) : 0.0;
}

}  // namespace

SpeculativeOutput generate_speculative(const LlamaModel& target, Drafter& drafter, Acceptor& acceptor,
                                       const std::vector<int32_t>& prompt, const SpeculativeOptions& options) {
  const GenerateOptions& gen = options.generate;
  const int64_t context = target.context_length();
  const int64_t vocab = target.config().vocab_size;
  const int64_t budget = new_token_budget(target, prompt, gen.max_new_tokens);
  if (options.max_draft_nodes < 0 || options.max_draft_depth < 0) input_error("draft budget", "must not be negative");

  Sampler sampler(gen.sampling);
  KvCache cache = target.new_cache(static_cast<int64_t>(prompt.size()) + budget + options.max_draft_nodes + 1);
  SpeculativeOutput out;
  out.stats.prompt_tokens = static_cast<int64_t>(prompt.size());
  if (budget <= 0) return out;

  auto is_stop = [&](int32_t t) { return std::find(gen.stop_tokens.begin(), gen.stop_tokens.end(), t) != gen.stop_tokens.end(); };
  // Appends one token; returns false when generation must end (stop token or budget).
  double callback_ms = 0;  // printing is the caller's cost, not the method's: kept out of decode_ms, as in AR
  auto emit = [&](int32_t token) {
    out.tokens.push_back(token);
    if (gen.on_token) {
      const auto callback_start = Clock::now();
      gen.on_token(token);
      callback_ms += ms_between(callback_start, Clock::now());
    }
    if (is_stop(token)) {
      out.stats.stopped = true;
      return false;
    }
    return static_cast<int64_t>(out.tokens.size()) < budget;
  };

  auto start = Clock::now();
  const DrafterNeeds needs = drafter.needs();
  const bool wants_logits = needs.target_logits || needs.target_entropy;
  ForwardRequest prefill;
  prefill.tokens.assign(prompt.begin(), prompt.end());
  const int64_t prefill_rows = needs.prefill_rows > 0 ? std::min<int64_t>(needs.prefill_rows, prompt.size()) : static_cast<int64_t>(prompt.size());
  if (needs.prefill_logits_rows > 0 && needs.target_entropy)
    throw std::logic_error("drafter needs: prefill_logits_rows leaves rows without the logits target_entropy needs");
  const int64_t logits_rows = needs.prefill_logits_rows > 0 ? std::min<int64_t>(needs.prefill_logits_rows, prefill_rows) : prefill_rows;
  prefill.logits = needs.prefill && wants_logits && logits_rows == static_cast<int64_t>(prompt.size()) ? LogitsWanted::All : LogitsWanted::Last;
  if (needs.prefill && wants_logits) prefill.last_rows = logits_rows;
  if (needs.prefill) prefill.hidden_layers = needs.hidden_layers;
  ForwardResult prefilled = target.forward(cache, prefill);
  const FloatRows& prefill_logits = prefilled.logits;
  const float* first = prefill_logits.row(prefill_logits.rows - 1);
  out.stats.prefill_ms = ms_between(start, Clock::now());

  auto decode_start = Clock::now();
  drafter.begin(prompt, gen.sampling.seed);
  if (needs.prefill) {
    std::vector<int32_t> rows;
    for (int64_t i = static_cast<int64_t>(prompt.size()) - prefill_rows; i < static_cast<int64_t>(prompt.size()); ++i)
      rows.push_back(static_cast<int32_t>(i));
    drafter.observe_prefill(target_outputs(needs, prefill_logits, prefilled.hidden, rows, static_cast<int64_t>(prompt.size()) - prefill_logits.rows));
  }
  if (options.budget) options.budget->reset();
  // The pruner's H_m of the next root: from the row the root is drawn from (computed only for a pruner).
  double root_entropy_normalized = options.pruner ? normalized_entropy(first, vocab) : 0.0;
  bool going = emit(sampler.sample(first, vocab));
  std::vector<int32_t> committed = prompt;  // everything in the KV cache; the root is not yet
  while (going) {
    StepTrace record;
    record.drafter = drafter.name();
    const int32_t root = out.tokens.back();
    const int64_t base = cache.length();
    // A step emits at most depth + 1 tokens and places the deepest node at base + depth.
    const int64_t remaining = budget - static_cast<int64_t>(out.tokens.size());
    DraftRequest request{committed, root, options.max_draft_nodes,
                         static_cast<int32_t>(std::max<int64_t>(0, std::min<int64_t>({options.max_draft_depth, remaining - 1, context - 1 - base})))};
    if (options.budget) {
      request.budget = options.budget;
      if (!drafter.limits_itself()) request.max_nodes = options.budget->nodes_for(0, request.max_nodes, request.max_depth);
      request.max_depth = std::min(request.max_depth, request.max_nodes);
    }
    if (request.max_depth == 0) request.max_nodes = 0;

    auto t0 = Clock::now();
    DraftTree tree = drafter.propose(request);
    check_limits(tree, request, vocab);
    const int32_t proposal_class = drafter.proposal_class();
    const int32_t drafted = tree.size() - 1;
    if (options.pruner) {
      tree = options.pruner->prune(tree, PruneContext{root_entropy_normalized});
      tree.check();
      if (tree.tokens[0] != root) throw std::logic_error("pruner changed the root token");
      record.pruned = drafted - (tree.size() - 1);
    }
    auto t1 = Clock::now();

    ForwardRequest verify;
    verify.tokens.assign(tree.tokens.begin(), tree.tokens.end());
    verify.parents.assign(tree.parents.begin(), tree.parents.end());
    for (int32_t d : tree.depths) verify.positions.push_back(base + d);
    verify.hidden_layers = needs.hidden_layers;
    ForwardResult verified = target.forward(cache, verify);
    const FloatRows& logits = verified.logits;
    auto t2 = Clock::now();

    AcceptResult result = acceptor.accept(tree, logits.data(), vocab, sampler);
    std::vector<int64_t> kept(result.path.begin(), result.path.end());
    cache.commit_path(base, kept);
    auto t3 = Clock::now();

    std::vector<int32_t> committed_now;
    for (int32_t node : result.path) committed_now.push_back(tree.tokens[node]);
    committed.insert(committed.end(), committed_now.begin(), committed_now.end());
    if (options.on_step) options.on_step(tree, result, logits.data(), vocab);
    const double step_root_entropy = root_entropy_normalized;  // this step's H_m, for its trace
    if (options.pruner)  // the next root is drawn from the row of the last accepted node
      root_entropy_normalized = normalized_entropy(logits.data() + static_cast<int64_t>(result.path.back()) * vocab, vocab);
    drafter.observe(StepFeedback{tree, result, committed_now, target_outputs(needs, logits, verified.hidden, result.path)});
    record.detail.drafting = drafter.step_detail();
    if (options.pruner) record.detail.pruning = PruningDetail{options.pruner->name(), step_root_entropy, drafted, tree.size() - 1};
    record.detail.acceptance = std::move(result.detail);
    if (options.budget) {
      options.budget->observe_cost(tree.size(), ms_between(t1, t2));
      if (drafter.last_catch_up() <= drafted)  // else the time is mostly the draft model catching up
        options.budget->observe_draft_cost(proposal_class, tree.size() - 1, ms_between(t0, t1));
      const int32_t depth = *std::max_element(tree.depths.begin(), tree.depths.end());
      options.budget->observe(proposal_class, depth, static_cast<int32_t>(result.path.size()) - 1);
    }

    record.draft_size = tree.size() - 1;
    record.accepted_length = static_cast<int32_t>(result.path.size()) - 1;
    record.accepted_sources = accepted_sources(tree, result);
    if (options.root_entropy) record.root_entropy = softmax_entropy(logits.data(), vocab);
    record.draft_ms = ms_between(t0, t1);
    record.verify_ms = ms_between(t1, t2);
    record.accept_ms = ms_between(t2, t3);
    record.lossless = result.lossless;
    record.rescued = result.count(NodeVerdict::Rescued);
    record.relaxed = result.count(NodeVerdict::Relaxed);
    if (record.rescued || record.relaxed) {
      record.accepted_verdicts = accepted_verdicts(result);
      record.decision_scores = scores_json(result);
    }
    out.steps.push_back(record);

    for (size_t i = 1; i < result.path.size() && going; ++i) going = emit(tree.tokens[result.path[i]]);
    if (going) going = emit(result.next_token);
  }
  out.stats.new_tokens = static_cast<int64_t>(out.tokens.size());
  out.stats.decode_ms = ms_between(decode_start, Clock::now()) - callback_ms;
  return out;
}

}  // namespace specd
