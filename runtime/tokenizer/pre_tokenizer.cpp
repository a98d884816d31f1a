#include "tokenizer/pre_tokenizer.h"

#include <nlohmann/json.hpp>

#include "tokenizer/byte_level_pre_tokenizer.h"
#include "tokenizer/metaspace.h"
#include "tokenizer/pattern.h"
#include "tokenizer/split_behavior.h"
#include "io/json_reader.h"
#include "util/error.h"

namespace specd {
namespace {

class SplitPreTokenizer : public PreTokenizer {
 public:
  SplitPreTokenizer(Pattern pattern, SplitBehavior behavior, bool invert)
      : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
  void split(const TextPiece& piece, std::vector<TextPiece>& out) const override {
    split_at_matches(piece, pattern_.find_all(piece.text), behavior_, invert_, out);
  }

 private:
  Pattern pattern_;
  SplitBehavior behavior_;
  bool invert_;
};

class SequencePreTokenizer : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps)
      : steps_(std::move(steps)) {}
  void split(const TextPiece& piece, std::vector<TextPiece>& out) const override {
    std::vector<TextPiece> pieces{piece};
    for (const auto& step : steps_) step->pre_tokenize(pieces);
    for (auto& part : pieces) out.push_back(std::move(part));
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

bool flag(const nlohmann::json& config, const char* name, bool fallback) {
  return config.contains(name) ? config.at(name).get<bool>() : fallback;
}

}  // namespace

void PreTokenizer::pre_tokenize(std::vector<TextPiece>& pieces) const {
  std::vector<TextPiece> out;
  out.reserve(pieces.size());
  for (const auto& piece : pieces) split(piece, out);
  pieces = std::move(out);
}

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const nlohmann::json& config,
                                                 const std::string& where) {
  if (config.is_null()) return nullptr;
  const std::string type = config.at("type").get<std::string>();
  if (type == "Split") {
    return std::make_unique<SplitPreTokenizer>(
        Pattern::from_json(config.at("pattern"), where + ": pre_tokenizer Split"),
        parse_split_behavior(config.at("behavior").get<std::string>(), where),
        flag(config, "invert", false));
  }
  if (type == "ByteLevel") {
    return std::make_unique<ByteLevelPreTokenizer>(flag(config, "add_prefix_space", true),
                                                   flag(config, "use_regex", true));
  }
  if (type == "Metaspace") {
    return std::make_unique<MetaspacePreTokenizer>(parse_metaspace_options(config, where));
  }
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    for (const auto& step : config.at("pretokenizers")) {
      if (auto pre_tokenizer = make_pre_tokenizer(step, where)) {
        steps.push_back(std::move(pre_tokenizer));
      }
    }
    return std::make_unique<SequencePreTokenizer>(std::move(steps));
  }
  input_error(where, "unsupported pre_tokenizer type " + single_quoted(type));
}

}  // namespace specd
