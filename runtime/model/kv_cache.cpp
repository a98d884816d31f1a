#include "model/kv_cache.h"

#include <algorithm>
#include <stdexcept>

#include "util/error.h"

namespace specd {

int kv_element_bytes(KvType type) { return type == KvType::F32 ? 4 : 2; }

const char* kv_type_name(KvType type) {
  switch (type) {
    case KvType::F32: return "f32";
    case KvType::BF16: return "bf16";
    case KvType::F16: return "f16";
  }
  throw std::logic_error("kv_type_name: unknown KvType");
}

KvType parse_kv_type(const std::string& option, const std::string& text) {
  if (text == "f32" || text == "float32") return KvType::F32;
  if (text == "bf16" || text == "bfloat16") return KvType::BF16;
  if (text == "f16" || text == "float16") return KvType::F16;
  input_error(option, "unknown KV cache type '" + text + "' (use f32, bf16 or f16)");
}

int64_t kv_array_bytes(int64_t arrays, int64_t layers, int64_t kv_heads, int64_t rows, int64_t head_dim, KvType type) {
  int64_t bytes = kv_element_bytes(type);
  for (int64_t factor : {arrays, layers, kv_heads, rows, head_dim})
    if (__builtin_mul_overflow(bytes, factor, &bytes)) return INT64_MAX;
  return bytes;
}

void KvCache::reserve(int64_t rows) {
  if (rows > capacity()) storage_ = storage_->grown(rows, length_);
}

void KvCache::advance(int64_t n) {
  if (length_ + n > capacity()) throw std::logic_error("KvCache::advance past capacity");
  length_ += n;
}

void KvCache::truncate(int64_t new_length) {
  if (new_length < 0 || new_length > length_) throw std::logic_error("KvCache::truncate out of range");
  length_ = new_length;
  storage_->invalidate_from(new_length);
}

void KvCache::commit_path(int64_t base, const std::vector<int64_t>& path) {
  if (base < 0 || base > length_) throw std::logic_error("KvCache::commit_path: bad base");
  const int64_t written = length_ - base;
  int64_t previous = -1;
  int64_t first_moved = static_cast<int64_t>(path.size());  // rows before it stay where they are
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] <= previous || path[i] >= written)
      throw std::logic_error("KvCache::commit_path: offsets must increase and lie in the written rows");
    previous = path[i];
    if (path[i] != static_cast<int64_t>(i)) first_moved = std::min(first_moved, static_cast<int64_t>(i));
  }
  if (first_moved < static_cast<int64_t>(path.size())) storage_->move_rows(base, path);
  length_ = base + static_cast<int64_t>(path.size());
  storage_->invalidate_from(std::min(length_, base + first_moved));
}

}  // namespace specd
