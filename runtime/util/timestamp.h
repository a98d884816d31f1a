#pragma once
// Wall-clock times as files record them.
#include <string>

namespace specd {

// Now, UTC, ISO 8601 to the second ("2025-01-31T12:00:00Z").
std::string utc_timestamp();

}  // namespace specd
