// The drafting guard: windows of steps with drafting and without, compared by the tokens per ms
// they delivered. The steps here are made up (tokens and ms given), so the machine's speed plays
// no part: a fake clock.
#include <catch2/catch.hpp>

#include "serve/drafting_guard.h"

using specd::serve::DraftingGuard;

namespace {

constexpr int32_t kWindow = 4;

DraftingGuard small_windows() { return DraftingGuard(DraftingGuard::Options{kWindow, 4, 32, 0.75}); }

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

TEST_CASE("drafting guard: a new mix drafts as planned, then looks at plain decoding once") {
  DraftingGuard guard = small_windows();
  CHECK(guard.drafting("sd"));
  CHECK(run(guard, "sd", 1, 1.0, 1.0) == 1);
  CHECK_FALSE(guard.drafting("sd"));
  CHECK(guard.rate("sd", true) == Approx(1.0));
  CHECK(guard.rate("sd", false) == 0);
  CHECK(guard.plain_steps() == 0);
}

TEST_CASE("drafting guard: drafting that loses is switched off, with sparse windows to win back") {
  DraftingGuard guard = small_windows();
  const int drafted = run(guard, "sam,sam", 200, 0.9, 1.0);
  // After the first look, the drafting arm only runs as exploration, every 4 to 32 windows.
  CHECK(drafted >= 1 + 200 / 32);
  CHECK(drafted <= 1 + 12);
  CHECK_FALSE(guard.drafting("sam,sam"));
  CHECK(guard.rate("sam,sam", true) == Approx(0.9));
  CHECK(guard.rate("sam,sam", false) == Approx(1.0));
  CHECK(guard.plain_steps() == (200 - drafted) * kWindow);
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
