#include "tokenizer/pattern.h"

#include <nlohmann/json.hpp>

#include "tokenizer/regex_dialect.h"
#include "io/json_reader.h"
#include "util/error.h"

namespace specd {

Pattern Pattern::from_json(const nlohmann::json& config, const std::string& where) {
  if (config.is_object() && config.contains("String")) {
    return literal(config.at("String").get<std::string>());
  }
  if (config.is_object() && config.contains("Regex")) {
    Pattern pattern;
    pattern.regex_ = std::make_shared<const Regex>(
        oniguruma_to_pcre2(config.at("Regex").get<std::string>()), where);
    return pattern;
  }
  input_error(where, "pattern must be {\"String\": ...} or {\"Regex\": ...}, got " + json_excerpt(config));
}

Pattern Pattern::literal(std::string text) {
  Pattern pattern;
  pattern.literal_ = std::move(text);
  return pattern;
}

std::vector<ByteRange> Pattern::find_all(std::string_view text) const {
  if (regex_) return regex_->find_all(text);
  std::vector<ByteRange> matches;
  if (literal_.empty()) return matches;
  for (std::size_t at = text.find(literal_); at != std::string_view::npos;
       at = text.find(literal_, at + literal_.size())) {
    matches.emplace_back(at, at + literal_.size());
  }
  return matches;
}

std::string Pattern::replace_all(std::string_view text, std::string_view replacement) const {
  std::string out;
  out.reserve(text.size());
  std::size_t copied = 0;
  for (const auto& [begin, end] : find_all(text)) {
    out.append(text.substr(copied, begin - copied));
    out.append(replacement);
    copied = end;
  }
  out.append(text.substr(copied));
  return out;
}

}  // namespace specd
