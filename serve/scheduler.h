#pragma once
// The decoding thread and its queue. Requests wait in a bounded queue (full: 429) for one of
// `parallel` slots. Each step of the thread is one batched forward of every running request
// (LlamaModel::forward_batch: a newcomer's prefill, by chunks, the others' draft trees, their rows
// through the weights together, attention per request), so requests join and leave between steps, a
// cancelled one (its client gone) frees its slot at the next step, and each request's draft
// budget weighs what the batch's other rows cost (DraftBudget::BatchLoad). One thread runs every
// forward: the CPU kernels' spin pool is not shared between threads, and CSD's shared correction
// memory is only ever touched here.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "serve/acceptance_history.h"
#include "serve/batch_planner.h"
#include "serve/deployment.h"
#include "serve/drafting_guard.h"
#include "serve/step_log.h"
#include "serve/request_metrics.h"
#include "serve/request_plan.h"
#include "serve/server_metrics.h"

namespace specd::serve {

// One request's exchange between its HTTP handler and the decoding thread.
class Job {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Job(RequestPlan plan) : plan(std::move(plan)), arrived(Clock::now()) {}

  RequestPlan plan;
  const Clock::time_point arrived;

  // What the handler sees; all under `mutex`.
  struct Progress {
    std::string text;            // released text not yet taken by take()
    bool started = false;        // the prefill ran (the first token, or the end, is known)
    bool done = false;
    std::string finish_reason;   // stop, length, cancelled (when done)
    int error_status = 0;        // non-zero: the request failed with this status
    std::string error;
    int64_t prompt_tokens = 0, completion_tokens = 0;
    SpeculativeMetrics metrics;
  };
  // Waits until there is text to take, or the job is done, or `timeout` passes; returns a copy of
  // the progress with the text moved out of it.
  Progress take(std::chrono::milliseconds timeout);
  // Waits until the job has started (or ended).
  void wait_started();
  // The client is gone: the decoding thread drops the request at its next step.
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }

 private:
  friend class Scheduler;
  std::mutex mutex_;
  std::condition_variable changed_;
  Progress progress_;
  std::atomic<bool> cancelled_{false};
};

class Scheduler {
 public:
  // prefill_chunk: the most prompt rows a request prefills in one step (0: its whole prompt);
  // drafting_guard: whether DraftingGuard may switch drafting off for a batch mix; step_log (not
  // owned, may be null): where each step is recorded.
  Scheduler(const Deployment& deployment, int parallel, int queue_limit, int64_t prefill_chunk, ServerMetrics& metrics,
            bool drafting_guard = true, StepLog* step_log = nullptr);
  ~Scheduler();  // stops the thread; requests still queued or running end as cancelled

  // Queues a planned request. RequestError 429 when the queue is full, 503 once draining.
  std::shared_ptr<Job> submit(RequestPlan plan);
  // Refuses new requests and waits until every queued and running one has finished.
  void drain();
  int64_t running() const;
  int64_t waiting() const;

 private:
  struct Slot;
  void run();
  // The running and waiting gauges from running_ and queue_; called under mutex_ at every change.
  void publish_load() { metrics_.set_load(running_, static_cast<int64_t>(queue_.size())); }
  void admit(std::vector<std::unique_ptr<Slot>>& slots);
  // The drafting guard's key for this step: the decoding requests' methods, sorted; empty when
  // the guard is off, a request prefills in this step, or no request can draft.
  std::string guard_mix(const std::vector<std::unique_ptr<Slot>>& slots) const;
  // What a step drafts: as planned, or one of the guard's off arms, which switch off what the
  // fits cannot price: the draft model where a request of the mix has one (retrieval still
  // drafts), and all drafting (drafting_guard.h says why). guard_arms lists a mix's arms in the
  // guard's order.
  enum class Drafting { Planned, WithoutModel, None };
  static std::vector<Drafting> guard_arms(const std::string& mix);
  std::vector<Slot*> begin_steps(std::vector<std::unique_ptr<Slot>>& slots, Drafting drafting);
  double run_draft_rounds(const std::vector<Slot*>& batch);
  // The target's forward and the acceptance; returns the forward's rows (0: none ran), whether a
  // prefill was among them, the tokens the requests committed and the forward's time (with a
  // step log, each request's part goes to step_.requests).
  struct Verified {
    int32_t rows = 0, requests = 0;
    bool prefill = false;
    int64_t tokens = 0;
    double forward_ms = 0;
  };
  Verified verify(std::vector<std::unique_ptr<Slot>>& slots, std::vector<Slot*>& batch);
  static void drop(std::vector<std::unique_ptr<Slot>>& slots, const Slot* slot);
  void fail(Slot& slot, const std::exception& e);
  void finish(Slot& slot, const std::string& reason);

  const Deployment& deployment_;
  const int parallel_, queue_limit_;
  const int64_t prefill_chunk_;
  const bool guarded_;
  BatchPlanner planner_;  // the decoding thread's only
  AcceptanceHistory acceptance_;  // likewise
  DraftingGuard guard_;   // likewise
  ServerMetrics& metrics_;
  StepLog* step_log_;
  StepRecord step_;  // the step being logged
  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<std::shared_ptr<Job>> queue_;
  int64_t running_ = 0;
  bool draining_ = false, stopping_ = false;
  std::thread thread_;
};

}  // namespace specd::serve
