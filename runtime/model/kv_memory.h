#pragma once
// The memory every KV cache of the process may take together, so that a model's config (a
// max_position_embeddings of 2e9) or a request cannot make the caches allocate beyond it. The
// limit is --max-memory, by default half of the physical memory. A KvCache reserves its bytes when
// it allocates and gives them back when its last copy goes; a reservation past the limit throws
// InputError naming --max-memory and the bytes needed.
#include <cstdint>
#include <memory>
#include <string>

namespace specd {

// The default limit: half of the physical memory.
int64_t default_kv_memory_limit();
// bytes <= 0: the default.
void set_kv_memory_limit(int64_t bytes);
int64_t kv_memory_limit();
// Bytes reserved by the caches alive now, and the most they have held at once.
int64_t kv_memory_in_use();
int64_t kv_memory_peak();

// InputError when `bytes` more than in use now would pass the limit; `what` says what needs them
// ("the KV cache of 600 rows").
void check_kv_memory(int64_t bytes, const std::string& what);
// InputError when `bytes` in all (a plan made before the work: everything a request will hold at
// once) pass the limit.
void check_kv_plan(int64_t bytes, const std::string& what);

// Holds `bytes` of the limit until destroyed (check_kv_memory first).
class KvMemoryReservation {
 public:
  KvMemoryReservation(int64_t bytes, const std::string& what);
  ~KvMemoryReservation();
  KvMemoryReservation(const KvMemoryReservation&) = delete;
  KvMemoryReservation& operator=(const KvMemoryReservation&) = delete;

 private:
  int64_t bytes_;
};

// "1.5 GiB" for messages.
std::string format_bytes(int64_t bytes);

}  // namespace specd
