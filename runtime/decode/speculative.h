#pragma once
// The speculative decoding loop: prefill, then steps of draft -> one target forward over the tree
// -> accept -> commit the accepted path in the KV cache, until EOS or the token budget. A step
// commits the accepted drafted tokens plus one token from the target (bonus or correction), so
// plain autoregressive decoding is the special case of an empty draft.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "decode/autoregressive.h"
#include "model/kv_cache.h"
#include "model/llama_model.h"
#include "sampling/sampler.h"
#include "speculative/acceptor.h"
#include "speculative/draft_budget.h"
#include "speculative/drafter.h"
#include "speculative/pruner.h"
#include "trace/trace_records.h"

namespace specd {

class LlamaModel;

struct SpeculativeOptions {
  GenerateOptions generate;    // budget, sampling, stop tokens, on_token
  int32_t max_draft_nodes = 16;  // drafted nodes per step besides the root
  int32_t max_draft_depth = 8;
  // Optional: caps each step's drafted nodes (and depth) by expected tokens per ms; reset at the
  // start of the request and fed every step's outcome.
  DraftBudget* budget = nullptr;
  // Record the target's entropy at each root in the step traces (a pass over the vocabulary,
  // a few % of a small model's step).
  bool root_entropy = true;
  // Whether the output keeps a StepTrace per step (AR, which has no use for them, does not build them).
  bool record_steps = true;
  // Optional: drops drafted nodes before verification (design.md's pruner stage).
  Pruner* pruner = nullptr;
  // The most prompt rows one forward prefills (0: the whole prompt in one). A server bounds so how
  // much a newcomer's prompt lengthens the steps of the requests decoding beside it. The rows
  // whose outputs the drafter observes always come in the last forward.
  int64_t prefill_chunk = 0;
  // Optional: sees every step's verified tree, its verdicts and the target's logits rows
  // ([tree.size(), vocab]) before the drafter does; calibration records rejections with it.
  std::function<void(const DraftTree& tree, const AcceptResult& result, const float* logits, int64_t vocab)> on_step;
};

struct SpeculativeOutput {
  std::vector<int32_t> tokens;
  GenerateStats stats;
  std::vector<StepTrace> steps;
};

// One request decoded a step at a time, so that a server can interleave requests, let them join
// and leave between steps, and drop a cancelled one. The drafter, acceptor and the options'
// budget and pruner are borrowed and must outlive it.
class SpeculativeSession {
 public:
  // Checks the prompt and the limits (InputError) and sizes the KV cache; runs nothing yet.
  SpeculativeSession(const LlamaModel& target, Drafter& drafter, Acceptor& acceptor, std::vector<int32_t> prompt,
                     SpeculativeOptions options);
  ~SpeculativeSession();
  SpeculativeSession(const SpeculativeSession&) = delete;
  SpeculativeSession& operator=(const SpeculativeSession&) = delete;

  // The prefill on the first call (or calls, by chunks), then one draft-verify-accept step a call; emits the
  // step's tokens through on_token. False once the request has ended (stop token or budget).
  bool step();
  bool finished() const { return !going_; }
  // The prompt is prefilled (the first token is known); with a prefill chunk, after several steps.
  bool started() const { return started_; }

  // step() in parts, so that a server can run many sessions' forwards as batches
  // (LlamaModel::forward_batch). prepare() drafts (on the first call: nothing) and returns the
  // forward this step needs on cache(), or null once finished; complete() takes that forward's
  // result, with its time and the rows it ran (the whole batch's), accepts and emits.
  // Before prepare(), a caller may also batch the draft model's forwards: begin_draft() starts
  // the proposal; while draft_round() gives a forward, run it with draft_model() on draft_cache()
  // and hand feed_draft() its result and this session's share of its time. prepare() runs any
  // rounds left alone.
  void begin_draft();
  const ForwardRequest* draft_round();
  const LlamaModel& draft_model() const;
  KvCache& draft_cache();
  void feed_draft(ForwardResult result, double forward_ms);
  const ForwardRequest* prepare();
  void complete(ForwardResult result, double forward_ms, int32_t forward_rows);
  KvCache& cache() { return cache_; }
  // The step's rows in the target's forward (once begun: at most; once prepared: exactly), its
  // expected committed tokens (the draft budget's estimate; 1 without one) and the last step's
  // drafting time: what the batch's other requests' budgets weigh (DraftBudget::BatchLoad).
  int32_t planned_rows() const;
  double expected_tokens() const;
  double draft_ms() const;
  // What the other requests of the next batched step put in it (no effect without a draft budget).
  void set_batch_load(const BatchLoad& load);
  // The next step drafts at most `nodes` nodes, as a batch planner chose for the whole batch,
  // instead of what the draft budget would pay for on its own.
  void plan_draft(int32_t nodes) { planned_ = nodes; }
  // The next step runs no draft-model forward: retrieval still drafts, a draft-model fallback and
  // a draft model do not (DraftRequest::model).
  void plan_without_model() { without_model_ = true; }
  // The cost-aware budget's acceptance estimates for the draft model's class (the prior without a
  // budget) and the most nodes a step may draft.
  Acceptance acceptance() const { return options_.budget ? options_.budget->acceptance(0) : Acceptance{0.6, 0.6}; }
  int32_t max_draft_nodes() const { return std::min(options_.max_draft_nodes, options_.max_draft_depth); }
  // Rows the draft model's first forward of the next step would run: its catch-up with the text
  // and the root (Drafter::first_round_rows; 0 without a draft model).
  int64_t first_draft_rows() const { return drafter_.first_round_rows(committed_); }
  // The most tokens the request may still emit (its budget left).
  int64_t remaining_tokens() const { return budget_ - static_cast<int64_t>(out_.tokens.size()); }

  // The tokens and step records so far.
  const SpeculativeOutput& output() const { return out_; }
  // The output with its decode time; the session is spent.
  SpeculativeOutput finish();

 private:
  struct Emitter;
  struct Pending;

  const LlamaModel& target_;
  Drafter& drafter_;
  Acceptor& acceptor_;
  std::vector<int32_t> prompt_;
  SpeculativeOptions options_;
  int64_t vocab_, budget_;
  Sampler sampler_;
  KvCache cache_;
  SpeculativeOutput out_;
  std::unique_ptr<Emitter> emit_;
  std::unique_ptr<Pending> pending_;  // between prepare() and complete()
  bool started_ = false, going_ = true;
  int64_t prefilled_ = 0;  // prompt rows in the KV cache while the prefill runs in chunks
  // Where this step's prefill forward ends in the prompt (the prompt's length: the last forward).
  int64_t prefill_end(const DrafterNeeds& needs) const;
  std::chrono::steady_clock::time_point decode_start_;
  double root_entropy_normalized_ = 0;
  bool wants_root_entropy() const { return options_.pruner || acceptor_.uses_root_entropy(); }
  double last_draft_ms_ = 0;  // the last completed step's drafting time
  int32_t planned_ = -1;      // plan_draft()'s cap for the next step, -1 for none
  bool without_model_ = false;  // plan_without_model() for the next step
  std::vector<int32_t> committed_;  // everything in the KV cache; the root is not yet
};

// The whole request in one call: a session stepped to its end.
SpeculativeOutput generate_speculative(const LlamaModel& target, Drafter& drafter, Acceptor& acceptor,
                                       const std::vector<int32_t>& prompt, const SpeculativeOptions& options);

}  // namespace specd
