#pragma once
// UTF-8 checks and conversions shared by the tokenizer and the command line.
#include <cstddef>
#include <string>
#include <string_view>

namespace specd {

// True when `text` is well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
bool is_valid_utf8(std::string_view text);

// Length in bytes of the longest well-formed UTF-8 prefix of `text`.
std::size_t valid_utf8_prefix(std::string_view text);

// Appends the UTF-8 encoding of one code point.
void append_utf8(std::string& out, char32_t code_point);

// Decodes the code point at text[pos] (which must start a well-formed sequence) and advances pos.
char32_t next_code_point(std::string_view text, std::size_t& pos);

// Length of the UTF-8 sequence that starts with this lead byte (1 for stray bytes).
std::size_t utf8_sequence_length(unsigned char lead);

// Well-formed UTF-8 from arbitrary bytes: each maximal ill-formed subsequence becomes one
// U+FFFD, the same rule as Rust's String::from_utf8_lossy (and the Unicode recommendation).
std::string utf8_lossy(std::string_view bytes);

}  // namespace specd
