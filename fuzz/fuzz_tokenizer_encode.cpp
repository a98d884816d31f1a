// Arbitrary bytes encoded with the demo tokenizer (data/tokenizer/tokenizer.json, byte-level BPE
// without a normalizer): invalid UTF-8 is an input error; valid text must decode back to itself.
#include <cstdlib>

#include "fuzz_support.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specd;
  static const Tokenizer tokenizer = Tokenizer::from_file(SPECD_SOURCE_DIR "/data/tokenizer/tokenizer.json");
  const std::string_view text = fuzz::as_text(data, size);
  return fuzz::run_input([&] {
    const std::vector<int32_t> ids = tokenizer.encode(text, /*add_special_tokens=*/false);
    if (tokenizer.decode(ids) != text) std::abort();
    (void)tokenizer.encode(text, true);
  });
}
