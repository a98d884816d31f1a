#pragma once
// printf-style formatting into a std::string, for the texts that print numbers ("%.1f%%", "%g"):
// one place instead of a fixed char buffer per call site, with the length measured first so a
// long text is never cut.
#include <cstdio>
#include <string>

namespace specd {

template <typename... Args>
std::string strprintf(const char* pattern, Args... args) {
  const int length = std::snprintf(nullptr, 0, pattern, args...);
  if (length <= 0) return "";
  std::string out(static_cast<size_t>(length), '\0');
  std::snprintf(out.data(), out.size() + 1, pattern, args...);
  return out;
}

}  // namespace specd
