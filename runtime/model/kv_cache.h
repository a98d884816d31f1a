#pragma once
// Preallocated key/value rows for every layer. Rows [0, length) hold the committed prefix;
// a forward writes its new tokens at [length, length + n) and advances length; a speculative
// step then keeps one root-to-node path with commit_path and drops the other rows. Its memory
// (and the key tiles') counts against the process's KV memory limit (model/kv_memory.h).
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace specd {

class KvMemoryReservation;

class KvCache {
 public:
  KvCache() = default;
  KvCache(int64_t layers, int64_t kv_heads, int64_t capacity, int64_t head_dim, const at::TensorOptions& options);

  int64_t length() const { return length_; }
  int64_t capacity() const { return capacity_; }
  // Bytes the keys and values take (the key tiles not counted).
  int64_t bytes() const;

  // Grows the capacity to `rows` when it is less, keeping rows [0, length). The tensors are new
  // afterwards: copies of this cache keep the old ones.
  void reserve(int64_t rows);

  // Views of layer `layer`'s keys or values, shape [kv_heads, capacity, head_dim].
  const at::Tensor& keys(int64_t layer) const { return keys_[layer]; }
  const at::Tensor& values(int64_t layer) const { return values_[layer]; }

  // Called by the model once all layers have written rows [length, length + n).
  void advance(int64_t n);
  // Drops rows from `new_length` on.
  void truncate(int64_t new_length);
  // Keeps rows base + path[0], base + path[1], ... (increasing offsets into the rows written after
  // `base`), moved to base, base + 1, ...; everything after them is dropped.
  void commit_path(int64_t base, const std::vector<int64_t>& path);

  // A second copy of the keys for the CPU attention kernel (cpu/attention.h): layer `layer`'s
  // keys in blocks of 16 rows, each block stored dimension-major ([kv_heads, blocks, head_dim,
  // 16] floats), so that one vector load holds one dimension of 16 keys. Allocated on first use.
  // Rows [0, key_tiles_rows()) agree with keys(); truncate and commit_path lower that mark, and
  // the forward that writes rows brings the copy up to date.
  float* key_tiles(int64_t layer);
  int64_t key_tiles_rows() const { return tiles_ ? tiles_->rows : 0; }
  void set_key_tiles_rows(int64_t rows);

 private:
  struct KeyTiles {
    std::vector<at::Tensor> layers;
    int64_t rows = 0;
    std::shared_ptr<const KvMemoryReservation> memory;
  };
  void allocate(int64_t capacity);
  std::shared_ptr<KeyTiles> tiles_;  // shared by copies, as the key tensors are
  std::vector<at::Tensor> keys_, values_;
  std::shared_ptr<const KvMemoryReservation> memory_;  // shared by copies, as the tensors are
  int64_t layers_ = 0, kv_heads_ = 0, head_dim_ = 0;
  at::TensorOptions options_;
  int64_t capacity_ = 0;
  int64_t length_ = 0;
};

}  // namespace specd
