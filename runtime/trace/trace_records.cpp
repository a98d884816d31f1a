#include "trace/trace_records.h"

#include <cstdio>

namespace specd {

std::string token_hash(const std::vector<int32_t>& tokens) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (int32_t token : tokens) {
    const auto bits = static_cast<uint32_t>(token);
    for (int byte = 0; byte < 4; ++byte) {
      hash ^= (bits >> (8 * byte)) & 0xffu;
      hash *= 0x100000001b3ULL;
    }
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace specd
