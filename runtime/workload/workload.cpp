#include "workload/workload.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "io/json_reader.h"
#include "io/read_file.h"
#include "util/error.h"
#include "util/utf8.h"

namespace specd {
namespace {

// A list of strings (non-empty unless `may_be_empty`); InputError naming the field otherwise.
std::vector<std::string> strings(const JsonObjectReader& reader, const std::string& key, const std::string& problem) {
  const nlohmann::json& list = reader.at(key);
  if (!list.is_array() || list.empty()) reader.fail(key, problem);
  std::vector<std::string> out;
  for (const auto& item : list) {
    if (!item.is_string()) reader.fail(key, problem);
    out.push_back(item.get<std::string>());
  }
  return out;
}

WorkloadItem parse_item(std::string_view line, const std::string& where) {
  if (!is_valid_utf8(line)) input_error(where, "is not valid UTF-8");
  const nlohmann::json record = parse_json(line, where);
  if (!record.is_object()) input_error(where, "is not a JSON object");
  const JsonObjectReader reader(record, where);
  WorkloadItem item;
  item.id = reader.string("id");
  item.category = reader.string("category");
  item.source = reader.optional_string("source").value_or("");
  item.license = reader.optional_string("license").value_or("");
  if (reader.has("prompt") == reader.has("turns")) input_error(where, "needs exactly one of 'prompt' and 'turns'");
  if (reader.has("prompt")) {
    item.turns.push_back(reader.string("prompt"));
  } else {
    item.turns = strings(reader, "turns", "must be a non-empty list of strings");
  }
  if (!reader.has("max_new_tokens") || !record["max_new_tokens"].is_number_integer() ||
      reader.integer("max_new_tokens") < 1)
    reader.fail("max_new_tokens", "must be a positive integer");
  item.max_new_tokens = reader.integer("max_new_tokens");
  // Quality checks only: a reference answer for the one prompt, or one per turn.
  if (reader.has("reference")) {
    item.references.push_back(reader.string("reference"));
  } else if (reader.has("references")) {
    const std::string problem = "must be a list of strings, one per turn";
    item.references = strings(reader, "references", problem);
    if (item.references.size() != item.turns.size()) reader.fail("references", problem);
  }
  return item;
}

}  // namespace

std::vector<WorkloadItem> parse_workload(std::string_view text, const std::string& path) {
  std::vector<WorkloadItem> items;
  int64_t number = 1;
  for (size_t begin = 0; begin < text.size(); ++number) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(begin, end - begin);
    if (!line.empty()) items.push_back(parse_item(line, path + ":" + std::to_string(number)));
    begin = end + 1;
  }
  if (items.empty()) input_error(path, "holds no prompts");
  return items;
}

std::vector<WorkloadItem> read_workload(const std::string& path) { return parse_workload(read_whole_file(path), path); }

std::vector<WorkloadItem> read_workload_suite(const std::string& dir, const std::vector<std::string>& categories, int64_t per_file) {
  std::vector<std::string> files;
  if (!categories.empty()) {
    for (const auto& c : categories) files.push_back(dir + "/" + c + ".jsonl");
  } else {
    if (!std::filesystem::is_directory(dir)) input_error(dir, "is not a directory");
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().extension() == ".jsonl") files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
  }
  std::vector<WorkloadItem> items;
  for (const auto& file : files) {
    auto loaded = read_workload(file);
    loaded.resize(std::min<size_t>(loaded.size(), static_cast<size_t>(per_file)));
    items.insert(items.end(), loaded.begin(), loaded.end());
  }
  if (items.empty()) input_error(dir, "holds no workload files");
  return items;
}

}  // namespace specd
