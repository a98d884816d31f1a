// tokenizer.json, and text encoded with the tokenizer it describes. The input is the file, then a
// NUL byte, then the text (a fixed sample when there is no NUL): both halves are fuzzed together,
// so a strange vocabulary, regex or normalizer meets strange text.
#include <cstring>

#include "fuzz_support.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specd;
  static fuzz::ScratchFile scratch("tokenizer.json");
  const auto* nul = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  const size_t json_size = nul ? static_cast<size_t>(nul - data) : size;
  const std::string text = nul ? std::string(fuzz::as_text(nul + 1, size - json_size - 1))
                               : std::string("Hello wörld, 12 tabs\t\tand  spaces <|endoftext|> ünïcödé 日本語 🎉\n");
  const std::string& path = scratch.write(data, json_size);
  return fuzz::run_input([&] {
    const Tokenizer tokenizer = Tokenizer::from_file(path);
    for (bool special : {true, false}) {
      const std::vector<int32_t> ids = tokenizer.encode(text, special);
      (void)tokenizer.decode(ids, special);
      for (int32_t id : ids) (void)tokenizer.is_special(id);
    }
    (void)tokenizer.vocab_size();
    (void)tokenizer.token_to_id(text);
  });
}
