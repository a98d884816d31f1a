#pragma once
// tokenizer.json "post_processor": what encode(text, add_special_tokens = true) adds around the
// ids of one sequence (TemplateProcessing's "single" template; ByteLevel changes no ids).
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace specd {

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  virtual void add_special_tokens(std::vector<int32_t>& ids) const = 0;
};

// nullptr when nothing is added (JSON null, ByteLevel); InputError for unsupported types.
std::unique_ptr<PostProcessor> make_post_processor(const nlohmann::json& config,
                                                   const std::string& where);

}  // namespace specd
