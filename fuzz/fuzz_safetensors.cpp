// model.safetensors: the 8-byte length, the JSON header and every tensor's dtype, shape and
// offsets against the data buffer. Every tensor that loads is read at both ends (a view outside
// the mapping crashes).
#include <cstdlib>

#include "fuzz_support.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specd;
  static fuzz::ScratchFile scratch("model.safetensors");
  const std::string& path = scratch.write(data, size);
  return fuzz::run_input([&] {
    const SafetensorsFile file = SafetensorsFile::open(path);
    volatile unsigned char sink = 0;
    for (const TensorView& tensor : file.tensors()) {
      if (file.find(tensor.name) != &tensor) std::abort();
      if (tensor.nbytes == 0) continue;
      const auto* bytes = static_cast<const unsigned char*>(tensor.data);
      sink = sink + bytes[0] + bytes[tensor.nbytes - 1];
    }
  });
}
