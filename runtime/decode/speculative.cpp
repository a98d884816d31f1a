#include "decode/speculative.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
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

// How many of the prompt's last rows the prefill's last forward must hold: the rows whose outputs
// the drafter observes, or the last row, whose logits give the first token.
int64_t last_prefill_rows(const DrafterNeeds& needs, int64_t n) {
  if (!needs.prefill) return std::min<int64_t>(1, n);
  return needs.prefill_rows > 0 ? std::min<int64_t>(needs.prefill_rows, n) : n;
}

// The prompt's (last) forward: logits of the last row, or of the rows the drafter asked to see
// (with their hidden states); `observed_rows` is how many of the prompt's last positions it observes.
ForwardRequest prefill_request(const DrafterNeeds& needs, const std::vector<int32_t>& prompt, int64_t& observed_rows) {
  const int64_t n = static_cast<int64_t>(prompt.size());
  if (needs.prefill_logits_rows > 0 && needs.target_entropy)
    throw std::logic_error("drafter needs: prefill_logits_rows leaves rows without the logits target_entropy needs");
  const bool wants_logits = needs.target_logits || needs.target_entropy;
  observed_rows = last_prefill_rows(needs, n);
  const int64_t logits_rows = needs.prefill_logits_rows > 0 ? std::min<int64_t>(needs.prefill_logits_rows, observed_rows) : observed_rows;
  ForwardRequest prefill;
  prefill.tokens.assign(prompt.begin(), prompt.end());
  prefill.logits = needs.prefill && wants_logits && logits_rows == n ? LogitsWanted::All : LogitsWanted::Last;
  if (needs.prefill && wants_logits) prefill.last_rows = logits_rows;
  if (needs.prefill) prefill.hidden_layers = needs.hidden_layers;
  return prefill;
}

// Shows the drafter the prompt's last `observed_rows` positions as the prefill's last forward (of `n`
// rows) gave them.
void observe_prefill(Drafter& drafter, const DrafterNeeds& needs, const ForwardResult& prefilled, int64_t n, int64_t observed_rows) {
  std::vector<int32_t> rows;
  for (int64_t i = n - observed_rows; i < n; ++i) rows.push_back(static_cast<int32_t>(i));
  drafter.observe_prefill(target_outputs(needs, prefilled.logits, prefilled.hidden, rows, n - prefilled.logits.rows));
}

// What the drafter may propose this step: the configured limits, within the tokens left and the
// context (a step emits at most depth + 1 tokens and places its deepest node at base + depth),
// and what a caller planned for the step (planned >= 0) or else, with a cost-aware budget, what
// the budget pays for; without the draft model (model false), a draft model drafts nothing.
DraftRequest draft_request(const std::vector<int32_t>& committed, int32_t root, const SpeculativeOptions& options, const Drafter& drafter,
                           int64_t remaining, int64_t room, int32_t planned, bool model) {
  DraftRequest request{committed, root, options.max_draft_nodes,
                       static_cast<int32_t>(std::max<int64_t>(0, std::min<int64_t>({options.max_draft_depth, remaining - 1, room}))),
                       nullptr, remaining, model};
  if (!model && !drafter.limits_itself()) request.max_nodes = request.max_depth = 0;  // a draft model's own proposal
  if (planned >= 0) {  // the caller decided for the batch
    request.budget = options.budget;
    request.max_nodes = std::min(request.max_nodes, planned);
    request.max_depth = std::min(request.max_depth, request.max_nodes);
  } else if (options.budget) {
    request.budget = options.budget;
    if (!drafter.limits_itself()) request.max_nodes = request.model_nodes(drafter.first_round_rows(committed));
    request.max_depth = std::min(request.max_depth, request.max_nodes);
  }
  if (request.max_depth == 0) request.max_nodes = 0;
  return request;
}

// The tree's forward: every node at its depth's position past `base`, seeing its ancestors.
ForwardRequest verify_request(const DraftTree& tree, int64_t base, const DrafterNeeds& needs) {
  ForwardRequest verify;
  verify.tokens.assign(tree.tokens.begin(), tree.tokens.end());
  verify.parents.assign(tree.parents.begin(), tree.parents.end());
  for (int32_t d : tree.depths) verify.positions.push_back(base + d);
  verify.hidden_layers = needs.hidden_layers;
  return verify;
}

// The times of one step's stages, in ms.
struct StepTimes {
  double draft = 0, verify = 0, accept = 0;
};

// Feeds the cost-aware budget one step: the forward's cost (of all the rows it ran, the step's
// and, batched, other requests'), the draft's (unless the time was mostly a draft model catching
// up with the text) and how deep the draft was accepted.
void observe_step(DraftBudget& budget, const Drafter& drafter, int32_t proposal_class, const DraftTree& tree, int32_t drafted,
                  const AcceptResult& result, const StepTimes& t, int32_t forward_rows) {
  budget.observe_cost(forward_rows, t.verify);
  if (drafter.last_catch_up() <= drafted) budget.observe_draft_cost(proposal_class, tree.size() - 1, t.draft);
  budget.observe(proposal_class, tree.depth(), static_cast<int32_t>(result.path.size()) - 1);
}

// The step's trace record from its tree, verdicts and times.
void fill_record(StepTrace& record, const DraftTree& tree, AcceptResult& result, const StepTimes& t, const float* root_logits,
                 int64_t vocab, bool root_entropy) {
  record.draft_size = tree.size() - 1;
  record.accepted_length = static_cast<int32_t>(result.path.size()) - 1;
  record.accepted_sources = accepted_sources(tree, result);
  if (root_entropy) record.root_entropy = softmax_entropy(root_logits, vocab);
  record.draft_ms = t.draft;
  record.verify_ms = t.verify;
  record.accept_ms = t.accept;
  record.lossless = result.lossless;
  record.rescued = result.count(NodeVerdict::Rescued);
  record.relaxed = result.count(NodeVerdict::Relaxed);
  if (record.rescued || record.relaxed) {
    record.accepted_verdicts = accepted_verdicts(result);
    record.decision_scores = scores_json(result);
  }
  record.detail.acceptance = std::move(result.detail);
}

}  // namespace

// Appends the tokens a request emits, stopping at a stop token or the budget; the callback's time
// (printing is the caller's cost, not the method's) is kept out of decode_ms.
struct SpeculativeSession::Emitter {
  const GenerateOptions& gen;
  int64_t budget;
  SpeculativeOutput& out;
  double callback_ms = 0;

  // False when generation must end.
  bool operator()(int32_t token) {
    out.tokens.push_back(token);
    if (gen.on_token) {
      const auto callback_start = Clock::now();
      gen.on_token(token);
      callback_ms += ms_between(callback_start, Clock::now());
    }
    if (std::find(gen.stop_tokens.begin(), gen.stop_tokens.end(), token) != gen.stop_tokens.end()) {
      out.stats.stopped = true;
      return false;
    }
    return static_cast<int64_t>(out.tokens.size()) < budget;
  }
};

SpeculativeSession::SpeculativeSession(const LlamaModel& target, Drafter& drafter, Acceptor& acceptor, std::vector<int32_t> prompt,
                                       SpeculativeOptions options)
    : target_(target),
      drafter_(drafter),
      acceptor_(acceptor),
      prompt_(std::move(prompt)),
      options_(std::move(options)),
      vocab_(target.config().vocab_size),
      budget_(new_token_budget(target, prompt_, options_.generate.max_new_tokens)),
      sampler_(options_.generate.sampling) {
  if (options_.max_draft_nodes < 0 || options_.max_draft_depth < 0) input_error("draft budget", "must not be negative");
  cache_ = target.new_cache(static_cast<int64_t>(prompt_.size()) + budget_ + options_.max_draft_nodes + 1);
  out_.stats.prompt_tokens = static_cast<int64_t>(prompt_.size());
  emit_ = std::make_unique<Emitter>(Emitter{options_.generate, budget_, out_});
  going_ = budget_ > 0;
}

SpeculativeSession::~SpeculativeSession() = default;

// What a step has done between begin_draft() and complete().
struct SpeculativeSession::Pending {
  ForwardRequest forward;
  bool prefill = false;
  int64_t prefill_end = 0;    // prefill: where this forward's prompt rows end
  bool prepared = false;      // prepare() has returned the target's forward
  int64_t observed_rows = 0;  // prefill: the prompt rows the drafter observes
  // A decode step's draft:
  std::optional<DraftRequest> request;
  std::unique_ptr<DraftRounds> rounds;  // a proposal in rounds; null: proposed in one go
  DraftTree tree{0};
  StepTrace record;
  StepTimes times;
  int32_t proposal_class = 0, drafted = 0;
  int64_t base = 0;
  DraftShape shape;             // planned before the rounds ran
  double expected_tokens = 1;
};

void SpeculativeSession::begin_draft() {
  if (!going_) return;
  if (pending_) throw std::logic_error("SpeculativeSession: a step begun twice");
  pending_ = std::make_unique<Pending>();
  Pending& p = *pending_;
  if (!started_) {
    p.prefill = true;
    return;
  }
  if (options_.record_steps) p.record.drafter = drafter_.name();
  p.base = cache_.length();
  p.request.emplace(draft_request(committed_, out_.tokens.back(), options_, drafter_,
                                  budget_ - static_cast<int64_t>(out_.tokens.size()), target_.context_length() - 1 - p.base, planned_, !without_model_));
  planned_ = -1;
  without_model_ = false;
  const auto start = Clock::now();
  p.rounds = drafter_.propose_in_rounds(*p.request);
  if (!p.rounds) p.tree = drafter_.propose(*p.request);
  p.times.draft += ms_between(start, Clock::now());
  // The step's plan as far as it is known before any draft-model round: the tree a retrieval
  // drafter made, or the most a model's rounds will draft.
  p.shape = p.rounds ? p.rounds->shape() : DraftShape{p.tree.size() - 1, p.tree.depth()};
  if (options_.budget) p.expected_tokens = options_.budget->expected_tokens(drafter_.proposal_class(), p.shape.nodes, p.shape.depth);
}

const ForwardRequest* SpeculativeSession::draft_round() {
  return pending_ && pending_->rounds ? pending_->rounds->next() : nullptr;
}

const LlamaModel& SpeculativeSession::draft_model() const { return pending_->rounds->model(); }

KvCache& SpeculativeSession::draft_cache() { return pending_->rounds->cache(); }

void SpeculativeSession::feed_draft(ForwardResult result, double forward_ms) {
  const auto start = Clock::now();
  pending_->rounds->feed(std::move(result));
  pending_->times.draft += forward_ms + ms_between(start, Clock::now());
}

const ForwardRequest* SpeculativeSession::prepare() {
  if (!going_) return nullptr;
  if (!pending_) begin_draft();
  Pending& p = *pending_;
  if (p.prepared) throw std::logic_error("SpeculativeSession: prepare() twice without complete()");
  p.prepared = true;
  const DrafterNeeds needs = drafter_.needs();
  if (p.prefill) {
    p.prefill_end = prefill_end(needs);
    if (p.prefill_end < static_cast<int64_t>(prompt_.size())) {  // a chunk: only its KV rows are wanted
      p.forward = ForwardRequest{};
      p.forward.tokens.assign(prompt_.begin() + prefilled_, prompt_.begin() + p.prefill_end);
      p.forward.logits = LogitsWanted::None;
    } else {  // the last forward, numbered from its own first row
      p.forward = prefill_request(needs, std::vector<int32_t>(prompt_.begin() + prefilled_, prompt_.end()), p.observed_rows);
    }
    return &p.forward;
  }
  // Rounds the caller did not run, alone; then prune. The tree is verified by the forward the
  // caller runs.
  while (const ForwardRequest* round = draft_round()) {
    const auto start = Clock::now();
    ForwardResult result = draft_model().forward(draft_cache(), *round);
    feed_draft(std::move(result), ms_between(start, Clock::now()));
  }
  const auto start = Clock::now();
  if (p.rounds) p.tree = p.rounds->tree();
  const int32_t root = out_.tokens.back();
  check_limits(p.tree, *p.request, vocab_);
  p.proposal_class = drafter_.proposal_class();
  p.drafted = p.tree.size() - 1;
  if (options_.pruner) {
    p.tree = options_.pruner->prune(p.tree, PruneContext{root_entropy_normalized_});
    p.tree.check();
    if (p.tree.tokens[0] != root) throw std::logic_error("pruner changed the root token");
    p.record.pruned = p.drafted - (p.tree.size() - 1);
    p.record.detail.pruning = PruningDetail{options_.pruner->name(), root_entropy_normalized_, p.drafted, p.tree.size() - 1};
  }
  p.times.draft += ms_between(start, Clock::now());
  if (options_.budget)
    p.expected_tokens = options_.budget->expected_tokens(p.proposal_class, p.tree.size() - 1, p.tree.depth());
  p.forward = verify_request(p.tree, p.base, needs);
  return &p.forward;
}

int64_t SpeculativeSession::prefill_end(const DrafterNeeds& needs) const {
  const int64_t n = static_cast<int64_t>(prompt_.size());
  const int64_t last = last_prefill_rows(needs, n);
  if (options_.prefill_chunk <= 0 || n - prefilled_ <= std::max(options_.prefill_chunk, last)) return n;
  return std::min(prefilled_ + options_.prefill_chunk, n - last);
}

double SpeculativeSession::expected_tokens() const { return pending_ ? pending_->expected_tokens : 1.0; }

int32_t SpeculativeSession::planned_rows() const {
  if (!pending_) return 0;
  if (pending_->prepared) return static_cast<int32_t>(pending_->forward.tokens.size());
  if (pending_->prefill) return static_cast<int32_t>(prefill_end(drafter_.needs()) - prefilled_);
  return pending_->shape.nodes + 1;
}

double SpeculativeSession::draft_ms() const { return last_draft_ms_; }

void SpeculativeSession::set_batch_load(const BatchLoad& load) {
  if (options_.budget) options_.budget->set_batch_load(load);
}

void SpeculativeSession::complete(ForwardResult result, double forward_ms, int32_t forward_rows) {
  if (!pending_ || !pending_->prepared) throw std::logic_error("SpeculativeSession: complete() without prepare()");
  const std::unique_ptr<Pending> pending = std::move(pending_);
  Pending& p = *pending;
  const DrafterNeeds needs = drafter_.needs();
  if (p.prefill) {
    out_.stats.prefill_ms += forward_ms;
    const int64_t rows = p.prefill_end - prefilled_;  // this forward's
    prefilled_ = p.prefill_end;
    if (prefilled_ < static_cast<int64_t>(prompt_.size())) return;  // a chunk: more of the prompt next step
    // The drafter sees the prompt rows it asked for; the first token comes from the last row.
    started_ = true;
    const float* first = result.logits.row(result.logits.rows - 1);
    decode_start_ = Clock::now();
    drafter_.begin(prompt_, options_.generate.sampling.seed);
    if (needs.prefill) observe_prefill(drafter_, needs, result, rows, p.observed_rows);
    if (options_.budget) options_.budget->reset();
    // H_m of the next root, for the pruner and an acceptor with buckets: from the row the root is
    // drawn from (computed only when one of them asks).
    root_entropy_normalized_ = wants_root_entropy() ? normalized_entropy(first, vocab_) : 0.0;
    going_ = (*emit_)(sampler_.sample(first, vocab_));
    committed_ = prompt_;
    return;
  }
  // Accept, keep the path's KV rows, emit.
  const DraftTree& tree = p.tree;
  p.times.verify = forward_ms;
  const auto accept_start = Clock::now();
  const float* logits = result.logits.data();
  if (acceptor_.uses_root_entropy()) acceptor_.set_root_entropy(root_entropy_normalized_);
  AcceptResult accepted = acceptor_.accept(tree, logits, vocab_, sampler_);
  cache_.commit_path(p.base, std::vector<int64_t>(accepted.path.begin(), accepted.path.end()));
  p.times.accept = ms_between(accept_start, Clock::now());

  std::vector<int32_t> committed_now;
  for (int32_t node : accepted.path) committed_now.push_back(tree.tokens[node]);
  committed_.insert(committed_.end(), committed_now.begin(), committed_now.end());
  if (options_.on_step) options_.on_step(tree, accepted, logits, vocab_);
  if (wants_root_entropy())  // the next root is drawn from the row of the last accepted node
    root_entropy_normalized_ = normalized_entropy(logits + static_cast<int64_t>(accepted.path.back()) * vocab_, vocab_);
  drafter_.observe(StepFeedback{tree, accepted, committed_now, target_outputs(needs, result.logits, result.hidden, accepted.path)});
  if (options_.budget) observe_step(*options_.budget, drafter_, p.proposal_class, tree, p.drafted, accepted, p.times, forward_rows);
  last_draft_ms_ = p.times.draft;
  if (options_.record_steps) {
    p.record.detail.drafting = drafter_.step_detail();
    fill_record(p.record, tree, accepted, p.times, logits, vocab_, options_.root_entropy);
    out_.steps.push_back(std::move(p.record));
  }

  for (size_t i = 1; i < accepted.path.size() && going_; ++i) going_ = (*emit_)(tree.tokens[accepted.path[i]]);
  if (going_) going_ = (*emit_)(accepted.next_token);
}

bool SpeculativeSession::step() {
  const ForwardRequest* request = prepare();
  if (!request) return false;
  const int32_t rows = static_cast<int32_t>(request->tokens.size());
  const auto start = Clock::now();
  ForwardResult result = target_.forward(cache_, *request);
  complete(std::move(result), ms_between(start, Clock::now()), rows);
  return going_;
}

SpeculativeOutput SpeculativeSession::finish() {
  out_.stats.new_tokens = static_cast<int64_t>(out_.tokens.size());
  if (started_) out_.stats.decode_ms = ms_between(decode_start_, Clock::now()) - emit_->callback_ms;
  going_ = false;
  return std::move(out_);
}

SpeculativeOutput generate_speculative(const LlamaModel& target, Drafter& drafter, Acceptor& acceptor,
                                       const std::vector<int32_t>& prompt, const SpeculativeOptions& options) {
  SpeculativeSession session(target, drafter, acceptor, prompt, options);
  while (session.step()) {
  }
  return session.finish();
}

}  // namespace specd
