#pragma once
// Catch2 v2 has no SKIP. A test that cannot run here (a kernel this CPU or build lacks, a missing
// tool) ends with SPECD_SKIP(reason) before any check: it warns with a fixed marker and returns,
// and tests/CMakeLists.txt sets ctest's SKIP_REGULAR_EXPRESSION to that marker, so ctest reports
// the test as Skipped instead of Passed. Only for all-or-nothing tests: a test that checked
// something before skipping would hide those checks' result behind "Skipped".
#define SPECD_SKIP_MARKER "SPECD-TEST-SKIPPED"
#define SPECD_SKIP(reason)                      \
  do {                                          \
    WARN(SPECD_SKIP_MARKER ": " << reason);     \
    return;                                     \
  } while (false)

// Defined in a build with AddressSanitizer (gcc's macro, clang's feature test): resident memory
// there includes ASan's shadow and quarantine, so memory measurements skip.
#if defined(__SANITIZE_ADDRESS__)
#define SPECD_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPECD_UNDER_ASAN 1
#endif
#endif
