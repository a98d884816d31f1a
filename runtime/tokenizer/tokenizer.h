#pragma once
// A Hugging Face tokenizer.json tokenizer (BPE models: byte-level as in GPT-2 / Llama-3 / Qwen2,
// SentencePiece-style with byte fallback as in Llama-2 / Mistral), exact to the id against
// Hugging Face's own library.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace specd {

class AddedVocabulary;
class BpeModel;
class Decoder;
class Normalizer;
class PostProcessor;
class PreTokenizer;

class Tokenizer {
 public:
  // Throws InputError("<path>: <problem>") for a missing, broken or unsupported file.
  static Tokenizer from_file(const std::string& path);

  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  // `text` must be valid UTF-8 (InputError otherwise). add_special_tokens applies the
  // post_processor, like HF's encode(text, add_special_tokens).
  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = true) const;
  // Like HF's decode: unknown ids are skipped, invalid byte sequences become U+FFFD.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const;

  int32_t vocab_size() const;  // highest id + 1, added tokens included
  std::optional<int32_t> token_to_id(std::string_view token) const;
  // Throws std::out_of_range for an id that names no token.
  std::string id_to_token(int32_t id) const;
  bool is_special(int32_t id) const;

 private:
  Tokenizer();
  void encode_text(std::string_view text, bool at_input_start, std::vector<int32_t>& ids) const;
  const std::string* token_of(int32_t id) const;

  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<BpeModel> model_;
  std::unique_ptr<AddedVocabulary> added_;
  std::unique_ptr<PostProcessor> post_processor_;
  std::unique_ptr<Decoder> decoder_;
};

}  // namespace specd
