#include "workload/workload.h"

#include <nlohmann/json.hpp>

#include <fstream>

#include "util/error.h"
#include "util/utf8.h"

namespace specd {
namespace {

std::string required_string(const nlohmann::json& record, const char* field, const std::string& where) {
  if (!record.contains(field)) input_error(where, std::string("missing field '") + field + "'");
  if (!record[field].is_string()) input_error(where, std::string("field '") + field + "' must be a string");
  return record[field].get<std::string>();
}

WorkloadItem parse_item(const std::string& line, const std::string& where) {
  if (!is_valid_utf8(line)) input_error(where, "is not valid UTF-8");
  nlohmann::json record;
  try {
    record = nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error&) {
    input_error(where, "is not a JSON object");
  }
  if (!record.is_object()) input_error(where, "is not a JSON object");
  WorkloadItem item;
  item.id = required_string(record, "id", where);
  item.category = required_string(record, "category", where);
  item.source = record.value("source", "");
  item.license = record.value("license", "");
  if (record.contains("prompt") == record.contains("turns")) input_error(where, "needs exactly one of 'prompt' and 'turns'");
  if (record.contains("prompt")) {
    item.turns.push_back(required_string(record, "prompt", where));
  } else {
    if (!record["turns"].is_array() || record["turns"].empty()) input_error(where, "field 'turns' must be a non-empty list of strings");
    for (const auto& turn : record["turns"]) {
      if (!turn.is_string()) input_error(where, "field 'turns' must be a non-empty list of strings");
      item.turns.push_back(turn.get<std::string>());
    }
  }
  if (!record.contains("max_new_tokens") || !record["max_new_tokens"].is_number_integer() || record["max_new_tokens"].get<int64_t>() < 1)
    input_error(where, "field 'max_new_tokens' must be a positive integer");
  item.max_new_tokens = record["max_new_tokens"].get<int64_t>();
  // Quality checks only: a reference answer for the one prompt, or one per turn.
  if (record.contains("reference")) {
    if (!record["reference"].is_string()) input_error(where, "field 'reference' must be a string");
    item.references.push_back(record["reference"].get<std::string>());
  } else if (record.contains("references")) {
    const auto& refs = record["references"];
    if (!refs.is_array() || refs.size() != item.turns.size())
      input_error(where, "field 'references' must be a list of strings, one per turn");
    for (const auto& ref : refs) {
      if (!ref.is_string()) input_error(where, "field 'references' must be a list of strings, one per turn");
      item.references.push_back(ref.get<std::string>());
    }
  }
  return item;
}

}  // namespace

std::vector<WorkloadItem> read_workload(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) input_error(path, "cannot be read");
  std::vector<WorkloadItem> items;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    items.push_back(parse_item(line, path + ":" + std::to_string(number)));
  }
  if (items.empty()) input_error(path, "holds no prompts");
  return items;
}

}  // namespace specd
