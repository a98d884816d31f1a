#include "tokenizer/post_processor.h"

#include <nlohmann/json.hpp>

#include "tokenizer/token_id.h"
#include "io/json_reader.h"
#include "util/error.h"

namespace specd {
namespace {

// The "single" template flattened: special-token ids with one hole for the sequence.
class TemplateProcessor : public PostProcessor {
 public:
  TemplateProcessor(std::vector<int32_t> before, std::vector<int32_t> after)
      : before_(std::move(before)), after_(std::move(after)) {}
  void add_special_tokens(std::vector<int32_t>& ids) const override {
    ids.insert(ids.begin(), before_.begin(), before_.end());
    ids.insert(ids.end(), after_.begin(), after_.end());
  }

 private:
  std::vector<int32_t> before_;
  std::vector<int32_t> after_;
};

class SequenceProcessor : public PostProcessor {
 public:
  explicit SequenceProcessor(std::vector<std::unique_ptr<PostProcessor>> steps)
      : steps_(std::move(steps)) {}
  void add_special_tokens(std::vector<int32_t>& ids) const override {
    for (const auto& step : steps_) step->add_special_tokens(ids);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> steps_;
};

std::unique_ptr<PostProcessor> make_template(const nlohmann::json& config,
                                             const std::string& where) {
  const nlohmann::json& specials = config.at("special_tokens");
  std::vector<int32_t> before, after;
  bool seen_sequence = false;
  for (const auto& item : config.at("single")) {
    if (item.contains("Sequence")) {
      if (seen_sequence) input_error(where, "TemplateProcessing single template has two sequences");
      seen_sequence = true;
      continue;
    }
    if (!item.contains("SpecialToken")) {
      input_error(where, "unsupported TemplateProcessing item " + json_excerpt(item));
    }
    const std::string name = item.at("SpecialToken").at("id").get<std::string>();
    if (!specials.contains(name)) {
      input_error(where, "TemplateProcessing uses " + single_quoted(name) + ", missing from special_tokens");
    }
    for (const auto& id : specials.at(name).at("ids")) {
      (seen_sequence ? after : before).push_back(token_id(id, where, "post_processor special_tokens id"));
    }
  }
  if (!seen_sequence) input_error(where, "TemplateProcessing single template has no sequence");
  return std::make_unique<TemplateProcessor>(std::move(before), std::move(after));
}

}  // namespace

std::unique_ptr<PostProcessor> make_post_processor(const nlohmann::json& config,
                                                   const std::string& where) {
  if (config.is_null()) return nullptr;
  const std::string type = config.at("type").get<std::string>();
  if (type == "ByteLevel") return nullptr;  // it only trims offsets, which we do not track
  if (type == "TemplateProcessing") return make_template(config, where);
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PostProcessor>> steps;
    for (const auto& step : config.at("processors")) {
      if (auto processor = make_post_processor(step, where)) steps.push_back(std::move(processor));
    }
    return std::make_unique<SequenceProcessor>(std::move(steps));
  }
  input_error(where, "unsupported post_processor type " + single_quoted(type));
}

}  // namespace specd
