#include "tokenizer/normalizer.h"

#include <utf8proc.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <vector>

#include "tokenizer/pattern.h"
#include "io/json_reader.h"
#include "util/error.h"

namespace specd {
namespace {

class UnicodeNormalizer : public Normalizer {
 public:
  explicit UnicodeNormalizer(int options) : options_(options) {}
  void normalize(std::string& text) const override {
    bool ascii = true;
    for (unsigned char c : text) ascii = ascii && c < 0x80;
    if (ascii) return;  // every normal form leaves ASCII alone
    utf8proc_uint8_t* result = nullptr;
    const utf8proc_ssize_t length =
        utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                     static_cast<utf8proc_ssize_t>(text.size()), &result,
                     static_cast<utf8proc_option_t>(options_));
    if (length < 0) throw InputError(std::string("text: ") + utf8proc_errmsg(length));
    text.assign(reinterpret_cast<const char*>(result), static_cast<std::size_t>(length));
    std::free(result);
  }

 private:
  int options_;
};

class PrependNormalizer : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(std::string& text) const override {
    if (!text.empty()) text.insert(0, prefix_);
  }

 private:
  std::string prefix_;
};

class ReplaceNormalizer : public Normalizer {
 public:
  ReplaceNormalizer(Pattern pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void normalize(std::string& text) const override { text = pattern_.replace_all(text, content_); }

 private:
  Pattern pattern_;
  std::string content_;
};

class SequenceNormalizer : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps)
      : steps_(std::move(steps)) {}
  void normalize(std::string& text) const override {
    for (const auto& step : steps_) step->normalize(text);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const nlohmann::json& config,
                                            const std::string& where) {
  if (config.is_null()) return nullptr;
  const std::string type = config.at("type").get<std::string>();
  const int stable = UTF8PROC_STABLE;
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(stable | UTF8PROC_COMPOSE);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(stable | UTF8PROC_DECOMPOSE);
  if (type == "NFKC") {
    return std::make_unique<UnicodeNormalizer>(stable | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
  }
  if (type == "NFKD") {
    return std::make_unique<UnicodeNormalizer>(stable | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
  }
  if (type == "Prepend") {
    return std::make_unique<PrependNormalizer>(config.at("prepend").get<std::string>());
  }
  if (type == "Replace") {
    return std::make_unique<ReplaceNormalizer>(
        Pattern::from_json(config.at("pattern"), where + ": normalizer Replace"),
        config.at("content").get<std::string>());
  }
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Normalizer>> steps;
    for (const auto& step : config.at("normalizers")) {
      if (auto normalizer = make_normalizer(step, where)) steps.push_back(std::move(normalizer));
    }
    return std::make_unique<SequenceNormalizer>(std::move(steps));
  }
  input_error(where, "unsupported normalizer type " + single_quoted(type));
}

}  // namespace specd
