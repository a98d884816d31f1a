#pragma once
// Turns a growing list of generated ids into text that can be printed piece by piece. It decodes
// prompt + continuation and prints what lies past the prompt's text, so tokenizers that strip a
// leading space or join byte-fallback tokens print exactly what a one-shot decode gives; bytes of
// an unfinished UTF-8 character are held back until the character is complete.
#include <cstdint>
#include <string>
#include <vector>

namespace specd {

class Tokenizer;

class TextStream {
 public:
  TextStream(const Tokenizer& tokenizer, std::vector<int32_t> prompt);
  // Returns the new printable text after adding `token` (possibly empty).
  std::string push(int32_t token);
  // Whatever is still held back, at the end of generation.
  std::string finish();

 private:
  std::string text_after_prompt() const;

  const Tokenizer& tokenizer_;
  std::vector<int32_t> ids_;
  std::string prompt_text_;
  size_t printed_ = 0;
};

}  // namespace specd
