#include "speculative/acceptor.h"

#include <algorithm>

namespace specd {

int32_t AcceptResult::count(NodeVerdict verdict) const {
  return static_cast<int32_t>(std::count(verdicts.begin(), verdicts.end(), verdict));
}

std::string accepted_verdicts(const AcceptResult& result) {
  std::string letters;
  for (size_t i = 1; i < result.path.size(); ++i) {
    if (!letters.empty()) letters += ',';
    switch (result.verdicts[result.path[i]]) {
      case NodeVerdict::Rescued: letters += 'C'; break;
      case NodeVerdict::Relaxed: letters += 'X'; break;
      default: letters += 'A';
    }
  }
  return letters;
}

}  // namespace specd
