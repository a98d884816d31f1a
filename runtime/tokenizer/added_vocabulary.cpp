#include "tokenizer/added_vocabulary.h"

#include <algorithm>

namespace specd {

AddedVocabulary::AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer)
    : tokens_(std::move(tokens)) {
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    const AddedToken& token = tokens_[i];
    index_of_id_.emplace(token.id, i);
    id_of_content_.emplace(token.content, token.id);
    if (token.normalized) {
      std::string content = token.content;
      if (normalizer) normalizer->normalize(content);
      normalized_matcher_.add(content, static_cast<int32_t>(i));
    } else {
      raw_matcher_.add(token.content, static_cast<int32_t>(i));
    }
  }
}

bool AddedVocabulary::fits_single_word(std::string_view text, std::size_t begin,
                                       std::size_t end) const {
  const bool word_before = begin > 0 && word_at_end_.search(text.substr(0, begin));
  const bool word_after = end < text.size() && word_at_start_.search(text.substr(end));
  return !word_before && !word_after;
}

std::vector<AddedVocabulary::Segment> AddedVocabulary::split(std::string_view text,
                                                             bool normalized_tokens) const {
  const TokenMatcher& matcher = normalized_tokens ? normalized_matcher_ : raw_matcher_;
  if (text.empty() || matcher.empty()) return {{0, text.size(), -1}};
  std::vector<Segment> segments;
  std::size_t done = 0;
  for (const auto& match : matcher.find_all(text)) {
    if (match.begin < done) continue;  // swallowed by the previous token's rstrip
    const AddedToken& token = tokens_[match.value];
    std::size_t begin = match.begin;
    std::size_t end = match.end;
    if (token.single_word && !fits_single_word(text, begin, end)) continue;
    if (token.lstrip) {
      const auto spaces = spaces_at_end_.find_all(text.substr(0, begin));
      begin = std::max(spaces.empty() ? begin : spaces.front().first, done);
    }
    if (token.rstrip) end += spaces_at_start_.match_prefix(text.substr(end));
    if (begin > done) segments.push_back({done, begin, -1});
    segments.push_back({begin, end, token.id});
    done = end;
  }
  if (done < text.size()) segments.push_back({done, text.size(), -1});
  return segments;
}

std::optional<int32_t> AddedVocabulary::token_to_id(std::string_view content) const {
  const auto found = id_of_content_.find(std::string(content));
  if (found == id_of_content_.end()) return std::nullopt;
  return found->second;
}

const AddedToken* AddedVocabulary::find(int32_t id) const {
  const auto found = index_of_id_.find(id);
  return found == index_of_id_.end() ? nullptr : &tokens_[found->second];
}

bool AddedVocabulary::is_special_content(std::string_view content) const {
  const auto id = token_to_id(content);
  return id && find(*id)->special;
}

std::optional<int32_t> AddedVocabulary::max_id() const {
  std::optional<int32_t> highest;
  for (const auto& token : tokens_) highest = std::max(highest.value_or(token.id), token.id);
  return highest;
}

}  // namespace specd
