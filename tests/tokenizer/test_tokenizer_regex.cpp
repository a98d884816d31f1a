// tokenizer.json regexes are Oniguruma's; specd runs them on PCRE2 after a small rewrite.
#include <catch2/catch.hpp>

#include "tokenizer/regex.h"
#include "tokenizer/regex_dialect.h"

using namespace specd;

namespace {

std::vector<ByteRange> matches(const std::string& oniguruma_pattern, const std::string& text) {
  return Regex(oniguruma_to_pcre2(oniguruma_pattern), "test").find_all(text);
}

}  // namespace

TEST_CASE("regex class s (space) means Unicode White_Space, which U+180E is not", "[tokenizer]") {
  CHECK(matches(R"(\s+)", "a\xE1\xA0\x8E" "b").empty());                  // U+180E
  CHECK(matches(R"(\s+)", "a\xC2\xA0\xE3\x80\x80" "b") == std::vector<ByteRange>{{1, 6}});
  CHECK(matches(R"([^\s\p{L}]+)", "\xE1\xA0\x8E'x") == std::vector<ByteRange>{{0, 4}});
  CHECK(matches(R"(\S+)", "\xE1\xA0\x8E x") == std::vector<ByteRange>{{0, 3}, {4, 5}});
}

TEST_CASE("regex class w (word) takes combining marks, class h is a hex digit", "[tokenizer]") {
  CHECK(matches(R"(\w+)", "e\xCC\x81t\xC3\xA9 x") == std::vector<ByteRange>{{0, 6}, {7, 8}});
  CHECK(matches(R"(\h+)", "0x1fZ") == std::vector<ByteRange>{{0, 1}, {2, 4}});
  CHECK(matches(R"([\h_]+)", "ab_q") == std::vector<ByteRange>{{0, 3}});
}

TEST_CASE("the rewrite leaves escaped backslashes and other escapes alone", "[tokenizer]") {
  CHECK(oniguruma_to_pcre2(R"(\\s)") == R"(\\s)");
  CHECK(oniguruma_to_pcre2(R"(\p{L}\x{2581}\d)") == R"(\p{L}\x{2581}\d)");
  CHECK(oniguruma_to_pcre2(R"([]\s])") == R"([]\p{White_Space}])");
  CHECK(oniguruma_to_pcre2(R"([[:alpha:]\s])") == R"([[:alpha:]\p{White_Space}])");
}

TEST_CASE("find_all steps over empty matches one character at a time", "[tokenizer]") {
  CHECK(Regex("x*", "test").find_all("a\xC3\xA9x") ==
        std::vector<ByteRange>{{0, 0}, {1, 1}, {3, 4}, {4, 4}});
}
