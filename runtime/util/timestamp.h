#pragma once
// Wall-clock times as files record them.
#include <string>

namespace specd {

// Now, UTC, ISO 8601 to the second ("2025-01-31T12:00:00Z").
std::string utc_timestamp();
// Now in local time, formatted by strftime (the C locale's names: "26 Nov 2026" for "%d %b %Y").
std::string local_time(const char* format);

}  // namespace specd
