#pragma once
// Key/value rows for every layer. Rows [0, length) hold the committed prefix; a forward writes its
// new tokens at [length, length + n) and advances length; a speculative step then keeps one
// root-to-node path with commit_path and drops the other rows. The rows themselves live in a
// KvStorage laid out by the backend that runs the forward (host buffers for specd's CPU kernels,
// tensors for the ATen forward); its memory counts against the process's KV memory limit
// (model/kv_memory.h).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace specd {

// What a cache stores its keys and values as. They are rounded to it (to nearest, ties to even)
// when a forward writes them and widened back to float32 when attention reads them; attention's
// arithmetic is float32 at every precision. BF16 and F16 halve the cache's memory and the bytes
// attention reads per token; F16 keeps 3 more mantissa bits than BF16 but overflows past 65504.
enum class KvType { F32, BF16, F16 };

int kv_element_bytes(KvType type);
const char* kv_type_name(KvType type);  // "f32", "bf16", "f16"
// f32, bf16 or f16 (also float32, bfloat16, float16); otherwise InputError naming `option`.
KvType parse_kv_type(const std::string& option, const std::string& text);

// Bytes of `arrays` arrays per layer of [kv_heads, rows, head_dim] elements of `type` (keys and
// values: 2), INT64_MAX when that overflows (more than any memory limit).
int64_t kv_array_bytes(int64_t arrays, int64_t layers, int64_t kv_heads, int64_t rows, int64_t head_dim, KvType type);

// One allocation of a cache's rows, shared by copies of the KvCache that made it.
class KvStorage {
 public:
  virtual ~KvStorage() = default;
  virtual int64_t capacity() const = 0;
  virtual KvType type() const = 0;
  // Bytes the keys and values take (a backend's extra copies, such as key tiles, not counted).
  virtual int64_t bytes() const = 0;
  // A new storage of `capacity` rows holding rows [0, keep) of this one.
  virtual std::unique_ptr<KvStorage> grown(int64_t capacity, int64_t keep) const = 0;
  // Moves rows base + path[i] to base + i (path increasing, path[i] >= i: rows only move forward).
  virtual void move_rows(int64_t base, const std::vector<int64_t>& path) = 0;
  // Rows from `row` on no longer hold what was written there (dropped or moved).
  virtual void invalidate_from(int64_t row) {}
};

class KvCache {
 public:
  KvCache() = default;
  explicit KvCache(std::shared_ptr<KvStorage> storage) : storage_(std::move(storage)) {}

  int64_t length() const { return length_; }
  int64_t capacity() const { return storage_ ? storage_->capacity() : 0; }
  int64_t bytes() const { return storage_ ? storage_->bytes() : 0; }
  KvType type() const { return storage_ ? storage_->type() : KvType::F32; }

  // Grows the capacity to `rows` when it is less, keeping rows [0, length). The storage is new
  // afterwards: copies of this cache keep the old one.
  void reserve(int64_t rows);
  // Called by the model once all layers have written rows [length, length + n).
  void advance(int64_t n);
  // Drops rows from `new_length` on.
  void truncate(int64_t new_length);
  // Keeps rows base + path[0], base + path[1], ... (increasing offsets into the rows written after
  // `base`), moved to base, base + 1, ...; everything after them is dropped.
  void commit_path(int64_t base, const std::vector<int64_t>& path);

  // The rows, for the backend that made them (and tests that look inside).
  KvStorage& storage() { return *storage_; }
  const KvStorage& storage() const { return *storage_; }

 private:
  std::shared_ptr<KvStorage> storage_;
  int64_t length_ = 0;
};

}  // namespace specd
