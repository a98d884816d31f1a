#include "tokenizer/metaspace.h"

#include <nlohmann/json.hpp>

#include "tokenizer/split_behavior.h"
#include "io/json_reader.h"
#include "util/error.h"
#include "util/utf8.h"

namespace specd {

MetaspaceOptions parse_metaspace_options(const nlohmann::json& config, const std::string& where) {
  MetaspaceOptions options;
  if (config.contains("replacement")) {
    options.replacement = config.at("replacement").get<std::string>();
    std::size_t end = 0;
    if (options.replacement.empty() || !is_valid_utf8(options.replacement) ||
        (next_code_point(options.replacement, end), end != options.replacement.size())) {
      input_error(where, "Metaspace replacement must be one character");
    }
  }
  if (config.contains("prepend_scheme")) {
    const std::string scheme = config.at("prepend_scheme").get<std::string>();
    if (scheme == "first") {
      options.prepend_scheme = PrependScheme::First;
    } else if (scheme == "always") {
      options.prepend_scheme = PrependScheme::Always;
    } else if (scheme == "never") {
      options.prepend_scheme = PrependScheme::Never;
    } else {
      input_error(where, "unknown Metaspace prepend_scheme " + single_quoted(scheme));
    }
  } else if (config.contains("add_prefix_space")) {
    options.prepend_scheme =
        config.at("add_prefix_space").get<bool>() ? PrependScheme::Always : PrependScheme::Never;
  }
  if (config.contains("split")) options.split = config.at("split").get<bool>();
  return options;
}

MetaspacePreTokenizer::MetaspacePreTokenizer(MetaspaceOptions options)
    : options_(std::move(options)),
      space_(Pattern::literal(" ")),
      marker_(Pattern::literal(options_.replacement)) {}

void MetaspacePreTokenizer::split(const TextPiece& piece, std::vector<TextPiece>& out) const {
  TextPiece marked{space_.replace_all(piece.text, options_.replacement),
                   piece.at_input_start};
  const bool starts_marked = marked.text.compare(0, options_.replacement.size(),
                                                 options_.replacement) == 0;
  const bool prepend =
      !starts_marked && (options_.prepend_scheme == PrependScheme::Always ||
                         (options_.prepend_scheme == PrependScheme::First && piece.at_input_start));
  if (prepend) marked.text.insert(0, options_.replacement);
  if (options_.split) {
    split_at_matches(marked, marker_.find_all(marked.text), SplitBehavior::MergedWithNext, false,
                     out);
  } else if (!marked.text.empty()) {
    out.push_back(std::move(marked));
  }
}

}  // namespace specd
