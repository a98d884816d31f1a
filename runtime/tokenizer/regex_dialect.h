#pragma once
// Hugging Face compiles tokenizer.json regexes with Oniguruma. PCRE2 reads the same syntax but
// gives a few escapes other meanings: its \s also matches U+180E, its \w leaves out marks, and
// its \h is horizontal space where Oniguruma's is a hex digit. This rewrites those escapes into
// explicit Unicode properties so both engines split text identically.
#include <string>

namespace specd {

std::string oniguruma_to_pcre2(const std::string& pattern);

}  // namespace specd
