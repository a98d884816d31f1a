#pragma once
// The KV rows of specd's CPU kernels in host memory: per layer, keys and values each
// [kv_heads, capacity, head_dim] elements of the cache's KvType (cpu/kv_element.h), and (allocated on first use) a second copy of the keys
// for the batched attention kernel (cpu/attention.h): blocks of 16 rows stored dimension-major
// ([kv_heads, blocks, head_dim, 16]), so that one vector load holds one dimension of 16 keys.
// Rows [0, key_tiles_rows()) of that copy agree with the keys; truncating or moving rows lowers
// the mark, and the forward that writes rows brings the copy up to date.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "model/cpu/kv_element.h"
#include "model/kv_cache.h"
#include "util/host_buffer.h"

namespace specd {

class KvMemoryReservation;

class CpuKvStorage final : public KvStorage {
 public:
  CpuKvStorage(int64_t layers, int64_t kv_heads, int64_t capacity, int64_t head_dim, KvType type);
  ~CpuKvStorage() override;

  // Bytes of a cache of `rows` rows once used: keys, values and the key tiles (rows rounded up
  // to blocks of 16); INT64_MAX when that overflows.
  static int64_t bytes_for(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t rows, KvType type);

  int64_t capacity() const override { return capacity_; }
  KvType type() const override { return type_; }
  int64_t bytes() const override;
  std::unique_ptr<KvStorage> grown(int64_t capacity, int64_t keep) const override;
  void move_rows(int64_t base, const std::vector<int64_t>& path) override;
  void invalidate_from(int64_t row) override;

  // E must be the element type of type().
  template <class E>
  E* keys(int64_t layer) { return array<E>(2 * layer); }
  template <class E>
  E* values(int64_t layer) { return array<E>(2 * layer + 1); }

  int64_t layers() const { return layers_; }
  int64_t kv_heads() const { return kv_heads_; }
  int64_t head_dim() const { return head_dim_; }

  template <class E>
  E* key_tiles(int64_t layer) {
    check_element<E>();
    return static_cast<E*>(key_tiles_bytes(layer));
  }
  int64_t key_tiles_rows() const { return tiles_rows_; }
  void set_key_tiles_rows(int64_t rows);

 private:
  // Elements of one array (a layer's keys or values).
  int64_t array_elements() const { return kv_heads_ * capacity_ * head_dim_; }
  const char* array_bytes(int64_t index) const { return rows_.as<char>() + index * array_elements() * kv_element_bytes(type_); }
  char* array_bytes(int64_t index) { return rows_.as<char>() + index * array_elements() * kv_element_bytes(type_); }
  template <class E>
  void check_element() const {
    if (cpu::KvElement<E>::type != type_) throw std::logic_error("CpuKvStorage: read as another element type");
  }
  template <class E>
  E* array(int64_t index) {
    check_element<E>();
    return reinterpret_cast<E*>(array_bytes(index));
  }
  void* key_tiles_bytes(int64_t layer);

  int64_t layers_, kv_heads_, capacity_, head_dim_;
  KvType type_;
  HostBuffer rows_;
  std::unique_ptr<KvMemoryReservation> memory_;
  HostBuffer tiles_;
  std::unique_ptr<KvMemoryReservation> tiles_memory_;
  int64_t tiles_rows_ = 0;
};

}  // namespace specd
