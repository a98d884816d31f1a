#pragma once
// Typed access to the fields of a JSON object read from a user's file, with one-line InputErrors
// "WHERE: missing field 'x'" / "WHERE: field 'x' must be an integer" on anything unexpected.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace specd {

// Every JSON input (files, lines of a workload, a safetensors header, JSON kept in SQLite columns)
// is parsed here: a syntax error, a number out of range (1e999) or nesting deeper than
// kMaxJsonDepth throws InputError "WHERE: invalid JSON at byte N: reason", one line, and an
// object naming one key twice "WHERE: invalid JSON: the key 'K' appears twice in one object".
constexpr int kMaxJsonDepth = 256;
nlohmann::json parse_json(std::string_view text, const std::string& where);
// The same, keeping each object's keys in the order the text has them.
nlohmann::ordered_json parse_ordered_json(std::string_view text, const std::string& where);

// A JSON list of token ids (integers 0..INT32_MAX), as SQLite columns keep them; InputError
// "WHERE: must be a list of token ids" otherwise.
std::vector<int32_t> parse_token_list(std::string_view text, const std::string& where);

// Reads and parses a JSON file; unreadable or invalid files throw InputError naming the path.
nlohmann::json read_json_file(const std::string& path);

// Text quoted for an error message: control characters replaced so the message stays one line,
// and cut after kMaxQuotedBytes (with the full length) so a huge value is never echoed whole.
constexpr size_t kMaxQuotedBytes = 64;
std::string single_quoted(std::string_view text);
// A JSON value for an error message: compact, invalid UTF-8 replaced, cut as single_quoted.
std::string json_excerpt(const nlohmann::json& value);

class JsonObjectReader {
 public:
  // `prefix` names the enclosing field in messages, e.g. "rope_scaling." for its members.
  JsonObjectReader(const nlohmann::json& object, std::string where, std::string prefix = "");

  bool has(const std::string& key) const;  // present and not null
  const nlohmann::json& at(const std::string& key) const;  // required, any type

  int64_t integer(const std::string& key) const;
  // An integer in [min, max]; "field 'KEY' must be between MIN and MAX" otherwise.
  int64_t integer_in(const std::string& key, int64_t min, int64_t max) const;
  std::optional<int64_t> optional_integer(const std::string& key) const;
  double number(const std::string& key) const;
  std::optional<double> optional_number(const std::string& key) const;
  bool boolean(const std::string& key, bool fallback) const;
  std::string string(const std::string& key) const;
  std::optional<std::string> optional_string(const std::string& key) const;

  // InputError "WHERE: field 'KEY' PROBLEM".
  [[noreturn]] void fail(const std::string& key, const std::string& problem) const;
  const std::string& where() const { return where_; }

 private:
  const nlohmann::json& object_;
  std::string where_;
  std::string prefix_;
};

}  // namespace specd
