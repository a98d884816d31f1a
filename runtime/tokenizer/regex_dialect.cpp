#include "tokenizer/regex_dialect.h"

namespace specd {
namespace {

// Class contents (without brackets) of Oniguruma's Unicode escapes.
const char* const kSpace = R"(\p{White_Space})";
const char* const kNotSpace = R"(\P{White_Space})";
const char* const kWord = R"(\p{L}\p{M}\p{N}\p{Pc})";
const char* const kHexDigit = "0-9a-fA-F";

// What `\<letter>` becomes; escapes the two engines agree on stay as they are.
std::string rewrite_escape(char letter, bool in_class) {
  const auto set = [&](const char* members, bool negated) {
    if (in_class) return std::string(members);
    return std::string(negated ? "[^" : "[") + members + "]";
  };
  switch (letter) {
    case 's': return kSpace;
    case 'S': return kNotSpace;
    case 'w': return set(kWord, false);
    case 'h': return set(kHexDigit, false);
    // A negated set cannot be spelled inside another class; PCRE2's own meaning is the
    // closest there.
    case 'W': return in_class ? std::string(R"(\W)") : set(kWord, true);
    case 'H': return in_class ? std::string("\\H") : set(kHexDigit, true);
    default: return std::string("\\") + letter;
  }
}

}  // namespace

std::string oniguruma_to_pcre2(const std::string& pattern) {
  std::string out;
  out.reserve(pattern.size() + 32);
  int class_depth = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      out += rewrite_escape(pattern[++i], class_depth > 0);
      continue;
    }
    if (c == '[') {
      if (class_depth > 0 && i + 1 < pattern.size() && pattern[i + 1] == ':') {
        const std::size_t close = pattern.find(":]", i + 2);  // POSIX [:alpha:]
        if (close != std::string::npos) {
          out.append(pattern, i, close + 2 - i);
          i = close + 1;
          continue;
        }
      }
      ++class_depth;
      out += c;
      // A ']' right after '[' or '[^' is a literal member, not the end of the class.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
      continue;
    }
    if (c == ']' && class_depth > 0) --class_depth;
    out += c;
  }
  return out;
}

}  // namespace specd
