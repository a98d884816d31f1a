// The drafting guard: windows of steps with drafting and without, compared by the tokens per ms
// they delivered. The steps here are made up (tokens and ms given), so the machine's speed plays
// no part: a fake clock.
#include <catch2/catch.hpp>

#include <array>
#include <functional>
#include <random>

#include "serve/drafting_guard.h"

using specd::serve::DraftingGuard;

namespace {

constexpr int32_t kWindow = 4;

// No settling steps, so that a window here is kWindow steps of one arm.
DraftingGuard small_windows() { return DraftingGuard(DraftingGuard::Options{kWindow, 4, 32, 0.75, 2.0, 0, 0}); }

// Runs `windows` windows of `mix`, each step delivering what its arm delivers here (tokens per
// ms: drafted, plain); returns how many of those windows drafted.
int run(DraftingGuard& guard, const std::string& mix, int windows, double drafted_rate, double plain_rate) {
  int drafting = 0;
  for (int w = 0; w < windows; ++w) {
    const bool drafts = guard.drafting(mix);
    drafting += drafts ? 1 : 0;
    for (int s = 0; s < kWindow; ++s) {
      REQUIRE(guard.drafting(mix) == drafts);  // a window runs one arm throughout
      guard.observe(mix, drafts ? 10 * drafted_rate : 10 * plain_rate, 10);
    }
  }
  return drafting;
}

}  // namespace

TEST_CASE("drafting guard: a new mix drafts as planned, then looks at its off arm once") {
  DraftingGuard guard = small_windows();
  CHECK(guard.drafting("sd"));
  CHECK(run(guard, "sd", 1, 1.0, 1.0) == 1);
  CHECK_FALSE(guard.drafting("sd"));
  CHECK(guard.rate("sd", 0) == Approx(1.0));
  CHECK(guard.rate("sd", 1) == 0);
  CHECK(guard.off_steps() == 0);
}

TEST_CASE("drafting guard: drafting that loses is switched off, with sparse windows to win back") {
  DraftingGuard guard = small_windows();
  const int drafted = run(guard, "sam,sam", 200, 0.9, 1.0);
  // After the first look, the drafting arm only runs as exploration, every 4 to 32 windows.
  CHECK(drafted >= 1 + 200 / 32);
  CHECK(drafted <= 1 + 12);
  CHECK_FALSE(guard.drafting("sam,sam"));
  CHECK(guard.rate("sam,sam", 0) == Approx(0.9));
  CHECK(guard.rate("sam,sam", 1) == Approx(1.0));
  CHECK(guard.off_steps() == (200 - drafted) * kWindow);
}

TEST_CASE("drafting guard: drafting that pays keeps nearly every window") {
  DraftingGuard guard = small_windows();
  const int drafted = run(guard, "sd", 200, 1.8, 1.0);
  CHECK(200 - drafted <= 1 + 12);  // the first look at plain decoding, then backed-off explorations
  CHECK(guard.drafting("sd"));
}

TEST_CASE("drafting guard: each mix has its own evidence") {
  DraftingGuard guard = small_windows();
  run(guard, "sd", 40, 1.5, 1.0);
  run(guard, "sd,sd", 40, 0.8, 1.0);
  CHECK(guard.drafting("sd"));
  CHECK_FALSE(guard.drafting("sd,sd"));
  CHECK(guard.drafting("sd,sd,sd"));  // never seen: as planned
}

TEST_CASE("drafting guard: when the costs change, the arm behind wins back within its exploration gap") {
  DraftingGuard guard = small_windows();
  run(guard, "csd,sd", 100, 0.8, 1.0);
  REQUIRE_FALSE(guard.drafting("csd,sd"));
  // The machine quietens and drafting now pays: within the longest gap and the windows its decayed
  // evidence needs to overtake, the mix drafts again and stays drafting.
  run(guard, "csd,sd", 32 + 8, 1.7, 1.0);
  CHECK(run(guard, "csd,sd", 20, 1.7, 1.0) >= 17);
  CHECK(guard.drafting("csd,sd"));
}

TEST_CASE("drafting guard: ties go to drafting") {
  DraftingGuard guard = small_windows();
  const int drafted = run(guard, "sd", 100, 1.0, 1.0);
  CHECK(drafted >= 100 - 1 - 100 / 4);
}

// Steps one at a time, each delivering rate(drafts, steps since the arm changed) tokens per ms, a
// draft model running in each drafting step; returns the share of steps that drafted.
double run_steps(DraftingGuard& guard, const std::string& mix, int steps, const std::function<double(bool, int)>& rate) {
  int drafted = 0, since_switch = 0;
  bool last = true;
  for (int s = 0; s < steps; ++s) {
    const bool drafts = guard.drafting(mix);
    since_switch = drafts == last ? since_switch + 1 : 0;
    last = drafts;
    drafted += drafts ? 1 : 0;
    guard.forward(drafts);
    guard.observe(mix, 10 * rate(drafts, since_switch), 10);
  }
  return static_cast<double>(drafted) / steps;
}

// One decoding step of `mix` delivering `tokens` in 10 ms, after its target forward, in which a
// draft model ran or not.
void step(DraftingGuard& guard, const std::string& mix, double tokens, bool draft_model, int32_t arms = 2) {
  guard.forward(draft_model);
  guard.observe(mix, tokens, 10, arms);
}

TEST_CASE("drafting guard: a noisy lead of drafting is kept") {
  // A step's time scatters by a third, as on a loaded 2-core machine, and a drafting step commits
  // 1 to 4 tokens in 1.92x a plain step's time: drafting delivers 1.3x plain decoding on average.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> scatter(0.67, 1.33);
  std::uniform_int_distribution<int> accepted(1, 4);
  auto noisy = [&](bool drafts, int) { return drafts ? accepted(rng) / (1.92 * scatter(rng)) : 1.0 / scatter(rng); };
  DraftingGuard guard;  // the server's options: 24-step windows, settling after a switch
  CHECK(run_steps(guard, "sd,sd", 20000, noisy) >= 0.95);
}

TEST_CASE("drafting guard: a noisy loss of drafting is still switched off") {
  std::mt19937 rng(12);
  std::uniform_real_distribution<double> scatter(0.67, 1.33);
  DraftingGuard guard(DraftingGuard::Options{24, 4, 64, 0.75, 2.0, 0, 0});
  CHECK(run_steps(guard, "sam,sam", 6000, [&](bool drafts, int) { return (drafts ? 0.8 : 1.0) * scatter(rng); }) <= 0.15);
  CHECK_FALSE(guard.drafting("sam,sam"));
}

TEST_CASE("drafting guard: the steps after a switch of arm are not evidence") {
  // Drafting pays 1.3x, but its first 4 steps after plain ones cost the draft model's catch-up.
  auto with_catch_up = [](bool drafts, int since_switch) { return drafts ? (since_switch < 4 ? 0.3 : 1.3) : 1.0; };
  DraftingGuard settled(DraftingGuard::Options{24, 4, 64, 0.75, 2.0, 6, 6});
  CHECK(run_steps(settled, "sd", 5000, with_catch_up) >= 0.95);
  CHECK(settled.rate("sd", 0) == Approx(1.3));
  // Counted, the catch-up steps weigh on every drafting window that follows a plain one.
  DraftingGuard counted(DraftingGuard::Options{24, 4, 64, 0.75, 2.0, 0, 0});
  run_steps(counted, "sd", 5000, with_catch_up);
  CHECK(counted.rate("sd", 0) < 1.3);
}

TEST_CASE("drafting guard: the steps after a draft model ran are not an off arm's evidence either") {
  // Drafting delivers 0.9 of the off arm, but a draft model leaves the target's forwards slower
  // for a while after its last draft (4 clients of sd on the Xeon: about 32 forwards): the off
  // arm's first 12 steps deliver 0.6. Counted, they made every off window after a drafting one look
  // no better than drafting, and the guard kept drafting.
  auto lingering = [](bool drafts, int since_switch) { return drafts ? 0.9 : (since_switch < 12 ? 0.6 : 1.0); };
  DraftingGuard settled(DraftingGuard::Options{24, 4, 64, 0.75, 2.0, 6, 16});
  CHECK(run_steps(settled, "sam,sam", 6000, lingering) <= 0.15);
  CHECK(settled.rate("sam,sam", 1) == Approx(1.0));
  DraftingGuard counted(DraftingGuard::Options{24, 4, 64, 0.75, 2.0, 6, 0});
  CHECK(run_steps(counted, "sam,sam", 6000, lingering) >= 0.8);
}

TEST_CASE("drafting guard: the target's recovery is counted in every mix's forwards, the catch-up settling in the mix's own") {
  DraftingGuard guard(DraftingGuard::Options{kWindow, 4, 32, 0.75, 2.0, 6, 6});
  for (int s = 0; s < kWindow; ++s) step(guard, "sd", 10, true);
  REQUIRE_FALSE(guard.drafting("sd"));  // its first look at plain decoding: 6 forwards to recover first
  // A prefill step (no mix) and another mix's planned steps that run no draft model count toward
  // the recovery; a planned window is never held back by it.
  guard.forward(false);
  for (int s = 0; s < kWindow; ++s) {
    CHECK(guard.drafting("sd,sd"));
    step(guard, "sd,sd", 10, false);
  }
  CHECK_FALSE(guard.drafting("sd,sd"));
  // 1 + kWindow = 5 forwards have passed: "sd" waits for one more, then counts kWindow steps.
  for (int s = 0; s < 1 + kWindow - 1; ++s) step(guard, "sd", 20, false);
  CHECK(guard.rate("sd", 1) == 0);
  step(guard, "sd", 20, false);
  CHECK(guard.rate("sd", 1) == Approx(2.0));
  // A draft model that runs in another mix holds "sd,sd"'s plain arm back: its window has not
  // closed after kWindow steps, only after the 6 forwards of recovery.
  guard.forward(true);
  for (int s = 0; s < kWindow + 6 - 1; ++s) step(guard, "sd,sd", 20, false);
  CHECK(guard.rate("sd,sd", 1) == 0);
  step(guard, "sd,sd", 20, false);
  CHECK(guard.rate("sd,sd", 1) == Approx(2.0));
}

TEST_CASE("drafting guard: an off arm waits at most recover_steps of a window for the target to recover") {
  // A draft model runs in every step (other mixes of the batch's history keep drafting): the off
  // arm's window still closes, after 6 held steps and kWindow counted ones. (Held steps run the
  // off arm without counting: with 4 x 32 of them a window, sd's transitional mixes at 2 and 4
  // clients spent most of their steps in plain decoding, which lost to drafting.)
  DraftingGuard guard(DraftingGuard::Options{kWindow, 4, 32, 0.75, 2.0, 0, 6});
  for (int s = 0; s < kWindow; ++s) step(guard, "sd", 10, true);
  REQUIRE_FALSE(guard.drafting("sd"));
  for (int s = 0; s < 6 + kWindow - 1; ++s) step(guard, "sd", 20, true);
  CHECK(guard.rate("sd", 1) == 0);
  step(guard, "sd", 20, true);
  CHECK(guard.rate("sd", 1) == Approx(2.0));
}

TEST_CASE("drafting guard: a mix stops holding its off arm back once its plain steps show the target does not slow after a draft model") {
  // Drafting wins (2 tokens a step against 1), so the plain arm only gets its explorations; each
  // of its windows starts right after a drafted step. Returns the steps of the plain arm's windows
  // after the first look: each is recover_steps (6) held + kWindow counted while holding.
  auto plain_window_steps = [](double soon_ms, double late_ms) {
    DraftingGuard guard(DraftingGuard::Options{kWindow, 2, 2, 0.75, 2.0, 0, 6, 0.03, 16});
    std::vector<int> windows;
    int since = 0, run = 0;
    for (int s = 0; s < 4000; ++s) {
      const bool drafts = guard.drafting("sd");
      if (!drafts) ++run;
      if (drafts && run > 0) windows.push_back(run), run = 0;
      since = drafts ? 0 : since + 1;
      guard.forward(drafts);
      guard.observe("sd", drafts ? 20 : 10, drafts ? 10 : (since <= 6 ? soon_ms : late_ms));
    }
    return windows;
  };
  // The first look is two windows in a row; every later window stands alone.
  const std::vector<int> flat = plain_window_steps(10, 10);
  REQUIRE(flat.size() >= 8);
  CHECK(flat.front() == 2 * (6 + kWindow) - 6);  // the second window's steps are all past the recovery
  CHECK(flat[1] == 6 + kWindow);                  // 6 held, then kWindow: 16 of each kind not yet seen
  CHECK(flat.back() == kWindow);                  // nothing held: no slowdown in 16+ of each
  // Where the target is a fifth slower while it recovers, every window still waits for it.
  const std::vector<int> slowing = plain_window_steps(12, 10);
  REQUIRE(slowing.size() >= 8);
  CHECK(slowing.back() == 6 + kWindow);
}

TEST_CASE("drafting guard: whether the target slows after a draft model is pooled over the mixes") {
  // As above, for one mix after another on one guard: the steps of each of the plain arm's windows.
  // Two steps of each kind make a verdict here, so that a first look of two windows without holds
  // (since a draft model: 1-6 while recovering, 7-8 after) gives the mix its own, as the server's
  // 24-step windows give 32 and 16 of 16.
  DraftingGuard::Options options{kWindow, 2, 2, 0.75, 2.0, 0, 6, 0.03, 2};
  auto plain_window_steps = [](DraftingGuard& guard, const std::string& mix, double soon_ms, double late_ms) {
    std::vector<int> windows;
    int since = 0, run = 0;
    for (int s = 0; s < 4000; ++s) {
      const bool drafts = guard.drafting(mix);
      if (!drafts) ++run;
      if (drafts && run > 0) windows.push_back(run), run = 0;
      since = drafts ? 0 : since + 1;
      guard.forward(drafts);
      guard.observe(mix, drafts ? 20 : 10, drafts ? 10 : (since <= 6 ? soon_ms : late_ms));
    }
    return windows;
  };
  SECTION("a flat target: the second mix's first look holds nothing") {
    DraftingGuard guard(options);
    REQUIRE(plain_window_steps(guard, "sd", 10, 10).front() == 2 * (6 + kWindow) - 6);
    const std::vector<int> second = plain_window_steps(guard, "sd,sd", 10, 10);
    CHECK(second.front() == 2 * kWindow);
    CHECK(second.back() == kWindow);
  }
  SECTION("a target slower while it recovers: the second mix holds from its first window") {
    DraftingGuard guard(options);
    plain_window_steps(guard, "sd", 12, 10);
    const std::vector<int> second = plain_window_steps(guard, "sd,sd", 12, 10);
    CHECK(second.front() == 2 * (6 + kWindow) - 6);
    CHECK(second.back() == 6 + kWindow);
  }
  SECTION("the mixes' evidence is pooled: one mix's 5% is not the machine's") {
    DraftingGuard guard(options);
    plain_window_steps(guard, "sd", 10, 10);
    plain_window_steps(guard, "sd,sd", 10, 10);
    plain_window_steps(guard, "sd,sd,sd", 10.5, 10);
    CHECK(plain_window_steps(guard, "sd,sd,sd,sd", 10, 10).front() == 2 * kWindow);
  }
  SECTION("pooled, a slowdown in every mix still holds") {
    DraftingGuard guard(options);
    plain_window_steps(guard, "sd", 10.5, 10);
    plain_window_steps(guard, "sd,sd", 10.5, 10);
    CHECK(plain_window_steps(guard, "sd,sd,sd", 10.5, 10).front() == 2 * (6 + kWindow) - 6);
  }
}

TEST_CASE("drafting guard: the further behind plain decoding is, the rarer its windows") {
  // Drafting delivers 1.5x, windows scatter a little: plain is many standard errors behind, so
  // after its first lost exploration its next one waits the longest gap. Doubling the gap alone
  // (4, 8, 16, ...) explored 5 times within these 250 windows.
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> scatter(0.9, 1.1);
  DraftingGuard guard(DraftingGuard::Options{kWindow, 4, 256, 0.75, 2.0, 0, 0});
  int explorations = 0;
  bool last = true;
  for (int w = 0; w < 250; ++w) {
    const bool drafts = guard.drafting("sd");
    if (w >= 3 && last && !drafts) ++explorations;  // the first look (windows 1 and 2) aside
    last = drafts;
    for (int s = 0; s < kWindow; ++s) guard.observe("sd", 10 * (drafts ? 1.5 : 1.0) * scatter(rng), 10);
  }
  CHECK(explorations >= 1);
  CHECK(explorations <= 2);
}

// A mix with a draft model has three arms: as planned, without the draft model (retrieval still
// drafting), plain. Runs `windows` windows, each step of arm a delivering rates[a] tokens per ms;
// returns how many windows each arm ran.
std::array<int, 3> run_three(DraftingGuard& guard, const std::string& mix, int windows, const std::array<double, 3>& rates) {
  std::array<int, 3> ran{};
  for (int w = 0; w < windows; ++w) {
    const int32_t arm = guard.arm(mix);
    REQUIRE(arm >= 0);
    REQUIRE(arm < 3);
    ++ran[static_cast<size_t>(arm)];
    for (int s = 0; s < kWindow; ++s) {
      REQUIRE(guard.arm(mix) == arm);  // a window runs one arm throughout
      guard.observe(mix, 10 * rates[static_cast<size_t>(arm)], 10, 3);
    }
  }
  return ran;
}

TEST_CASE("drafting guard: with three arms, a first look at each off arm, then the arm that leads") {
  DraftingGuard guard = small_windows();
  // sam at 4 clients on the Xeon: as planned 0.983 tokens a ms, retrieval alone 0.905, plain 1.062.
  const auto ran = run_three(guard, "sam,sam,sam,sam", 200, {0.983, 0.905, 1.062});
  // Each arm behind is many standard errors behind: explored every max_gap (32) windows.
  const auto tail = run_three(guard, "sam,sam,sam,sam", 40, {0.983, 0.905, 1.062});
  CHECK(tail[2] >= 40 - 4);
  CHECK(ran[2] >= 200 - 2 * (1 + 12) - 2);  // the first looks, then backed-off explorations of each
  CHECK(ran[1] >= 2);
  CHECK(guard.rate("sam,sam,sam,sam", 0) == Approx(0.983));
  CHECK(guard.rate("sam,sam,sam,sam", 1) == Approx(0.905));
  CHECK(guard.rate("sam,sam,sam,sam", 2) == Approx(1.062));
  CHECK(guard.off_steps() == (240 - ran[0] - tail[0]) * kWindow);
}

TEST_CASE("drafting guard: with three arms, the first off arm is kept where it leads both") {
  DraftingGuard guard = small_windows();
  // sam at 2 clients: retrieval alone ahead of the draft model and of plain decoding.
  const auto ran = run_three(guard, "sam,sam", 200, {0.64, 0.76, 0.70});
  CHECK(run_three(guard, "sam,sam", 40, {0.64, 0.76, 0.70})[1] >= 40 - 4);
  CHECK(ran[1] >= 200 - 2 * (1 + 12) - 2);
}

TEST_CASE("drafting guard: with three arms, drafting that pays keeps nearly every window") {
  DraftingGuard guard = small_windows();
  const auto ran = run_three(guard, "sd", 200, {1.5, 1.1, 1.0});
  CHECK(run_three(guard, "sd", 40, {1.5, 1.1, 1.0})[0] >= 40 - 4);
  CHECK(ran[0] >= 200 - 2 * (2 + 12));  // each off arm's first look, then backed-off explorations
}

TEST_CASE("drafting guard: no settling between the two off arms, which run no draft model") {
  DraftingGuard guard(DraftingGuard::Options{kWindow, 4, 32, 0.75, 2.0, 6, 16});
  auto sam = [&](double tokens) { step(guard, "sam", tokens, guard.arm("sam") == 0, 3); };
  for (int s = 0; s < kWindow; ++s) sam(10);
  REQUIRE(guard.arm("sam") == 1);  // its first look without the draft model: 16 forwards to recover first
  for (int s = 0; s < 16 + 2 * kWindow; ++s) sam(10);
  REQUIRE(guard.arm("sam") == 2);  // then plain: counted from its first step
  for (int s = 0; s < kWindow; ++s) sam(20);
  CHECK(guard.rate("sam", 2) == Approx(2.0));
}
