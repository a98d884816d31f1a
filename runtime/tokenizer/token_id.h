#pragma once
// Token ids read from tokenizer.json, bounded before anything is sized by them.
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace specd {

// The largest token id a tokenizer.json may use (2^24 - 1, also the largest vocab_size a
// config.json may declare): the largest published vocabularies hold about 256k tokens.
constexpr int32_t kMaxTokenId = (1 << 24) - 1;

// `value` as an id in 0..kMaxTokenId; InputError "WHERE: WHAT must be an integer from 0 to
// 16777215, not VALUE" otherwise (never a silent narrowing: 2^62 is not id 0).
int32_t token_id(const nlohmann::json& value, const std::string& where, const std::string& what);

}  // namespace specd
