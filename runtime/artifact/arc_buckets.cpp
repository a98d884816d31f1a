#include "artifact/arc_buckets.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace specd {
namespace {

// One bucket name part: "depth=N" or "entropy=[a,b)".
bool part_matches(const std::string& part, int32_t depth, double entropy) {
  if (part.rfind("depth=", 0) == 0) {
    const char* begin = part.c_str() + 6;
    char* end = nullptr;
    const long value = std::strtol(begin, &end, 10);
    if (end == begin || *end != '\0') throw std::invalid_argument("ARC constants: bad bucket name part " + part);
    return value == depth;
  }
  if (part.rfind("entropy=[", 0) == 0 && part.size() > 10 && part.back() == ')') {
    const char* begin = part.c_str() + 9;
    char* end = nullptr;
    const double low = std::strtod(begin, &end);
    if (end == begin || *end != ',') throw std::invalid_argument("ARC constants: bad bucket name part " + part);
    begin = end + 1;
    const double high = std::strtod(begin, &end);
    if (end == begin || *end != ')') throw std::invalid_argument("ARC constants: bad bucket name part " + part);
    return entropy >= low && entropy < high;
  }
  throw std::invalid_argument("ARC constants: bad bucket name part " + part);
}

bool bucket_matches(const std::string& name, int32_t depth, double entropy) {
  size_t start = 0;
  while (true) {
    const size_t comma = name.find(',', start);
    // "entropy=[a,b)" holds a comma of its own: a part ends at a comma only after its ')'.
    size_t end = comma;
    if (name.compare(start, 9, "entropy=[") == 0) {
      end = name.find(')', start);
      if (end == std::string::npos) throw std::invalid_argument("ARC constants: bad bucket name " + name);
      ++end;
    }
    if (!part_matches(name.substr(start, end == std::string::npos ? std::string::npos : end - start), depth, entropy))
      return false;
    if (end == std::string::npos || end == name.size()) return true;
    if (name[end] != ',') throw std::invalid_argument("ARC constants: bad bucket name " + name);
    start = end + 1;
  }
}

}  // namespace

const ArcConstants& constants_for(const std::vector<ArcConstants>& constants, int32_t depth, float root_entropy) {
  if (constants.empty() || constants.front().bucket != "all")
    throw std::invalid_argument("ARC constants: the first bucket is not \"all\"");
  for (size_t i = 1; i < constants.size(); ++i)
    if (bucket_matches(constants[i].bucket, depth, root_entropy)) return constants[i];
  return constants.front();
}

}  // namespace specd
