#include "util/timestamp.h"

#include <ctime>

namespace specd {

namespace {

std::string format_now(const char* format, bool utc) {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  if (utc) gmtime_r(&now, &parts);
  else localtime_r(&now, &parts);
  char text[64];
  return std::strftime(text, sizeof text, format, &parts) ? text : "";
}

}  // namespace

std::string utc_timestamp() { return format_now("%Y-%m-%dT%H:%M:%SZ", true); }

std::string local_time(const char* format) { return format_now(format, false); }

}  // namespace specd
