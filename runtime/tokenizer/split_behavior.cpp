#include "tokenizer/split_behavior.h"

#include <algorithm>

#include "io/json_reader.h"
#include "util/error.h"

namespace specd {
namespace {

struct Part {
  ByteRange range;
  bool is_match;
};

// The whole text as alternating runs of non-matches and matches.
std::vector<Part> cover(std::size_t size, const std::vector<ByteRange>& matches, bool invert) {
  std::vector<Part> parts;
  std::size_t previous = 0;
  for (const auto& match : matches) {
    if (match.first != previous) parts.push_back({{previous, match.first}, invert});
    parts.push_back({match, !invert});
    previous = match.second;
  }
  if (previous != size || parts.empty()) parts.push_back({{previous, size}, invert});
  return parts;
}

// Joins each delimiter to its neighbour (or its fellow delimiters) as the behaviour says.
std::vector<ByteRange> merge(const std::vector<Part>& parts, SplitBehavior behavior) {
  std::vector<ByteRange> kept;
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::Removed:
      for (const auto& part : parts) {
        if (!part.is_match) kept.push_back(part.range);
      }
      break;
    case SplitBehavior::Isolated:
      for (const auto& part : parts) kept.push_back(part.range);
      break;
    case SplitBehavior::Contiguous:
      for (const auto& part : parts) {
        if (!kept.empty() && part.is_match == previous_match) {
          kept.back().second = part.range.second;
        } else {
          kept.push_back(part.range);
        }
        previous_match = part.is_match;
      }
      break;
    case SplitBehavior::MergedWithPrevious:
      for (const auto& part : parts) {
        if (!kept.empty() && part.is_match && !previous_match) {
          kept.back().second = part.range.second;
        } else {
          kept.push_back(part.range);
        }
        previous_match = part.is_match;
      }
      break;
    case SplitBehavior::MergedWithNext:
      for (auto part = parts.rbegin(); part != parts.rend(); ++part) {
        if (!kept.empty() && part->is_match && !previous_match) {
          kept.back().first = part->range.first;
        } else {
          kept.push_back(part->range);
        }
        previous_match = part->is_match;
      }
      std::reverse(kept.begin(), kept.end());
      break;
  }
  return kept;
}

}  // namespace

SplitBehavior parse_split_behavior(const std::string& name, const std::string& where) {
  if (name == "Removed") return SplitBehavior::Removed;
  if (name == "Isolated") return SplitBehavior::Isolated;
  if (name == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (name == "Contiguous") return SplitBehavior::Contiguous;
  input_error(where, "unknown split behavior " + single_quoted(name));
}

void split_at_matches(const TextPiece& piece, const std::vector<ByteRange>& matches,
                      SplitBehavior behavior, bool invert, std::vector<TextPiece>& out) {
  for (const auto& [begin, end] : merge(cover(piece.text.size(), matches, invert), behavior)) {
    if (begin == end) continue;
    out.push_back({piece.text.substr(begin, end - begin), piece.at_input_start && begin == 0});
  }
}

}  // namespace specd
