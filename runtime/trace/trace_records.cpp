#include "trace/trace_records.h"

#include "util/fnv1a.h"

namespace specd {

std::string token_hash(const std::vector<int32_t>& tokens) {
  uint64_t hash = kFnv1aOffset;
  for (int32_t token : tokens) {
    const auto bits = static_cast<uint32_t>(token);
    for (int byte = 0; byte < 4; ++byte) hash = fnv1a_byte(hash, static_cast<unsigned char>(bits >> (8 * byte)));
  }
  return hash_hex(hash);
}

}  // namespace specd
