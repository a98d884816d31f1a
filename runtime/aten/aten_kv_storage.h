#pragma once
// KV rows as ATen tensors on the model's device, for the ATen forward: per layer, keys and values
// [kv_heads, capacity, head_dim] of the cache's KvType (float32, bfloat16 or float16; the forward
// widens them to float32 for its products).
#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "model/kv_cache.h"

namespace specd {

class KvMemoryReservation;

// The tensor element type that stores a KvType.
at::ScalarType kv_scalar_type(KvType type);

class AtenKvStorage final : public KvStorage {
 public:
  AtenKvStorage(int64_t layers, int64_t kv_heads, int64_t capacity, int64_t head_dim, KvType type, c10::Device device);
  ~AtenKvStorage() override;

  int64_t capacity() const override { return capacity_; }
  KvType type() const override { return type_; }
  int64_t bytes() const override;
  std::unique_ptr<KvStorage> grown(int64_t capacity, int64_t keep) const override;
  void move_rows(int64_t base, const std::vector<int64_t>& path) override;

  const at::Tensor& keys(int64_t layer) const { return keys_[layer]; }
  const at::Tensor& values(int64_t layer) const { return values_[layer]; }

 private:
  int64_t layers_, kv_heads_, capacity_, head_dim_;
  KvType type_;
  c10::Device device_;
  std::vector<at::Tensor> keys_, values_;
  std::unique_ptr<KvMemoryReservation> memory_;
};

}  // namespace specd
