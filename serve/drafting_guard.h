#pragma once
// Whether a batched decoding step drafts at all, from the throughput the server actually gets.
// The batch planner and the draft budgets price a step by fits of the steps they see, so they
// cannot see a cost that no fit holds: on a 2-core Xeon with a cache-resident target, the same
// two rows verified 0.25-1.1 ms slower in a serving run with drafting than in plain decoding (the
// draft model and SAM's corpus sharing the cache), and at 2 clients sam ran 0.97x plain decoding.
// This guard compares what each choice delivers: per batch mix (the methods of the decoding
// requests in the step, sorted, so the batch size is part of it) it runs windows of steps with
// drafting as planned and windows with drafting off, and weighs each arm by its committed
// tokens per millisecond of whole step time (drafting included; steps with a prefill left out).
// Drafting stays off for a mix while its windows deliver less than plain ones. The arm behind
// still gets a window now and then, so that it can win back (the costs move as the machine's load
// does): every `min_gap` windows at first, and twice as far apart each time it loses again, up to
// `max_gap`. A fixed share would cost what the leader gains: one plain window in 8 takes a 1.8x
// speedup to 1.6x; backing off, the share falls to 1 in 32 where one arm is clearly ahead. Windows
// are long enough for one window's rate to be worth comparing (a step's time scatters by a third
// here).
#include <cstdint>
#include <map>
#include <string>

namespace specd::serve {

class DraftingGuard {
 public:
  struct Options {
    int32_t window_steps = 24;   // decoding steps of one mix per window
    int32_t min_gap = 4, max_gap = 32;  // windows between two of the arm behind
    double forget = 0.75;        // an arm's evidence kept per window of its own
  };
  DraftingGuard() : DraftingGuard(Options{}) {}
  explicit DraftingGuard(Options options) : options_(options) {}

  // Whether the next step of a batch of this mix may draft (false: every request decodes plainly).
  bool drafting(const std::string& mix) const;
  // A decoding step of this mix (no prefill in it) committed `tokens` in `ms` of whole step time.
  void observe(const std::string& mix, double tokens, double ms);

  // An arm's decayed committed tokens per ms (0 before its first window), for tests.
  double rate(const std::string& mix, bool drafting) const;
  int64_t plain_steps() const { return plain_steps_; }  // steps the guard kept from drafting

 private:
  struct Arm {
    double tokens = 0, ms = 0;
    int64_t windows = 0;
    double rate() const { return ms > 0 ? tokens / ms : 0; }
  };
  struct Mix {
    Arm arms[2];            // [0] plain, [1] drafting
    bool drafting = true;   // the current window's arm
    bool exploring = false; // the current window runs the arm behind
    int32_t steps = 0;      // in the current window
    double tokens = 0, ms = 0;
    int32_t gap = 0, since = 0;  // windows between explorations; since the last one
  };
  void close_window(Mix& mix);

  Options options_;
  std::map<std::string, Mix> mixes_;
  int64_t plain_steps_ = 0;
};

}  // namespace specd::serve
