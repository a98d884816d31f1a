#include "model/kv_cache.h"

#include "model/kv_memory.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace specd {

namespace {

// Bytes of `rows` rows of `tensors` tensors per layer, each [kv_heads, rows, head_dim] (INT64_MAX
// when that overflows: more than any limit).
int64_t tensor_bytes(int64_t tensors, int64_t layers, int64_t kv_heads, int64_t rows, int64_t head_dim, int64_t element) {
  int64_t bytes = element;
  for (int64_t factor : {tensors, layers, kv_heads, rows, head_dim})
    if (__builtin_mul_overflow(bytes, factor, &bytes)) return INT64_MAX;
  return bytes;
}

std::string rows_text(int64_t rows) { return "the KV cache of " + std::to_string(rows) + " rows"; }

}  // namespace

KvCache::KvCache(int64_t layers, int64_t kv_heads, int64_t capacity, int64_t head_dim,
                 const at::TensorOptions& options)
    : layers_(layers), kv_heads_(kv_heads), head_dim_(head_dim), options_(options) {
  allocate(capacity);
}

void KvCache::allocate(int64_t capacity) {
  // Reserved before allocating: a limit passed is an error, not an attempt to allocate.
  auto memory = std::make_shared<const KvMemoryReservation>(
      tensor_bytes(2, layers_, kv_heads_, capacity, head_dim_, options_.dtype().itemsize()), rows_text(capacity));
  std::vector<at::Tensor> keys, values;
  for (int64_t l = 0; l < layers_; ++l) {
    keys.push_back(at::zeros({kv_heads_, capacity, head_dim_}, options_));
    values.push_back(at::zeros({kv_heads_, capacity, head_dim_}, options_));
    if (length_ > 0) {
      keys.back().narrow(1, 0, length_).copy_(keys_[l].narrow(1, 0, length_));
      values.back().narrow(1, 0, length_).copy_(values_[l].narrow(1, 0, length_));
    }
  }
  keys_ = std::move(keys);
  values_ = std::move(values);
  memory_ = std::move(memory);
  capacity_ = capacity;
  tiles_.reset();  // laid out by capacity: rebuilt on first use
}

int64_t KvCache::bytes() const { return tensor_bytes(2, layers_, kv_heads_, capacity_, head_dim_, options_.dtype().itemsize()); }

void KvCache::reserve(int64_t rows) {
  if (rows > capacity_) allocate(rows);
}

void KvCache::advance(int64_t n) {
  if (length_ + n > capacity_) throw std::logic_error("KvCache::advance past capacity");
  length_ += n;
}

void KvCache::truncate(int64_t new_length) {
  if (new_length < 0 || new_length > length_) throw std::logic_error("KvCache::truncate out of range");
  length_ = new_length;
  if (tiles_) tiles_->rows = std::min(tiles_->rows, new_length);
}

float* KvCache::key_tiles(int64_t layer) {
  if (!tiles_) tiles_ = std::make_shared<KeyTiles>();
  if (tiles_->layers.empty()) {
    const int64_t blocks = (capacity_ + 15) / 16;
    const int64_t bytes = tensor_bytes(1, layers_, kv_heads_, blocks * 16, head_dim_, options_.dtype().itemsize());
    tiles_->memory = std::make_shared<const KvMemoryReservation>(bytes, "the key tiles of " + rows_text(capacity_));
    for (const at::Tensor& k : keys_) tiles_->layers.push_back(at::zeros({k.size(0), blocks, k.size(2), 16}, k.options()));
  }
  return tiles_->layers.at(layer).data_ptr<float>();
}

void KvCache::set_key_tiles_rows(int64_t rows) {
  if (!tiles_ || rows < 0 || rows > capacity_) throw std::logic_error("KvCache::set_key_tiles_rows out of range");
  tiles_->rows = rows;
}

void KvCache::commit_path(int64_t base, const std::vector<int64_t>& path) {
  if (base < 0 || base > length_) throw std::logic_error("KvCache::commit_path: bad base");
  int64_t written = length_ - base;
  int64_t previous = -1;
  int64_t first_moved = static_cast<int64_t>(path.size());  // rows before it stay where they are
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] <= previous || path[i] >= written)
      throw std::logic_error("KvCache::commit_path: offsets must increase and lie in the written rows");
    previous = path[i];
    if (path[i] != static_cast<int64_t>(i)) first_moved = std::min(first_moved, static_cast<int64_t>(i));
  }
  const bool identity = first_moved == static_cast<int64_t>(path.size());
  if (!identity) {
    // Rows move only toward the front (path[i] >= i), so one gather per layer is safe.
    std::vector<int64_t> rows(path.begin(), path.end());
    for (auto& r : rows) r += base;
    auto index = at::tensor(rows, at::TensorOptions().dtype(at::kLong)).to(keys_[0].device());
    int64_t n = static_cast<int64_t>(path.size());
    for (size_t l = 0; l < keys_.size(); ++l) {
      keys_[l].narrow(1, base, n).copy_(keys_[l].index_select(1, index));
      values_[l].narrow(1, base, n).copy_(values_[l].index_select(1, index));
    }
  }
  length_ = base + static_cast<int64_t>(path.size());
  if (tiles_) tiles_->rows = std::min(tiles_->rows, base + first_moved);  // moved rows are copied again
}

}  // namespace specd
