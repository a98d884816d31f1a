#include "io/json_reader.h"

#include <limits>

#include "io/read_file.h"
#include "util/error.h"

namespace specd {

using nlohmann::json;

json read_json_file(const std::string& path) {
  const std::string text = read_whole_file(path);
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    input_error(path, "invalid JSON at byte " + std::to_string(e.byte));
  }
}

std::string single_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    const bool control = static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    out += control ? '?' : c;
  }
  return out + "'";
}

JsonObjectReader::JsonObjectReader(const json& object, std::string where, std::string prefix)
    : object_(object), where_(std::move(where)), prefix_(std::move(prefix)) {}

void JsonObjectReader::fail(const std::string& key, const std::string& problem) const {
  input_error(where_, "field " + single_quoted(prefix_ + key) + " " + problem);
}

bool JsonObjectReader::has(const std::string& key) const {
  auto it = object_.find(key);
  return it != object_.end() && !it->is_null();
}

const json& JsonObjectReader::at(const std::string& key) const {
  if (!has(key)) input_error(where_, "missing field " + single_quoted(prefix_ + key));
  return object_.at(key);
}

int64_t JsonObjectReader::integer(const std::string& key) const {
  const json& value = at(key);
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail(key, "is too large");
    }
    return static_cast<int64_t>(value.get<uint64_t>());
  }
  if (!value.is_number_integer()) fail(key, "must be an integer");
  return value.get<int64_t>();
}

std::optional<int64_t> JsonObjectReader::optional_integer(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return integer(key);
}

double JsonObjectReader::number(const std::string& key) const {
  const json& value = at(key);
  if (!value.is_number()) fail(key, "must be a number");
  return value.get<double>();
}

std::optional<double> JsonObjectReader::optional_number(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return number(key);
}

bool JsonObjectReader::boolean(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const json& value = object_.at(key);
  if (!value.is_boolean()) fail(key, "must be true or false");
  return value.get<bool>();
}

std::string JsonObjectReader::string(const std::string& key) const {
  const json& value = at(key);
  if (!value.is_string()) fail(key, "must be a string");
  return value.get<std::string>();
}

std::optional<std::string> JsonObjectReader::optional_string(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return string(key);
}

}  // namespace specd
