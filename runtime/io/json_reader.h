#pragma once
// Typed access to the fields of a JSON object read from a user's file, with one-line InputErrors
// "WHERE: missing field 'x'" / "WHERE: field 'x' must be an integer" on anything unexpected.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace specd {

// Reads and parses a JSON file; unreadable or invalid files throw InputError naming the path.
nlohmann::json read_json_file(const std::string& path);

// Text quoted for an error message, control characters replaced so the message stays one line.
std::string single_quoted(const std::string& text);

class JsonObjectReader {
 public:
  // `prefix` names the enclosing field in messages, e.g. "rope_scaling." for its members.
  JsonObjectReader(const nlohmann::json& object, std::string where, std::string prefix = "");

  bool has(const std::string& key) const;  // present and not null
  const nlohmann::json& at(const std::string& key) const;  // required, any type

  int64_t integer(const std::string& key) const;
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
