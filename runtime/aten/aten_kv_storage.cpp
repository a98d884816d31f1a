#include "aten/aten_kv_storage.h"

#include <ATen/ATen.h>

#include <string>

#include "model/kv_memory.h"

namespace specd {

at::ScalarType kv_scalar_type(KvType type) {
  switch (type) {
    case KvType::BF16: return at::kBFloat16;
    case KvType::F16: return at::kHalf;
    case KvType::F32: break;
  }
  return at::kFloat;
}

AtenKvStorage::AtenKvStorage(int64_t layers, int64_t kv_heads, int64_t capacity, int64_t head_dim, KvType type,
                             c10::Device device)
    : layers_(layers), kv_heads_(kv_heads), capacity_(capacity), head_dim_(head_dim), type_(type), device_(device) {
  // Reserved before allocating: a limit passed is an error, not an attempt to allocate.
  memory_ = std::make_unique<KvMemoryReservation>(bytes(), "the KV cache of " + std::to_string(capacity) + " rows");
  const auto options = at::TensorOptions().dtype(kv_scalar_type(type)).device(device);
  for (int64_t l = 0; l < layers; ++l) {
    keys_.push_back(at::zeros({kv_heads, capacity, head_dim}, options));
    values_.push_back(at::zeros({kv_heads, capacity, head_dim}, options));
  }
}

AtenKvStorage::~AtenKvStorage() = default;

int64_t AtenKvStorage::bytes() const { return kv_array_bytes(2, layers_, kv_heads_, capacity_, head_dim_, type_); }

std::unique_ptr<KvStorage> AtenKvStorage::grown(int64_t capacity, int64_t keep) const {
  auto bigger = std::make_unique<AtenKvStorage>(layers_, kv_heads_, capacity, head_dim_, type_, device_);
  if (keep > 0)
    for (int64_t l = 0; l < layers_; ++l) {
      bigger->keys_[l].narrow(1, 0, keep).copy_(keys_[l].narrow(1, 0, keep));
      bigger->values_[l].narrow(1, 0, keep).copy_(values_[l].narrow(1, 0, keep));
    }
  return bigger;
}

void AtenKvStorage::move_rows(int64_t base, const std::vector<int64_t>& path) {
  // Rows move only toward the front (path[i] >= i), so one gather per layer is safe.
  std::vector<int64_t> rows(path.begin(), path.end());
  for (auto& r : rows) r += base;
  auto index = at::tensor(rows, at::TensorOptions().dtype(at::kLong)).to(device_);
  const int64_t n = static_cast<int64_t>(path.size());
  for (int64_t l = 0; l < layers_; ++l) {
    keys_[l].narrow(1, base, n).copy_(keys_[l].index_select(1, index));
    values_[l].narrow(1, base, n).copy_(values_[l].index_select(1, index));
  }
}

}  // namespace specd
