#pragma once
// SentencePiece's whitespace convention: spaces become a visible marker ("▁"), optionally
// prepended to the text, and words are cut before each marker.
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "tokenizer/pattern.h"
#include "tokenizer/pre_tokenizer.h"

namespace specd {

enum class PrependScheme { First, Always, Never };

struct MetaspaceOptions {
  std::string replacement = "\xE2\x96\x81";  // U+2581
  PrependScheme prepend_scheme = PrependScheme::Always;
  bool split = true;
};

// Reads replacement, prepend_scheme (or the older add_prefix_space) and split.
MetaspaceOptions parse_metaspace_options(const nlohmann::json& config, const std::string& where);

class MetaspacePreTokenizer : public PreTokenizer {
 public:
  explicit MetaspacePreTokenizer(MetaspaceOptions options);
  void split(const TextPiece& piece, std::vector<TextPiece>& out) const override;

 private:
  MetaspaceOptions options_;
  Pattern space_;
  Pattern marker_;
};

}  // namespace specd
