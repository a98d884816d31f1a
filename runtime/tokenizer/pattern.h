#pragma once
// The "pattern" of tokenizer.json components: {"String": literal} or {"Regex": pcre}.
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/regex.h"

namespace specd {

class Pattern {
 public:
  static Pattern from_json(const nlohmann::json& config, const std::string& where);
  static Pattern literal(std::string text);

  std::vector<ByteRange> find_all(std::string_view text) const;
  std::string replace_all(std::string_view text, std::string_view replacement) const;

 private:
  std::string literal_;
  std::shared_ptr<const Regex> regex_;  // set for regex patterns only
};

}  // namespace specd
