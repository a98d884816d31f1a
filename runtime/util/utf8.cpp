#include "util/utf8.h"

namespace specd {
namespace {

// Bytes [pos, pos + result) form one well-formed sequence; 0 when the bytes at pos do not.
// `maximal_subpart` receives how many bytes an ill-formed sequence spans (at least 1).
std::size_t well_formed_sequence(std::string_view text, std::size_t pos,
                                 std::size_t* maximal_subpart = nullptr) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char second_low = 0x80, second_high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_low = 0xA0;
    if (lead == 0xED) second_high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_low = 0x90;
    if (lead == 0xF4) second_high = 0x8F;
  }
  std::size_t good = 1;
  if (length > 0 && pos + 1 < text.size() && byte(pos + 1) >= second_low &&
      byte(pos + 1) <= second_high) {
    good = 2;
    while (good < length && pos + good < text.size() && byte(pos + good) >= 0x80 &&
           byte(pos + good) <= 0xBF) {
      ++good;
    }
  }
  if (length > 0 && good == length) return length;
  if (maximal_subpart) *maximal_subpart = good;
  return 0;
}

}  // namespace

std::size_t valid_utf8_prefix(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t length = well_formed_sequence(text, pos);
    if (length == 0) break;
    pos += length;
  }
  return pos;
}

bool is_valid_utf8(std::string_view text) { return valid_utf8_prefix(text) == text.size(); }

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::size_t utf8_sequence_length(unsigned char lead) {
  if (lead >= 0xF0 && lead <= 0xF7) return 4;
  if (lead >= 0xE0) return lead <= 0xEF ? 3 : 1;
  if (lead >= 0xC0) return 2;
  return 1;
}

char32_t next_code_point(std::string_view text, std::size_t& pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  const std::size_t length = utf8_sequence_length(lead);
  char32_t cp = length == 1 ? lead : lead & (0x7F >> length);
  for (std::size_t i = 1; i < length; ++i) {
    cp = (cp << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
  }
  pos += length;
  return cp;
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    std::size_t bad = 1;
    const std::size_t length = well_formed_sequence(bytes, pos, &bad);
    if (length > 0) {
      out.append(bytes.data() + pos, length);
      pos += length;
    } else {
      out += "\xEF\xBF\xBD";
      pos += bad;
    }
  }
  return out;
}

}  // namespace specd
