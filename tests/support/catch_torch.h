#pragma once
// Debian's libtorch is built with glog, whose CHECK macro c10 pulls in: included after Catch, it
// silently replaces Catch's CHECK (an abort, not a counted assertion). Including c10 first and
// Catch last keeps Catch's. Every test that touches libtorch includes this, not catch.hpp.
#include <ATen/ATen.h>
#include <catch2/catch.hpp>

#include "aten/aten_kv_storage.h"
#include "model/cpu/cpu_kv_storage.h"
#include "model/llama_model.h"

namespace specd::test {

// A forward's host matrix as a tensor (a copy), for ATen's comparisons.
inline at::Tensor tensor(const FloatRows& rows) {
  return at::from_blob(const_cast<float*>(rows.data()), {rows.rows, rows.cols}, at::kFloat).clone();
}

// Layer `layer`'s keys or values of either backend's cache as a [kv_heads, capacity, head_dim]
// tensor over the cache's own memory (writes go to the cache).
inline at::Tensor kv_rows(KvCache& cache, int64_t layer, bool values) {
  if (auto* aten = dynamic_cast<AtenKvStorage*>(&cache.storage())) return values ? aten->values(layer) : aten->keys(layer);
  auto& cpu = dynamic_cast<CpuKvStorage&>(cache.storage());
  return cpu::with_kv_element(cpu.type(), [&](auto element) {
    using E = decltype(element);
    E* rows = values ? cpu.values<E>(layer) : cpu.keys<E>(layer);
    return at::from_blob(rows, {cpu.kv_heads(), cpu.capacity(), cpu.head_dim()}, kv_scalar_type(cpu.type()));
  });
}
inline at::Tensor keys(KvCache& cache, int64_t layer) { return kv_rows(cache, layer, false); }
inline at::Tensor values(KvCache& cache, int64_t layer) { return kv_rows(cache, layer, true); }

}  // namespace specd::test
