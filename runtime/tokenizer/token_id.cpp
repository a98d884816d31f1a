#include "tokenizer/token_id.h"

#include <nlohmann/json.hpp>

#include "io/json_reader.h"
#include "util/error.h"

namespace specd {

int32_t token_id(const nlohmann::json& value, const std::string& where, const std::string& what) {
  const bool in_range = value.is_number_unsigned() ? value.get<uint64_t>() <= static_cast<uint64_t>(kMaxTokenId)
                        : value.is_number_integer() ? value.get<int64_t>() >= 0 && value.get<int64_t>() <= kMaxTokenId
                                                    : false;
  if (!in_range) {
    input_error(where, what + " must be an integer from 0 to " + std::to_string(kMaxTokenId) + ", not " + json_excerpt(value));
  }
  return static_cast<int32_t>(value.get<int64_t>());
}

}  // namespace specd
