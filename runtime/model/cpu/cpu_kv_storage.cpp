#include "model/cpu/cpu_kv_storage.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "model/kv_memory.h"

namespace specd {
namespace {

int64_t tiled_rows(int64_t rows) { return (rows + 15) / 16 * 16; }

std::string rows_text(int64_t rows) { return "the KV cache of " + std::to_string(rows) + " rows"; }

}  // namespace

CpuKvStorage::CpuKvStorage(int64_t layers, int64_t kv_heads, int64_t capacity, int64_t head_dim, KvType type)
    : layers_(layers), kv_heads_(kv_heads), capacity_(capacity), head_dim_(head_dim), type_(type) {
  // Reserved before allocating: a limit passed is an error, not an attempt to allocate.
  const int64_t bytes = kv_array_bytes(2, layers, kv_heads, capacity, head_dim, type);
  memory_ = std::make_unique<KvMemoryReservation>(bytes, rows_text(capacity));
  rows_ = HostBuffer(static_cast<size_t>(bytes));
}

CpuKvStorage::~CpuKvStorage() = default;

int64_t CpuKvStorage::bytes_for(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t rows, KvType type) {
  const int64_t kv = kv_array_bytes(2, layers, kv_heads, rows, head_dim, type);
  const int64_t tiles = kv_array_bytes(1, layers, kv_heads, tiled_rows(rows), head_dim, type);
  int64_t total = 0;
  if (kv == INT64_MAX || tiles == INT64_MAX || __builtin_add_overflow(kv, tiles, &total)) return INT64_MAX;
  return total;
}

int64_t CpuKvStorage::bytes() const { return kv_array_bytes(2, layers_, kv_heads_, capacity_, head_dim_, type_); }

std::unique_ptr<KvStorage> CpuKvStorage::grown(int64_t capacity, int64_t keep) const {
  auto bigger = std::make_unique<CpuKvStorage>(layers_, kv_heads_, capacity, head_dim_, type_);
  const size_t row_bytes = static_cast<size_t>(head_dim_) * kv_element_bytes(type_);
  for (int64_t array = 0; array < 2 * layers_; ++array)
    for (int64_t g = 0; g < kv_heads_; ++g)
      std::memcpy(bigger->array_bytes(array) + g * capacity * row_bytes, array_bytes(array) + g * capacity_ * row_bytes,
                  keep * row_bytes);
  return bigger;  // its key tiles are laid out by capacity: rebuilt on first use
}

void CpuKvStorage::move_rows(int64_t base, const std::vector<int64_t>& path) {
  // Rows move only toward the front (path[i] >= i, increasing): in order, no source is
  // overwritten before it is read.
  const int64_t row_bytes = head_dim_ * kv_element_bytes(type_);
  for (int64_t array = 0; array < 2 * layers_; ++array)
    for (int64_t g = 0; g < kv_heads_; ++g) {
      char* head = array_bytes(array) + g * capacity_ * row_bytes;
      for (size_t i = 0; i < path.size(); ++i)
        if (path[i] != static_cast<int64_t>(i))
          std::memmove(head + (base + static_cast<int64_t>(i)) * row_bytes, head + (base + path[i]) * row_bytes, row_bytes);
    }
}

void CpuKvStorage::invalidate_from(int64_t row) { tiles_rows_ = std::min(tiles_rows_, row); }

void* CpuKvStorage::key_tiles_bytes(int64_t layer) {
  const int64_t per_layer = kv_array_bytes(1, 1, kv_heads_, tiled_rows(capacity_), head_dim_, type_);
  if (tiles_.empty()) {
    const int64_t bytes = kv_array_bytes(1, layers_, kv_heads_, tiled_rows(capacity_), head_dim_, type_);
    tiles_memory_ = std::make_unique<KvMemoryReservation>(bytes, "the key tiles of " + rows_text(capacity_));
    tiles_ = HostBuffer(static_cast<size_t>(bytes));
  }
  return tiles_.as<char>() + layer * per_layer;
}

void CpuKvStorage::set_key_tiles_rows(int64_t rows) {
  if (tiles_.empty() || rows < 0 || rows > capacity_) throw std::logic_error("CpuKvStorage::set_key_tiles_rows out of range");
  tiles_rows_ = rows;
}

}  // namespace specd
