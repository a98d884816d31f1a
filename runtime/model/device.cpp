#include "model/device.h"

#include "model/kv_memory.h"
#include "util/error.h"

namespace specd {

bool needs_aten(const DeviceSpec& spec) { return spec.aten_on_cpu || spec.name != "cpu"; }

int check_device(const DeviceSpec& spec) {
  int index = -1;
  if (spec.name != "cpu") {
    if (spec.name.rfind("cuda", 0) != 0) input_error("device", "unknown device '" + spec.name + "' (use cpu, cuda or cuda:N)");
    if (spec.name.size() > 4) {
      if (spec.name[4] != ':') input_error("device", "unknown device '" + spec.name + "' (use cpu, cuda or cuda:N)");
      try {
        index = std::stoi(spec.name.substr(5));
      } catch (const std::exception&) {
        input_error("device", "bad CUDA device index in '" + spec.name + "'");
      }
    }
  }
  set_kv_memory_limit(spec.max_kv_bytes);
  return index;
}

}  // namespace specd
