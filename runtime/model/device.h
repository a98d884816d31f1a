#pragma once
// Where a model runs. Parsed from --device; nothing else in the runtime names a device.
#include <cstdint>
#include <string>

#include "model/kv_cache.h"

namespace specd {

struct DeviceSpec {
  std::string name = "cpu";  // "cpu", "cuda" or "cuda:N"
  int threads = 0;           // CPU math threads; 0 = one per core
  // On the CPU, run the device-generic ATen forward instead of specd's own kernels
  // (for comparisons; the kernels are faster). Needs a binary that links libtorch.
  bool aten_on_cpu = false;
  // The CPU kernels round activations to BF16 for BF16 weights where the CPU has AVX512-BF16
  // (cpu/matmul_bf16_dot.h); true keeps them float32 (slower, and equal to the ATen forward).
  bool fp32_activations = false;
  // Bytes every KV cache of the process may take together (model/kv_memory.h); 0: the default.
  int64_t max_kv_bytes = 0;
  // What the model's KV caches store keys and values as (--kv-dtype).
  KvType kv_type = KvType::F32;
};

// True when the spec needs libtorch: a CUDA device or --aten.
bool needs_aten(const DeviceSpec& spec);
// Throws InputError when the device name is malformed; returns the CUDA index (-1: cpu or the
// default CUDA device). Applies the process-wide KV memory limit.
int check_device(const DeviceSpec& spec);

}  // namespace specd
