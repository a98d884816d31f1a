#include "model/kv_cache.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace specd {

KvCache::KvCache(int64_t layers, int64_t kv_heads, int64_t capacity, int64_t head_dim,
                 const at::TensorOptions& options)
    : capacity_(capacity) {
  for (int64_t l = 0; l < layers; ++l) {
    keys_.push_back(at::zeros({kv_heads, capacity, head_dim}, options));
    values_.push_back(at::zeros({kv_heads, capacity, head_dim}, options));
  }
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
  if (tiles_->layers.empty())
    for (const at::Tensor& k : keys_) {
      const int64_t blocks = (capacity_ + 15) / 16;
      tiles_->layers.push_back(at::zeros({k.size(0), blocks, k.size(2), 16}, k.options()));
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
