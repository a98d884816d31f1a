#pragma once
// Where a model runs. Parsed from --device; nothing else in the runtime names a device.
#include <cstdint>
#include <string>

namespace c10 { struct Device; }

namespace specd {

struct DeviceSpec {
  std::string name = "cpu";  // "cpu", "cuda" or "cuda:N"
  int threads = 0;           // CPU math threads; 0 = one per core
  // On the CPU, run the device-generic ATen forward instead of specd's own kernels
  // (for comparisons; the kernels are faster).
  bool aten_on_cpu = false;
  // The CPU kernels round activations to BF16 for BF16 weights where the CPU has AVX512-BF16
  // (cpu/matmul_bf16_dot.h); true keeps them float32 (slower, and equal to the ATen forward).
  bool fp32_activations = false;
  // Bytes every KV cache of the process may take together (model/kv_memory.h); 0: the default.
  int64_t max_kv_bytes = 0;
};

// Throws InputError when the device is unknown or this libtorch build cannot use it. Applies the
// process-wide settings: CPU threads and the KV memory limit.
c10::Device resolve_device(const DeviceSpec& spec);

}  // namespace specd
