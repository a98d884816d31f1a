#include "tokenizer/bpe_model.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "io/json_reader.h"
#include "tokenizer/token_id.h"
#include "util/error.h"
#include "util/utf8.h"

namespace specd {
namespace {

constexpr std::size_t kCacheCapacity = 1 << 16;
constexpr std::size_t kLongestCachedWord = 256;

std::string optional_string(const nlohmann::json& model, const char* name) {
  const auto found = model.find(name);
  return found == model.end() || found->is_null() ? std::string() : found->get<std::string>();
}

bool optional_flag(const nlohmann::json& model, const char* name) {
  const auto found = model.find(name);
  return found != model.end() && !found->is_null() && found->get<bool>();
}

// Merges come as "left right" strings (older files) or as ["left", "right"] pairs.
std::pair<std::string, std::string> merge_parts(const nlohmann::json& merge,
                                                const std::string& where) {
  if (merge.is_array() && merge.size() == 2) {
    return {merge[0].get<std::string>(), merge[1].get<std::string>()};
  }
  if (merge.is_string()) {
    const std::string text = merge.get<std::string>();
    const std::size_t space = text.find(' ');
    if (space != std::string::npos) return {text.substr(0, space), text.substr(space + 1)};
  }
  input_error(where, "bad BPE merge " + json_excerpt(merge));
}

}  // namespace

std::unique_ptr<BpeModel> BpeModel::from_json(const nlohmann::json& model,
                                              const std::string& where) {
  std::unique_ptr<BpeModel> bpe(new BpeModel());
  bpe->where_ = where;
  const auto dropout = model.find("dropout");
  if (dropout != model.end() && !dropout->is_null() && dropout->get<double>() != 0.0) {
    input_error(where, "BPE dropout is not supported (tokenization would be random)");
  }
  const nlohmann::json& vocab = model.at("vocab");
  if (!vocab.is_object()) input_error(where, "model.vocab must be an object of token: id");
  for (const auto& [token, id_json] : vocab.items()) {
    const int32_t id = token_id(id_json, where, "model.vocab id of " + single_quoted(token));
    bpe->vocab_.emplace(token, id);
    // By id in a map, not a vector sized by the largest id: a sparse vocabulary costs its entries.
    bpe->tokens_[id] = token;
    bpe->max_id_ = std::max(bpe->max_id_, id);
  }
  const std::string unk = optional_string(model, "unk_token");
  if (!unk.empty()) bpe->unk_token_ = unk;
  bpe->continuing_subword_prefix_ = optional_string(model, "continuing_subword_prefix");
  bpe->end_of_word_suffix_ = optional_string(model, "end_of_word_suffix");
  bpe->fuse_unk_ = optional_flag(model, "fuse_unk");
  bpe->byte_fallback_ = optional_flag(model, "byte_fallback");
  bpe->ignore_merges_ = optional_flag(model, "ignore_merges");

  const auto id_of = [&](const std::string& token) {
    const auto found = bpe->vocab_.find(token);
    if (found == bpe->vocab_.end()) {
      input_error(where, "BPE merge uses " + single_quoted(token) + ", which is not in the vocab");
    }
    return found->second;
  };
  const std::size_t prefix_length = bpe->continuing_subword_prefix_.size();
  int32_t rank = 0;
  for (const auto& merge : model.at("merges")) {
    const auto [left, right] = merge_parts(merge, where);
    if (right.size() < prefix_length) input_error(where, "bad BPE merge " + json_excerpt(merge));
    const int32_t left_id = id_of(left);
    const int32_t right_id = id_of(right);
    const int32_t new_id = id_of(left + right.substr(prefix_length));
    // A pair listed twice keeps its last rank, as in Hugging Face's loader.
    bpe->merges_[merge_pair_key(left_id, right_id)] = {rank++, new_id};
  }

  for (int byte = 0; byte < 256; ++byte) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", byte);
    const auto found = bpe->vocab_.find(name);
    bpe->byte_tokens_[byte] = found == bpe->vocab_.end() ? -1 : found->second;
  }
  return bpe;
}

bool BpeModel::append_byte_fallback(std::string_view character, std::vector<int32_t>& ids) const {
  for (unsigned char byte : character) {
    if (byte_tokens_[byte] < 0) return false;
  }
  for (unsigned char byte : character) ids.push_back(byte_tokens_[byte]);
  return true;
}

std::vector<int32_t> BpeModel::merge_word(std::string_view word) const {
  std::vector<int32_t> ids;
  ids.reserve(word.size());
  std::optional<int32_t> pending_unk;  // unknown characters waiting to be emitted (fused or not)
  std::string symbol;
  for (std::size_t pos = 0; pos < word.size();) {
    const std::size_t begin = pos;
    pos += utf8_sequence_length(static_cast<unsigned char>(word[pos]));
    const std::string_view character = word.substr(begin, pos - begin);
    symbol.clear();
    if (begin > 0) symbol += continuing_subword_prefix_;
    symbol += character;
    if (pos >= word.size()) symbol += end_of_word_suffix_;

    const auto found = vocab_.find(symbol);
    if (found != vocab_.end()) {
      if (pending_unk) ids.push_back(*pending_unk);
      pending_unk.reset();
      ids.push_back(found->second);
      continue;
    }
    if (byte_fallback_ && append_byte_fallback(symbol, ids)) continue;
    if (!unk_token_) continue;  // no unknown token: the character is dropped, as in HF
    const auto unk = vocab_.find(*unk_token_);
    if (unk == vocab_.end()) {
      input_error(where_, "unk_token " + single_quoted(*unk_token_) + " is not in the vocab");
    }
    if (pending_unk && !fuse_unk_) ids.push_back(*pending_unk);
    pending_unk = unk->second;
  }
  if (pending_unk) ids.push_back(*pending_unk);
  apply_merges(ids, merges_);
  return ids;
}

void BpeModel::tokenize(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    const auto whole = vocab_.find(std::string(word));
    if (whole != vocab_.end()) {
      out.push_back(whole->second);
      return;
    }
  }
  const bool cacheable = word.size() <= kLongestCachedWord;
  std::string key;
  if (cacheable) {
    key.assign(word);
    std::lock_guard<std::mutex> lock(cache_mutex_);
    const auto hit = cache_.find(key);
    if (hit != cache_.end()) {
      out.insert(out.end(), hit->second.begin(), hit->second.end());
      return;
    }
  }
  std::vector<int32_t> ids = merge_word(word);
  out.insert(out.end(), ids.begin(), ids.end());
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (cache_.size() >= kCacheCapacity) cache_.clear();
    cache_.emplace(std::move(key), std::move(ids));
  }
}

std::optional<int32_t> BpeModel::token_to_id(std::string_view token) const {
  const auto found = vocab_.find(std::string(token));
  if (found == vocab_.end()) return std::nullopt;
  return found->second;
}

const std::string* BpeModel::id_to_token(int32_t id) const {
  const auto found = tokens_.find(id);
  return found == tokens_.end() || found->second.empty() ? nullptr : &found->second;
}

}  // namespace specd
