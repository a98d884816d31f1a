#pragma once
// tokenizer.json "pre_tokenizer": cuts normalized text into the pieces the model tokenizes one
// by one (Split, ByteLevel, Metaspace and Sequences of them).
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace specd {

struct TextPiece {
  std::string text;
  // Whether the piece begins the whole input: Metaspace's prepend_scheme "first" looks at it.
  bool at_input_start = false;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces every piece by the non-empty pieces it splits into, keeping their order.
  void pre_tokenize(std::vector<TextPiece>& pieces) const;
  virtual void split(const TextPiece& piece, std::vector<TextPiece>& out) const = 0;
};

// nullptr for a JSON null; InputError("<where>: ...") for unsupported types.
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const nlohmann::json& config,
                                                 const std::string& where);

}  // namespace specd
