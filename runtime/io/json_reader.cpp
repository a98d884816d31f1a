#include "io/json_reader.h"

#include <limits>
#include <optional>
#include <set>
#include <vector>

#include "io/read_file.h"
#include "util/error.h"

namespace specd {

using nlohmann::json;

namespace {

// nlohmann's parser keeps its own stack, but the readers walking a value recurse (a tokenizer's
// nested Sequence normalizers): refuse deep nesting before parsing. Returns the offending byte.
std::optional<size_t> too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

// Text for a message: control characters replaced (one line), cut after `limit` bytes at a UTF-8
// boundary with "..." and the full length.
std::string clipped(std::string_view text, size_t limit) {
  size_t kept = text.size();
  if (kept > limit) {
    kept = limit;
    while (kept > 0 && (static_cast<unsigned char>(text[kept]) & 0xC0) == 0x80) --kept;
  }
  std::string out;
  for (char c : text.substr(0, kept)) {
    const bool control = static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    out += control ? '?' : c;
  }
  if (kept < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

// "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..." without
// its tag, cut short: the message quotes the offending token, which may be huge.
std::string reason(const json::exception& e) {
  std::string_view text = e.what();
  if (text.rfind("[json.exception.", 0) == 0) {
    const size_t end = text.find("] ");
    if (end != std::string_view::npos) text.remove_prefix(end + 2);
  }
  return clipped(text, 2 * kMaxQuotedBytes);
}

template <typename Json>
Json parse_json_as(std::string_view text, const std::string& where) {
  if (const auto byte = too_deep(text)) {
    input_error(where, "invalid JSON at byte " + std::to_string(*byte) + ": nested deeper than " +
                           std::to_string(kMaxJsonDepth) + " levels");
  }
  // An object that names a key twice: parsers disagree on which value wins (nlohmann keeps the
  // last, others the first), so such a file would mean different things to different readers.
  std::vector<std::set<std::string>> open_objects;
  std::optional<std::string> duplicate;
  const typename Json::parser_callback_t track_keys = [&](int, typename Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) open_objects.emplace_back();
    else if (event == Json::parse_event_t::object_end) open_objects.pop_back();
    else if (event == Json::parse_event_t::key && !open_objects.empty() && !duplicate &&
             !open_objects.back().insert(parsed.template get<std::string>()).second)
      duplicate = parsed.template get<std::string>();
    return true;
  };
  try {
    Json parsed = Json::parse(text.begin(), text.end(), track_keys);
    if (duplicate) input_error(where, "invalid JSON: the key " + single_quoted(*duplicate) + " appears twice in one object");
    return parsed;
  } catch (const typename Json::parse_error& e) {
    input_error(where, "invalid JSON at byte " + std::to_string(e.byte) + ": " + reason(e));
  } catch (const typename Json::exception& e) {  // out_of_range 406: a number such as 1e999
    input_error(where, "invalid JSON: " + reason(e));
  }
}

}  // namespace

json parse_json(std::string_view text, const std::string& where) { return parse_json_as<json>(text, where); }

nlohmann::ordered_json parse_ordered_json(std::string_view text, const std::string& where) {
  return parse_json_as<nlohmann::ordered_json>(text, where);
}

std::vector<int32_t> parse_token_list(std::string_view text, const std::string& where) {
  const json list = parse_json(text, where);
  if (!list.is_array()) input_error(where, "must be a list of token ids");
  std::vector<int32_t> ids;
  ids.reserve(list.size());
  for (const json& id : list) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > std::numeric_limits<int32_t>::max())
      input_error(where, "must be a list of token ids, not " + json_excerpt(id));
    ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return ids;
}

json read_json_file(const std::string& path) { return parse_json(read_whole_file(path), path); }

std::string single_quoted(std::string_view text) {
  std::string out = clipped(text, kMaxQuotedBytes);
  const size_t suffix = text.size() > kMaxQuotedBytes ? out.rfind("... (") : std::string::npos;
  if (suffix == std::string::npos) return "'" + out + "'";
  return "'" + out.substr(0, suffix) + "...'" + out.substr(suffix + 3);
}

std::string json_excerpt(const json& value) {
  return clipped(value.dump(-1, ' ', false, json::error_handler_t::replace), kMaxQuotedBytes);
}

JsonObjectReader::JsonObjectReader(const json& object, std::string where, std::string prefix)
    : object_(object), where_(std::move(where)), prefix_(std::move(prefix)) {}

void JsonObjectReader::fail(const std::string& key, const std::string& problem) const {
  input_error(where_, "field " + single_quoted(prefix_ + key) + " " + problem);
}

bool JsonObjectReader::has(const std::string& key) const {
  if (!object_.is_object()) return false;
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

int64_t JsonObjectReader::integer_in(const std::string& key, int64_t min, int64_t max) const {
  const json& value = at(key);
  const bool in_range = value.is_number_unsigned() ? value.get<uint64_t>() <= static_cast<uint64_t>(max) && min <= max
                        : value.is_number_integer() ? value.get<int64_t>() >= min && value.get<int64_t>() <= max
                                                    : false;
  if (!in_range) fail(key, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", not " + json_excerpt(value));
  return integer(key);
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
