// config.json: parsing, the limits on every size, and what the loader derives from the sizes
// before it reads a weight (expected tensor shapes, RoPE frequencies). A config that loads must
// write back (to_json) into one that loads equal.
#include <cstdlib>

#include "fuzz_support.h"
#include "io/expected_tensors.h"
#include "io/json_reader.h"
#include "io/model_config.h"
#include "io/rope_frequencies.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specd;
  return fuzz::run_input([&] {
    const ModelConfig config = ModelConfig::from_json(parse_json(fuzz::as_text(data, size), "config.json"), "config.json");
    int64_t elements = 0;
    for (const ExpectedTensor& tensor : expected_tensors(config)) elements += element_count(tensor.shape);
    if (elements <= 0) std::abort();
    if (rope_inverse_frequencies(config).size() != static_cast<size_t>(config.head_dim / 2)) std::abort();
    if (ModelConfig::from_json(config.to_json(), "config.json written back") != config) std::abort();
  });
}
