#pragma once
// Whether a batched decoding step drafts as planned or runs the guard's off arm, from the
// throughput the server actually gets. The batch planner and the draft budgets price a step by
// fits of the steps they see, so they cannot see a cost that no fit holds: on a 2-core Xeon with a
// cache-resident target, a draft model's forwards leave the target's next forwards slower, and for
// several of them (the host's shared L3 drops the target's weights while the target pauses, and
// they come back over several forwards; `specd bench --idle-gaps`): sam at 2 clients, plain
// two-row forwards took 3.28 ms 1-4 steps after the draft model last ran, 2.82 ms 5-8 steps after,
// 2.63 ms 9-16 after and 2.53-2.59 ms later, as AR's 2.58 (`specd serve --step-log`,
// reports/bench/serve-steps-sam-xeon.txt). The fits see that cost spread over every step,
// retrieval and plain ones included, so a plain step looks as dear as one with model drafts and
// the draft model never too dear.
// So where a mix retrieves beside a draft model (sam and ReSpec fall back to one; pld beside sd) it
// has two off arms: the first switches off the draft model, the cost the fits cannot see, and
// leaves retrieval (which the budgets price from its own steps) drafting; the second decodes
// plainly. A mix of draft-model methods alone (sd, csd) or of retrieval alone (pld, AdaPLD) has the
// plain one. The scheduler applies them (Scheduler::Drafting); the guard only compares. At 2
// clients of sam, retrieval alone delivered 0.757 tokens a ms against 0.642 with its draft model
// (with only a plain off arm, sam had been 0.95x AR, guard or not); at 4 clients retrieval lost
// too (0.905 against plain decoding's 1.062, and 0.983 as planned), and without a plain arm the
// guard could only pick the better loser (docs/serving.md, Load).
// This guard compares what each arm delivers: per batch mix (the methods of the decoding requests
// in the step, sorted, so the batch size is part of it) it runs windows of steps of one arm, and
// takes each window's committed tokens per millisecond of whole step time (drafting included; steps
// with a prefill left out) as one sample of its arm.
//
// Drafting is the planner's choice, so it stands unless an off arm delivers more by more than
// their noise: the difference of the arms' (decayed) means beyond `z` standard errors, the
// spread estimated from the windows themselves; an arm further down the list (less drafting)
// displaces the one chosen so far on the same terms. Comparing bare means of 24-step windows (a step's
// time scatters by a third here), the first guard kept sd and csd plain through 5 of their 40 runs
// at 2 clients on the AVX2 EPYC, where drafting delivered 1.2x. Steps with a prefill are not the
// guard's (the scheduler leaves them to the planner): never evidence, an arm applied there would
// never be judged. Costs of switching, not of either arm, are not evidence either, since they
// would weigh on every window after a switch: after a mix's drafting resumes, draft models catch
// up with the text decoded without them (a forward over every token they missed: its first 6
// steps), and after a draft model ran (in any mix: the cache is the machine's), the target's
// slowdown above fades over tens of forwards (4 sd requests on the Xeon: plain 4-row forwards
// 4.51 ms 1-4 forwards after it, 3.59 at 17-32, 2.94 from 33 on, as AR's 3.10;
// reports/bench/serve-steps-4-clients-widened-xeon.txt), so an off arm's evidence starts 32
// target forwards after the last one (counting its steps from the mix's own switch, 16 of them
// were not enough: the plain arm looked no better than drafting, which lost to AR). That wait is
// bounded (32 steps of a window), so that a mix whose neighbours keep a draft model busy still
// gets windows; held steps run the off arm and tell nothing, and with up to 4 x 32 of them sd's
// transitional mixes at 2 and 4 clients (a request alone while the next one prefills) spent most
// of their steps in plain decoding, which lost to drafting. Where the target does not slow after a
// draft model (the AVX512-BF16 EPYC, whose large target is not cached: sd's 2-row plain forwards
// 2.73 ms 1-4 steps after one, 2.79 from 33 on), holding costs half of every exploration for
// nothing, so the guard stops holding once the mixes' plain steps show no recovery
// (recovery_matters: pooled over the mixes, since the cache is the machine's, so that only the
// server's first mixes pay for learning it, and one mix's scatter does not decide).
// Each arm behind still gets a window now and then, so that it can win back (the
// costs move as the machine's load does): every `min_gap` windows at first, then, each time it
// loses again, twice as far apart or as far as its deficit asks (min_gap * (t / z)^2 for a deficit
// of t standard errors), up to `max_gap`. Explorations are what the guard costs where drafting
// wins: at 2 clients on the AVX2 EPYC, exploring every 4 to 64 windows cost sd 6% of its
// unguarded throughput, and the first look alone nothing measurable.
#include <cstdint>
#include <map>
#include <string>

namespace specd::serve {

class DraftingGuard {
 public:
  struct Options {
    int32_t window_steps = 24;          // counted decoding steps of one mix per window
    int32_t min_gap = 4, max_gap = 256;  // windows between two of the arm behind
    double forget = 0.75;               // an arm's evidence kept per window of its own
    double z = 2.0;                     // standard errors the off arm must lead by to be applied
    int32_t settle_steps = 6;           // steps after a mix's drafting resumes that are not evidence
    int32_t recover_steps = 32;         // target forwards after a draft model ran that are no off arm's evidence
    // Holding back stops while the machine shows no recovery: once the plain steps within
    // recover_steps of a draft model delivered tokens per ms within `recovery_margin` of the later
    // ones (or more), pooled over the mixes with at least `recovery_samples` steps of each kind.
    double recovery_margin = 0.03;
    int32_t recovery_samples = 16;
  };
  DraftingGuard() : DraftingGuard(Options{}) {}
  explicit DraftingGuard(Options options) : options_(options) {}

  static constexpr int32_t kMaxArms = 3;
  // The arm the next step of a batch of this mix runs: 0 drafts as planned, 1 .. arms-1 are its
  // off arms in the order the scheduler lists them.
  int32_t arm(const std::string& mix) const;
  bool drafting(const std::string& mix) const { return arm(mix) == 0; }
  // Every step that ran the target, prefills included, before its observe(): whether a draft
  // model ran in it.
  void forward(bool draft_model_ran) { since_model_ = draft_model_ran ? 0 : since_model_ + 1; }
  // Whether the target is still recovering from a draft model's turn: recover_steps forwards have
  // not passed since (the batch planner's plain fit leaves those steps out too).
  bool recovering() const { return since_model_ <= options_.recover_steps; }
  // A decoding step of this mix (no prefill in it) committed `tokens` in `ms` of whole step time;
  // `arms` (2 to kMaxArms) is how many the mix has, fixed by its methods.
  void observe(const std::string& mix, double tokens, double ms, int32_t arms = 2);

  // An arm's decayed mean of its windows' committed tokens per ms (0 before its first window).
  double rate(const std::string& mix, int32_t arm) const;
  int64_t off_steps() const { return off_steps_; }  // steps the guard ran in an off arm

 private:
  // One arm's windows, each weighted forget^(its age in windows of this arm).
  struct Arm {
    double weight = 0, weight_sq = 0, sum = 0, sum_sq = 0;
    int64_t windows = 0;
    void add(double rate, double forget);
    double mean() const { return weight > 0 ? sum / weight : 0; }
    double effective_n() const { return weight_sq > 0 ? weight * weight / weight_sq : 0; }
    double variance() const;  // unbiased for the effective sample size; needs two windows
  };
  struct Mix {
    int32_t arms = 2;
    Arm stats[kMaxArms];
    int32_t current = 0;     // the current window's arm
    int32_t leader = 0;      // the arm applied when none is explored
    bool exploring = false;  // the current window runs an arm behind
    int32_t steps = 0;       // counted in the current window
    double tokens = 0, ms = 0;
    // Per arm: windows between its explorations while behind, and since its last window.
    int32_t gap[kMaxArms] = {}, since[kMaxArms] = {};
    int32_t settle = 0;  // steps of this window still to pass before evidence counts
    int32_t held = 0;    // steps of this window held back while the target recovered
    // What the plain arm delivered (it drafts nothing, so its pace shows the recovery alone) while
    // the target recovered, and after.
    struct Pace {
      double tokens = 0, ms = 0;
      int64_t steps = 0;
    } soon, late;
  };
  // Whether off arms still wait for the target's recovery: no mix has recovery_samples plain
  // steps of each kind yet, or their pace ratios (late over soon, pooled in logs, each weighted by
  // 1 / (1/soon + 1/late) steps) show the target slower while it recovers by over recovery_margin.
  bool recovery_matters() const;
  // Arm a's lead over arm b in standard errors of the difference of their means; an arm with one
  // window borrows the other's spread; 0 while no spread is known.
  static double lead(const Arm& a, const Arm& b);
  void close_window(Mix& mix);
  void decide(Mix& mix);  // the next window's arm

  Options options_;
  std::map<std::string, Mix> mixes_;
  int64_t off_steps_ = 0;
  int64_t since_model_ = INT32_MAX;  // target forwards since a draft model last ran
};

}  // namespace specd::serve
