// UTF-8 validation (prompts are checked with it) and the lossy repair used by decoding.
#include <catch2/catch.hpp>

#include "util/utf8.h"

using namespace specd;

TEST_CASE("is_valid_utf8 accepts well-formed text", "[utf8]") {
  CHECK(is_valid_utf8(""));
  CHECK(is_valid_utf8("plain ASCII\n\t"));
  CHECK(is_valid_utf8(std::string("nul\0inside", 10)));
  CHECK(is_valid_utf8("\xC3\xA9"));                  // U+00E9
  CHECK(is_valid_utf8("\xE6\x97\xA5\xE6\x9C\xAC"));  // CJK
  CHECK(is_valid_utf8("\xF0\x9F\x98\x80"));          // U+1F600
  CHECK(is_valid_utf8("\xF4\x8F\xBF\xBF"));          // U+10FFFF, the last code point
  CHECK(is_valid_utf8("\xEF\xBF\xBF"));              // U+FFFF is a noncharacter, still valid
}

TEST_CASE("is_valid_utf8 rejects ill-formed bytes", "[utf8]") {
  CHECK(!is_valid_utf8("\x80"));              // stray continuation byte
  CHECK(!is_valid_utf8("\xC3"));              // cut short
  CHECK(!is_valid_utf8("\xE6\x97"));          // cut short
  CHECK(!is_valid_utf8("\xC0\x80"));          // overlong NUL
  CHECK(!is_valid_utf8("\xC1\xBF"));          // overlong
  CHECK(!is_valid_utf8("\xE0\x80\xAF"));      // overlong '/'
  CHECK(!is_valid_utf8("\xF0\x8F\xBF\xBF"));  // overlong
  CHECK(!is_valid_utf8("\xED\xA0\x80"));      // UTF-16 surrogate
  CHECK(!is_valid_utf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  CHECK(!is_valid_utf8("\xF5\x80\x80\x80"));
  CHECK(!is_valid_utf8("\xFF"));
  CHECK(!is_valid_utf8("ok\xC3("));           // lead byte followed by a non-continuation
  CHECK(valid_utf8_prefix("ok\xC3(") == 2);
}

TEST_CASE("utf8_lossy replaces each maximal ill-formed subpart with one U+FFFD", "[utf8]") {
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(utf8_lossy("intact \xC3\xA9") == "intact \xC3\xA9");
  CHECK(utf8_lossy("a\x80" "b") == "a" + fffd + "b");
  CHECK(utf8_lossy("\xF0\x9F\x98") == fffd);               // one cut-off sequence
  CHECK(utf8_lossy("\xF0\x9F\x98" "a") == fffd + "a");
  CHECK(utf8_lossy("\xE0\x80") == fffd + fffd);            // E0 needs A0..BF next
  CHECK(utf8_lossy("\xED\xA0\x80") == fffd + fffd + fffd);  // surrogates: byte by byte
  CHECK(utf8_lossy("\xC3\xC3\xA9") == fffd + "\xC3\xA9");
  CHECK(utf8_lossy("\xFF\xFE") == fffd + fffd);
}

TEST_CASE("append_utf8 and next_code_point are inverse", "[utf8]") {
  for (char32_t cp : {0x0u, 0x41u, 0x7Fu, 0x80u, 0x7FFu, 0x800u, 0x2581u, 0xFFFDu, 0x10000u,
                      0x1F600u, 0x10FFFFu}) {
    std::string encoded;
    append_utf8(encoded, cp);
    CHECK(is_valid_utf8(encoded));
    CHECK(encoded.size() == utf8_sequence_length(static_cast<unsigned char>(encoded[0])));
    std::size_t pos = 0;
    CHECK(next_code_point(encoded, pos) == cp);
    CHECK(pos == encoded.size());
  }
}
