// The body of a request to specd serve's /v1/completions and /v1/chat/completions, as any client
// may send it: every byte string is parsed or refused with a RequestError of status 400 (the
// server's OpenAI error object naming the field), read as both kinds of request.
#include "fuzz_support.h"
#include "serve/openai_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specd;
  const std::string body(fuzz::as_text(data, size));
  for (const bool chat : {false, true}) {
    try {
      (void)serve::parse_completion_request(body, chat);
    } catch (const serve::RequestError& e) {
      if (e.status != 400) std::abort();
    }
  }
  return 0;
}
