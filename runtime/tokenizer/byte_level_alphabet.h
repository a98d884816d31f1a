#pragma once
// GPT-2's reversible map from the 256 byte values to printable Unicode characters, so that any
// byte string becomes a string of vocabulary symbols (space becomes "Ġ", newline "Ċ").
#include <string>
#include <string_view>

namespace specd {

// Each byte of `bytes` replaced by the UTF-8 of its symbol.
std::string to_byte_level(std::string_view bytes);

// The bytes behind a string of symbols; false when a character is not one of the 256 symbols.
bool from_byte_level(std::string_view symbols, std::string& bytes);

}  // namespace specd
