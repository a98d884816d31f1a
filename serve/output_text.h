#pragma once
// A request's generated text as the client sees it: tokens decoded as `specd generate` prints them
// (decode/text_stream.h), cut before the first stop string. Text that might be the start of a stop
// string is held back until it is known not to be, so a stream never sends what the final answer
// does not contain.
#include <cstdint>
#include <string>
#include <vector>

#include "decode/text_stream.h"

namespace specd::serve {

class OutputText {
 public:
  OutputText(const Tokenizer& tokenizer, std::vector<int32_t> prompt, std::vector<std::string> stop);
  // The text that became final with `token` (possibly empty). Nothing after a stop string.
  std::string push(int32_t token);
  // True once a stop string has appeared: the request ends.
  bool stopped() const { return stopped_; }
  // At the end of generation: what was held back, up to a stop string.
  std::string finish();
  // Everything released so far.
  const std::string& text() const { return released_; }

 private:
  std::string release(bool at_end);

  TextStream stream_;
  std::vector<std::string> stop_;
  std::string pending_;   // decoded, not yet released
  std::string released_;
  bool stopped_ = false;
};

}  // namespace specd::serve
