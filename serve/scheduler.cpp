#include "serve/scheduler.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

#include "decode/speculative.h"
#include "model/llama_model.h"
#include "serve/output_text.h"
#include "speculative/method_catalog.h"
#include "util/error.h"

namespace specd::serve {
namespace {

double seconds_since(Job::Clock::time_point t) { return std::chrono::duration<double>(Job::Clock::now() - t).count(); }

// A decoding step that drafts nothing: one row, one token (a request's share after its prefill).
constexpr BatchLoad kPlainStep{1, 1.0, 0.0};

// a + sign * b, field by field (rows, tokens, drafting time; the cost line is a's).
BatchLoad combine(BatchLoad a, const BatchLoad& b, int sign) {
  a.rows += sign * b.rows;
  a.tokens += sign * b.tokens;
  a.draft_ms += sign * b.draft_ms;
  return a;
}

}  // namespace

Job::Progress Job::take(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return !progress_.text.empty() || progress_.done; });
  Progress copy = progress_;
  progress_.text.clear();
  return copy;
}

void Job::wait_started() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return progress_.started || progress_.done; });
}

struct Scheduler::Slot {
  std::shared_ptr<Job> job;
  std::unique_ptr<OutputText> text;
  std::unique_ptr<SpeculativeSession> session;
  SpeculativeMetrics metrics;
  double queue_s = 0, first_token_s = 0;
  bool failed = false;  // fail() recorded an error; finished before the next forward
  bool chain = false;   // a draft-model chain (sd, csd): the batch planner sets its draft length
  bool model_drafted = false;  // its draft model ran in this step (for the step log)
  double forgone_ms = 0;  // a chain's switch-on account (BatchPlanner::Decision)
  // What its next step is expected to put in the batch (rows, tokens, drafting time): what its
  // last step planned (a plain step before that). The others' budgets weigh it.
  BatchLoad share = kPlainStep;
};

Scheduler::Scheduler(const Deployment& deployment, int parallel, int queue_limit, int64_t prefill_chunk, ServerMetrics& metrics,
                     bool drafting_guard, StepLog* step_log)
    : deployment_(deployment), parallel_(parallel), queue_limit_(queue_limit), prefill_chunk_(prefill_chunk), guarded_(drafting_guard),
      metrics_(metrics), step_log_(step_log) {
  // Seeded over the rows of a batch whose every slot drafts a whole chain.
  int32_t gamma = 1;
  for (const auto& [name, served] : deployment.methods) gamma = std::max(gamma, served.options.gamma);
  if (!deployment.target_cost.empty() && !deployment.draft_cost.empty())
    planner_.seed(deployment.target_cost, deployment.draft_cost, parallel * (gamma + 1));
  thread_ = std::thread([this] { run(); });
}

Scheduler::~Scheduler() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::shared_ptr<Job> Scheduler::submit(RequestPlan plan) {
  auto job = std::make_shared<Job>(std::move(plan));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (draining_) throw RequestError(503, "", "the server is shutting down", "server_error");
    if (running_ + static_cast<int64_t>(queue_.size()) >= parallel_ + queue_limit_)
      throw RequestError(429, "", "the server is busy: " + std::to_string(running_) + " requests running and " +
                                      std::to_string(queue_.size()) + " waiting (specd serve --parallel, --queue)",
                         "rate_limit_error");
    queue_.push_back(job);
    publish_load();
  }
  wake_.notify_all();
  return job;
}

void Scheduler::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  draining_ = true;
  idle_.wait(lock, [&] { return queue_.empty() && running_ == 0; });
}

int64_t Scheduler::running() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_;
}

int64_t Scheduler::waiting() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(queue_.size());
}

// Moves queued jobs into free slots, each with its session; a job whose session cannot be built
// (its KV cache past --max-memory) ends with that error.
void Scheduler::admit(std::vector<std::unique_ptr<Slot>>& slots) {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (queue_.empty() || static_cast<int>(slots.size()) >= parallel_) return;
      job = queue_.front();
      queue_.pop_front();
      ++running_;
      publish_load();
    }
    auto slot = std::make_unique<Slot>();
    Slot* s = slot.get();
    s->job = job;
    s->queue_s = seconds_since(job->arrived);
    RequestPlan& plan = job->plan;
    s->metrics.method = plan.method;
    const MethodInfo* info = lookup_method(plan.method);
    s->chain = info && info->draft_chain;
    s->metrics.lossless = plan.policy->lossless;
    s->text = std::make_unique<OutputText>(*deployment_.tokenizer, plan.prompt, plan.stop);
    // A draft-model chain's budget starts from what its method's last requests accepted here.
    if (s->chain && plan.policy->budget)
      if (const std::optional<Acceptance> start = acceptance_.start(plan.method)) plan.policy->budget->set_prior(*start);
    SpeculativeOptions options = loop_options(*plan.policy, plan.generate);
    options.record_steps = false;
    options.root_entropy = false;
    options.prefill_chunk = prefill_chunk_;
    options.generate.on_token = [s](int32_t token) {
      const std::string piece = s->text->push(token);
      Job& j = *s->job;
      std::lock_guard<std::mutex> lock(j.mutex_);
      if (j.progress_.completion_tokens++ == 0) s->first_token_s = seconds_since(j.arrived);
      j.progress_.text += piece;
      if (!piece.empty()) j.changed_.notify_all();
    };
    options.on_step = [s](const DraftTree& tree, const AcceptResult& result, const float*, int64_t) { s->metrics.add_step(tree, result); };
    try {
      s->session = std::make_unique<SpeculativeSession>(*deployment_.target, *plan.policy->drafter, *plan.policy->acceptor, plan.prompt,
                                                         std::move(options));
    } catch (const std::exception& e) {
      fail(*s, e);
      finish(*s, "error");
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(job->mutex_);
      job->progress_.prompt_tokens = static_cast<int64_t>(plan.prompt.size());
    }
    slots.push_back(std::move(slot));
  }
}

// Removes a slot (its job finished) from the running ones.
void Scheduler::drop(std::vector<std::unique_ptr<Slot>>& slots, const Slot* slot) {
  for (size_t i = 0; i < slots.size(); ++i)
    if (slots[i].get() == slot) {
      slots.erase(slots.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
}

// The draft models' forwards of every session still drafting, level by level: each level's
// forwards of one draft model run as one batch, and each session is charged its share of the
// batch's time. A session whose drafting fails is left to prepare(), which fails it again.
// Returns the levels' time.
double Scheduler::run_draft_rounds(const std::vector<Slot*>& batch) {
  double total_ms = 0;
  for (;;) {
    std::map<const LlamaModel*, std::vector<Slot*>> by_model;
    for (Slot* slot : batch)
      if (!slot->failed && slot->session->draft_round()) {
        by_model[&slot->session->draft_model()].push_back(slot);
        slot->model_drafted = true;
      }
    if (by_model.empty()) return total_ms;
    for (auto& [model, slots] : by_model) {
      std::vector<KvCache*> caches;
      std::vector<const ForwardRequest*> requests;
      for (Slot* slot : slots) {
        caches.push_back(&slot->session->draft_cache());
        requests.push_back(slot->session->draft_round());
      }
      try {
        const auto start = Job::Clock::now();
        std::vector<ForwardResult> results = model->forward_batch(caches, requests);
        const double ms = std::chrono::duration<double, std::milli>(Job::Clock::now() - start).count();
        int32_t rows = 0;
        for (const ForwardRequest* request : requests) rows += static_cast<int32_t>(request->tokens.size());
        const double share = ms / static_cast<double>(slots.size());
        for (size_t i = 0; i < slots.size(); ++i) {
          try {
            slots[i]->session->feed_draft(std::move(results[i]), share);
          } catch (const std::exception& e) {
            fail(*slots[i], e);
          }
        }
        // The level's whole time, the drafters' sampling included, is what drafting costs the step.
        const double level_ms = std::chrono::duration<double, std::milli>(Job::Clock::now() - start).count();
        planner_.observe_draft(rows, level_ms);
        total_ms += level_ms;
      } catch (const std::exception& e) {
        for (Slot* slot : slots) fail(*slot, e);
      }
    }
  }
}

// Records why a slot's request failed: an InputError is the request's (400), anything else ours.
void Scheduler::fail(Slot& slot, const std::exception& e) {
  slot.failed = true;
  std::lock_guard<std::mutex> lock(slot.job->mutex_);
  slot.job->progress_.error_status = dynamic_cast<const InputError*>(&e) ? 400 : 500;
  slot.job->progress_.error = e.what();
}

// Ends a slot's job: its last text, its metrics, the server's counters; wakes its handler.
void Scheduler::finish(Slot& slot, const std::string& reason) {
  Job& job = *slot.job;
  FinishedRequest record;
  {
    std::lock_guard<std::mutex> lock(job.mutex_);
    if (reason != "error" && reason != "cancelled") job.progress_.text += slot.text->finish();
    job.progress_.started = job.progress_.done = true;
    job.progress_.finish_reason = reason;
    job.progress_.metrics = slot.metrics;
    record.prompt_tokens = job.progress_.prompt_tokens;
    record.completion_tokens = job.progress_.completion_tokens;
  }
  job.changed_.notify_all();
  if (slot.chain && job.plan.policy && job.plan.policy->budget)
    acceptance_.finished(job.plan.method, job.plan.policy->budget->acceptance(0), job.plan.policy->budget->evidence(0));
  // The policy (drafter, acceptor, their KV caches) goes now, not when the handler lets go.
  slot.session.reset();
  job.plan.policy.reset();
  record.speculative = slot.metrics;
  record.finish_reason = reason;
  record.latency_s = seconds_since(job.arrived);
  record.first_token_s = slot.first_token_s;
  record.queue_s = slot.queue_s;
  if (reason == "error") metrics_.refused(job.progress_.error_status);
  else metrics_.finished(record);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --running_;
    publish_load();
  }
  idle_.notify_all();
}

std::string Scheduler::guard_mix(const std::vector<std::unique_ptr<Slot>>& slots) const {
  if (!guarded_) return "";
  std::vector<std::string> methods;
  bool can_draft = false;
  for (const auto& slot : slots) {
    if (slot->job->cancelled()) continue;
    // A step with a prefill is not the guard's: it is never evidence, so an arm applied there
    // (to the running requests while a newcomer prefills) would never be judged; a mix in its
    // first look at its off arm kept it in every such step.
    if (!slot->session->started()) return "";
    methods.push_back(slot->job->plan.method);
    can_draft = can_draft || slot->job->plan.method != "ar";
  }
  if (!can_draft) return "";
  std::sort(methods.begin(), methods.end());
  std::string mix;
  for (const std::string& method : methods) mix += (mix.empty() ? "" : ",") + method;
  return mix;
}

std::vector<Scheduler::Drafting> Scheduler::guard_arms(const std::string& mix) {
  // Without the draft model is an arm of its own only where something still drafts then: a
  // retrieving method (sam, ReSpec fall back to the model; pld, AdaPLD have none) beside one
  // that uses a model. For sd, csd and their like alone it is plain decoding. Read from the mix,
  // not the slots, so that a request cancelled meanwhile cannot change a mix's arms.
  bool model = false, retrieval = false;
  std::stringstream methods(mix);
  for (std::string method; std::getline(methods, method, ',');) {
    const MethodInfo* info = lookup_method(method);
    if (!info || method == "ar") continue;
    model = model || info->draft != DraftModelUse::None;
    retrieval = retrieval || info->draft != DraftModelUse::Required;
  }
  if (model && retrieval) return {Drafting::Planned, Drafting::WithoutModel, Drafting::None};
  return {Drafting::Planned, Drafting::None};
}

// Begins every running request's step. Prefills and methods other than a draft-model chain begin
// first, each weighing the rows, tokens and drafting time of the requests begun before it and the
// expected shares of those not begun yet (their last steps'), priced by the planner's fitted cost
// line (DraftBudget::BatchLoad): each request's draft is its best response to the rest of the
// batch, not to an empty one. Then the planner picks the chains' draft lengths, for the batch's
// throughput. A prefill weighs as the plain step it is about to become: under the fitted line its
// rows add the same time to every choice, and counted in, its hundred rows and one token made
// every token of the step look dear and a draft cheap beside them (drafts switched on in prefill
// steps and lost). Cancelled and failed requests end here. Returns the requests whose steps began.
std::vector<Scheduler::Slot*> Scheduler::begin_steps(std::vector<std::unique_ptr<Slot>>& slots, Drafting drafting) {
  std::vector<Slot*> batch, chains;
  BatchLoad load, pending;  // begun this step; the shares of the slots not begun yet
  for (const auto& slot : slots) pending = combine(pending, slot->share, 1);
  // Begins one slot's step against the others'; false if it failed (recorded).
  auto begin = [&](Slot& slot) {
    pending = combine(pending, slot.share, -1);
    slot.session->set_batch_load(planner_.priced(combine(load, pending, 1)));
    if (drafting == Drafting::None && slot.session->started()) slot.session->plan_draft(0);
    if (drafting == Drafting::WithoutModel && slot.session->started()) slot.session->plan_without_model();
    try {
      slot.model_drafted = false;
      slot.session->begin_draft();
    } catch (const std::exception& e) {
      fail(slot, e);
      return false;
    }
    const BatchLoad own = slot.session->started() ? BatchLoad{slot.session->planned_rows(), slot.session->expected_tokens(), slot.session->draft_ms()}
                                         : kPlainStep;
    load = combine(load, own, 1);
    slot.share = own;
    batch.push_back(&slot);
    return true;
  };
  for (size_t i = 0; i < slots.size();) {
    Slot& slot = *slots[i];
    std::string failed;
    if (slot.job->cancelled()) {
      pending = combine(pending, slot.share, -1);
      failed = "cancelled";
    } else if (slot.chain && slot.session->started()) {
      chains.push_back(&slot);
    } else if (!begin(slot)) {
      failed = "error";
    }
    if (failed.empty()) {
      ++i;
    } else {
      finish(slot, failed);
      slots.erase(slots.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  std::vector<BatchPlanner::Chain> plan;
  for (Slot* slot : chains)
    plan.push_back(BatchPlanner::Chain{slot->session->acceptance(), slot->session->max_draft_nodes(),
                                       std::max<int64_t>(1, slot->session->first_draft_rows()), slot->session->remaining_tokens(),
                                       slot->forgone_ms});
  // With the guard's off arm for this mix, the chains' switch-on accounts wait (begin() plans
  // their draft model off).
  const std::vector<BatchPlanner::Decision> decisions =
      drafting == Drafting::Planned ? planner_.choose(plan, BatchPlanner::Fixed{load.rows, load.tokens, load.draft_ms, static_cast<int32_t>(batch.size())}) : std::vector<BatchPlanner::Decision>{};
  const BatchPlanner::Prediction predicted = drafting == Drafting::Planned ? planner_.prediction() : BatchPlanner::Prediction{};
  step_.predicted_tokens = predicted.tokens;
  step_.predicted_ms = predicted.ms;
  step_.plain_tokens = predicted.plain_tokens;
  step_.plain_ms = predicted.plain_ms;
  for (size_t c = 0; c < chains.size(); ++c) {
    Slot* slot = chains[c];
    if (!decisions.empty()) {
      slot->session->plan_draft(decisions[c].length);
      slot->forgone_ms = decisions[c].forgone_ms;
    }
    if (!begin(*slot)) {
      finish(*slot, "error");
      drop(slots, slot);
    }
  }
  return batch;
}

// The target's forward of every begun step at once, then each request accepts, commits and
// streams its tokens; finished and failed requests end.
Scheduler::Verified Scheduler::verify(std::vector<std::unique_ptr<Slot>>& slots, std::vector<Slot*>& batch) {
  std::vector<KvCache*> caches;
  std::vector<const ForwardRequest*> requests;
  int32_t rows = 0;  // the target forward's, all requests'
  bool prefill = false;
  for (size_t b = 0; b < batch.size();) {
    Slot& slot = *batch[b];
    try {
      if (slot.failed) throw std::runtime_error("");  // drafting failed: its error is recorded
      const ForwardRequest* request = slot.session->prepare();
      if (!request) throw std::logic_error("a finished session was left in its slot");
      caches.push_back(&slot.session->cache());
      requests.push_back(request);
      rows += static_cast<int32_t>(request->tokens.size());
      prefill = prefill || !slot.session->started();
      if (step_log_)
        step_.requests.push_back(StepRecord::Request{slot.job->plan.method, static_cast<int64_t>(request->tokens.size()),
                                                     slot.session->cache().length(), slot.model_drafted});
      ++b;
    } catch (const std::exception& e) {
      if (!slot.failed) fail(slot, e);
      finish(slot, "error");
      drop(slots, &slot);
      batch.erase(batch.begin() + static_cast<std::ptrdiff_t>(b));
    }
  }
  if (batch.empty()) return {};
  std::vector<ForwardResult> results;
  const auto start = Job::Clock::now();
  try {
    results = deployment_.target->forward_batch(caches, requests);
  } catch (const std::exception& e) {
    for (Slot* slot : batch) fail(*slot, e);
  }
  const double forward_ms = std::chrono::duration<double, std::milli>(Job::Clock::now() - start).count();
  std::vector<std::string> reasons(batch.size());
  int64_t tokens = 0;
  for (size_t b = 0; b < batch.size(); ++b) {
    Slot& slot = *batch[b];
    if (results.empty()) {
      reasons[b] = "error";
      continue;
    }
    try {
      const bool prefilling = !slot.session->started();
      const size_t before = slot.session->output().tokens.size();
      slot.session->complete(std::move(results[b]), forward_ms, rows);
      if (!prefilling) tokens += static_cast<int64_t>(slot.session->output().tokens.size() - before);
      if (prefilling && slot.session->started()) {  // the prompt's last chunk: the first token is known
        std::lock_guard<std::mutex> lock(slot.job->mutex_);
        slot.job->progress_.started = true;
        slot.job->changed_.notify_all();
      }
      if (slot.text->stopped()) reasons[b] = "stop";
      else if (slot.session->finished()) reasons[b] = slot.session->output().stats.stopped ? "stop" : "length";
    } catch (const std::exception& e) {
      fail(slot, e);
      reasons[b] = "error";
    }
  }
  for (size_t b = 0; b < batch.size(); ++b) {
    if (reasons[b].empty()) continue;
    finish(*batch[b], reasons[b]);
    drop(slots, batch[b]);
  }
  return results.empty() ? Verified{} : Verified{rows, static_cast<int32_t>(requests.size()), prefill, tokens, forward_ms};
}

void Scheduler::run() {
  std::vector<std::unique_ptr<Slot>> slots;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty() || !slots.empty(); });
      if (stopping_) break;
    }
    // One batched step of every running request: begin (draft lengths), the draft models'
    // forwards level by level, one target forward for all, accept.
    const auto start = Job::Clock::now();
    admit(slots);
    const std::string mix = guard_mix(slots);
    const std::vector<Drafting> arms = mix.empty() ? std::vector<Drafting>{Drafting::Planned} : guard_arms(mix);
    const Drafting arm = arms[static_cast<size_t>(mix.empty() ? 0 : guard_.arm(mix))];
    std::vector<Slot*> batch = begin_steps(slots, arm);
    const double draft_ms = run_draft_rounds(batch);
    step_.requests.clear();
    const Verified verified = verify(slots, batch);
    const double step_ms = std::chrono::duration<double, std::milli>(Job::Clock::now() - start).count();
    if (step_log_ && verified.rows > 0) {
      step_.mix = mix;
      step_.arm = arm == Drafting::Planned ? "planned" : arm == Drafting::WithoutModel ? "without-model" : "plain";
      step_.rows = verified.rows;
      step_.prefill = verified.prefill;
      step_.tokens = verified.tokens;
      step_.draft_ms = draft_ms;
      step_.forward_ms = verified.forward_ms;
      step_.step_ms = step_ms;
      step_log_->write(step_);
    }
    // What the step delivered, drafting and all: the drafting guard's evidence.
    if (verified.rows > 0) guard_.forward(draft_ms > 0);
    if (verified.rows > 0 && !verified.prefill && !mix.empty()) {
      guard_.observe(mix, static_cast<double>(verified.tokens), step_ms, static_cast<int32_t>(arms.size()));
      metrics_.set_guard_off_steps(guard_.off_steps());
    }
    // A step's whole time but its drafting is what its rows cost: the forward, and every step's
    // work besides it (planning, acceptance, text, waking the handlers), which a step that commits
    // more tokens spreads over more of them. Decoding steps only: the planner prices decoding
    // rows, and a prefill's hundred rows would set the line's slope where no draft goes. A step
    // in which a draft model ran prices drafting, if the planner planned it (the guard's arms are
    // not the planner's choices); one in which none ran, in any arm, prices plain steps, once the
    // target has recovered from the last draft model (batch_planner.h: the two fits).
    if (verified.rows > 0 && !verified.prefill) {
      if (draft_ms == 0 && !guard_.recovering()) planner_.observe_plain(verified.rows, step_ms, verified.requests);
      if (draft_ms > 0 && arm == Drafting::Planned) {
        planner_.observe_target(verified.rows, step_ms - draft_ms, verified.requests);
        planner_.observe_drafted(verified.requests, step_ms);
      }
      const BatchLoad cost = planner_.priced({});
      if (cost.fixed_ms >= 0) {  // summed up as the line through 1 and 9 rows
        const double per_row = (cost.step_ms(9) - cost.step_ms(1)) / 8;
        metrics_.set_step_cost(cost.step_ms(1) - per_row, per_row);
      }
    }
  }
  for (auto& slot : slots) finish(*slot, "cancelled");
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& job : queue_) {
    std::lock_guard<std::mutex> job_lock(job->mutex_);
    job->progress_.started = job->progress_.done = true;
    job->progress_.finish_reason = "cancelled";
    job->changed_.notify_all();
  }
  queue_.clear();
}

}  // namespace specd::serve
