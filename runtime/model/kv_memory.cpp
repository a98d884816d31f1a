#include "model/kv_memory.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "util/error.h"

namespace specd {
namespace {

std::atomic<int64_t> limit{0};  // 0: not set, the default applies
std::atomic<int64_t> in_use{0};
std::atomic<int64_t> peak{0};

}  // namespace

int64_t default_kv_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return int64_t{4} << 30;  // unknown: 4 GiB
  return static_cast<int64_t>(pages) * page_size / 2;
}

void set_kv_memory_limit(int64_t bytes) { limit = bytes > 0 ? bytes : 0; }

int64_t kv_memory_limit() {
  const int64_t set = limit;
  return set > 0 ? set : default_kv_memory_limit();
}

int64_t kv_memory_in_use() { return in_use; }
int64_t kv_memory_peak() { return peak; }

std::string format_bytes(int64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) value /= 1024, ++unit;
  char text[48];
  if (unit == 0) std::snprintf(text, sizeof text, "%lld bytes", static_cast<long long>(bytes));
  else std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

namespace {

void refuse(int64_t bytes, int64_t used, const std::string& what) {
  const int64_t max = kv_memory_limit();
  input_error("--max-memory", what + " needs " + std::to_string(bytes) + " bytes (" + format_bytes(bytes) + ")" +
                                  (used ? " besides " + format_bytes(used) + " in use" : "") + "; the limit is " + std::to_string(max) +
                                  " bytes (" + format_bytes(max) + "): raise --max-memory or ask for fewer tokens");
}

}  // namespace

void check_kv_memory(int64_t bytes, const std::string& what) {
  const int64_t used = in_use;
  if (bytes < 0 || bytes > kv_memory_limit() - used) refuse(bytes, used, what);
}

void check_kv_plan(int64_t bytes, const std::string& what) {
  if (bytes < 0 || bytes > kv_memory_limit()) refuse(bytes, 0, what);
}

KvMemoryReservation::KvMemoryReservation(int64_t bytes, const std::string& what) : bytes_(bytes) {
  check_kv_memory(bytes, what);
  const int64_t now = in_use += bytes;
  for (int64_t seen = peak; now > seen && !peak.compare_exchange_weak(seen, now);) {
  }
}

KvMemoryReservation::~KvMemoryReservation() { in_use -= bytes_; }

}  // namespace specd
