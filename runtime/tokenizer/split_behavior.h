#pragma once
// How a piece is cut at pattern matches, as Hugging Face's SplitDelimiterBehavior defines it.
#include <string>
#include <vector>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/regex.h"

namespace specd {

enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

SplitBehavior parse_split_behavior(const std::string& name, const std::string& where);

// Cuts `piece` at `matches` (sorted, non-overlapping); appends the non-empty parts to `out`.
// With `invert`, the text between matches is treated as the delimiter instead.
void split_at_matches(const TextPiece& piece, const std::vector<ByteRange>& matches,
                      SplitBehavior behavior, bool invert, std::vector<TextPiece>& out);

}  // namespace specd
