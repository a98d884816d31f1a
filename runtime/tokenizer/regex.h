#pragma once
// A compiled PCRE2 pattern in UTF + UCP mode (JIT-compiled where the library can), the regex
// dialect closest to the Oniguruma one that Hugging Face's tokenizers use.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace specd {

using ByteRange = std::pair<std::size_t, std::size_t>;  // [first, second) in bytes

class Regex {
 public:
  // Throws InputError("<where>: bad regex ...") when the pattern does not compile, and when a
  // match gives up (catastrophic backtracking hits PCRE2's match or memory limit).
  Regex(const std::string& pattern, const std::string& where);
  ~Regex();
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;

  // Every non-overlapping match, left to right; `text` must be valid UTF-8.
  std::vector<ByteRange> find_all(std::string_view text) const;
  bool search(std::string_view text) const;
  // End of the match anchored at the start of `text`, or 0 when none.
  std::size_t match_prefix(std::string_view text) const;

 struct Compiled;

 private:
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace specd
