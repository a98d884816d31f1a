#include "model/device.h"

#include <ATen/Context.h>
#include <c10/core/Device.h>

#include "model/cpu_threads.h"
#include "model/kv_memory.h"
#include "util/error.h"

namespace specd {

c10::Device resolve_device(const DeviceSpec& spec) {
  c10::DeviceType type;
  int index = -1;
  if (spec.name == "cpu") {
    type = c10::DeviceType::CPU;
  } else if (spec.name.rfind("cuda", 0) == 0) {
    type = c10::DeviceType::CUDA;
    if (spec.name.size() > 4) {
      if (spec.name[4] != ':') input_error("device", "unknown device '" + spec.name + "' (use cpu, cuda or cuda:N)");
      try {
        index = std::stoi(spec.name.substr(5));
      } catch (const std::exception&) {
        input_error("device", "bad CUDA device index in '" + spec.name + "'");
      }
    }
    if (!at::hasCUDA()) input_error("device", "this libtorch build has no CUDA (Debian's is CPU-only); use the cpu device");
  } else {
    input_error("device", "unknown device '" + spec.name + "' (use cpu, cuda or cuda:N)");
  }
  if (type == c10::DeviceType::CPU) configure_cpu_threads(spec.threads);
  set_kv_memory_limit(spec.max_kv_bytes);
  return c10::Device(type, static_cast<c10::DeviceIndex>(index));
}

}  // namespace specd
