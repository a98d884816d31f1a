#include "tokenizer/byte_level_alphabet.h"

#include <array>
#include <unordered_map>

#include "util/utf8.h"

namespace specd {
namespace {

struct Alphabet {
  std::array<std::string, 256> symbol_of_byte;
  std::unordered_map<char32_t, unsigned char> byte_of_symbol;

  Alphabet() {
    // Printable Latin-1 bytes stand for themselves; the others take code points from U+0100 on.
    char32_t next_free = 256;
    for (int byte = 0; byte < 256; ++byte) {
      const bool printable = (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) ||
                             (byte >= 0xAE && byte <= 0xFF);
      const char32_t symbol = printable ? static_cast<char32_t>(byte) : next_free++;
      append_utf8(symbol_of_byte[byte], symbol);
      byte_of_symbol[symbol] = static_cast<unsigned char>(byte);
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet instance;
  return instance;
}

}  // namespace

std::string to_byte_level(std::string_view bytes) {
  const Alphabet& map = alphabet();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char byte : bytes) out += map.symbol_of_byte[byte];
  return out;
}

bool from_byte_level(std::string_view symbols, std::string& bytes) {
  const Alphabet& map = alphabet();
  std::size_t pos = 0;
  while (pos < symbols.size()) {
    const auto found = map.byte_of_symbol.find(next_code_point(symbols, pos));
    if (found == map.byte_of_symbol.end()) return false;
    bytes += static_cast<char>(found->second);
  }
  return true;
}

}  // namespace specd
