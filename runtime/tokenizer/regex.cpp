#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex.h"

#include <pcre2.h>

#include <stdexcept>

#include "io/json_reader.h"
#include "util/error.h"

namespace specd {

// The interpreter's backtracking memory per match (KiB): PCRE2's default of 20 GB would let a
// catastrophic pattern exhaust memory before its match limit stops it.
constexpr uint32_t kHeapLimitKiB = 256 * 1024;

struct Regex::Compiled {
  pcre2_code* code = nullptr;
  pcre2_match_context* context = nullptr;
  std::string where, pattern;  // for the error when a match gives up
  ~Compiled() {
    pcre2_match_context_free(context);
    pcre2_code_free(code);
  }
};

namespace {

struct MatchData {
  explicit MatchData(const pcre2_code* code)
      : data(pcre2_match_data_create_from_pattern(code, nullptr)) {}
  ~MatchData() { pcre2_match_data_free(data); }
  pcre2_match_data* data;
};

// A match (>= 0) or PCRE2_ERROR_NOMATCH; anything else is thrown, never read as "no match",
// since that would silently cut the text wrong. PCRE2_NO_UTF_CHECK: callers hand over valid
// UTF-8 (the tokenizer checks its input once). A pattern that gives up (match, depth or heap
// limit: catastrophic backtracking) is the tokenizer file's fault: an InputError naming it.
int run_match(const Regex::Compiled& compiled, std::string_view text, std::size_t start,
              uint32_t options, pcre2_match_data* data) {
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  options |= PCRE2_NO_UTF_CHECK;
  int rc = pcre2_match(compiled.code, subject, text.size(), start, options, data, compiled.context);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
    // The interpreter keeps its backtracking state on the heap, which has far more room.
    rc = pcre2_match(compiled.code, subject, text.size(), start, options | PCRE2_NO_JIT, data,
                     compiled.context);
  }
  if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(rc, message, sizeof message);
    input_error(compiled.where, "regex " + single_quoted(compiled.pattern) + " gave up on the text (" +
                                    reinterpret_cast<const char*>(message) + ")");
  }
  return rc;
}

}  // namespace

Regex::Regex(const std::string& pattern, const std::string& where)
    : compiled_(std::make_unique<Compiled>()) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  compiled_->where = where;
  compiled_->pattern = pattern;
  compiled_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                  PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
  if (!compiled_->code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    input_error(where, "bad regex " + single_quoted(pattern) + " at offset " + std::to_string(offset) + ": " +
                           reinterpret_cast<const char*>(message));
  }
  compiled_->context = pcre2_match_context_create(nullptr);
  if (!compiled_->context) throw std::bad_alloc();
  pcre2_set_heap_limit(compiled_->context, kHeapLimitKiB);
  pcre2_jit_compile(compiled_->code, PCRE2_JIT_COMPLETE);  // optional speed-up; falls back
}

Regex::~Regex() = default;
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;

std::vector<ByteRange> Regex::find_all(std::string_view text) const {
  std::vector<ByteRange> matches;
  MatchData match(compiled_->code);
  std::size_t start = 0;
  uint32_t options = 0;
  while (start <= text.size()) {
    const int rc = run_match(*compiled_, text, start, options, match.data);
    if (rc == PCRE2_ERROR_NOMATCH) {
      if (options == 0 || start >= text.size()) break;
      // An empty match was refused here: step over one character and look again.
      ++start;
      while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) {
        ++start;
      }
      options = 0;
      continue;
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.data);
    matches.emplace_back(ovector[0], ovector[1]);
    options = ovector[0] == ovector[1] ? PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED : 0;
    start = ovector[1];
  }
  return matches;
}

bool Regex::search(std::string_view text) const {
  MatchData match(compiled_->code);
  return run_match(*compiled_, text, 0, 0, match.data) >= 0;
}

std::size_t Regex::match_prefix(std::string_view text) const {
  MatchData match(compiled_->code);
  if (run_match(*compiled_, text, 0, PCRE2_ANCHORED, match.data) < 0) return 0;
  return pcre2_get_ovector_pointer(match.data)[1];
}

}  // namespace specd
