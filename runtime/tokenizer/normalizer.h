#pragma once
// tokenizer.json "normalizer": rewrites text before pre-tokenization (NFC, Prepend, Replace,
// and Sequences of them).
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace specd {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(std::string& text) const = 0;
};

// nullptr for a JSON null; InputError("<where>: ...") for unsupported types.
std::unique_ptr<Normalizer> make_normalizer(const nlohmann::json& config, const std::string& where);

}  // namespace specd
