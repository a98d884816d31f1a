#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "io/json_reader.h"
#include "tokenizer/added_vocabulary.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/decoder.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/post_processor.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/token_id.h"
#include "util/error.h"
#include "util/utf8.h"

namespace specd {
namespace {

bool flag(const nlohmann::json& config, const char* name) {
  const auto found = config.find(name);
  return found != config.end() && found->get<bool>();
}

std::vector<AddedToken> parse_added_tokens(const nlohmann::json& config, const std::string& where) {
  std::vector<AddedToken> tokens;
  if (!config.contains("added_tokens") || config.at("added_tokens").is_null()) return tokens;
  for (const auto& entry : config.at("added_tokens")) {
    AddedToken token;
    token.id = token_id(entry.at("id"), where, "added_tokens id");
    token.content = entry.at("content").get<std::string>();
    token.special = flag(entry, "special");
    token.lstrip = flag(entry, "lstrip");
    token.rstrip = flag(entry, "rstrip");
    token.single_word = flag(entry, "single_word");
    token.normalized = flag(entry, "normalized");
    if (!token.content.empty()) tokens.push_back(std::move(token));
  }
  return tokens;
}

std::unique_ptr<BpeModel> make_model(const nlohmann::json& model, const std::string& where) {
  // Older files leave out the type; a model with merges is a BPE model.
  const std::string type = model.contains("type") ? model.at("type").get<std::string>()
                           : model.contains("merges") ? "BPE"
                                                      : "(none)";
  if (type != "BPE") input_error(where, "unsupported model type " + single_quoted(type));
  return BpeModel::from_json(model, where);
}

}  // namespace

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

Tokenizer Tokenizer::from_file(const std::string& path) {
  const nlohmann::json config = read_json_file(path);
  Tokenizer tokenizer;
  try {
    if (!config.is_object() || !config.contains("model")) input_error(path, "no \"model\" section");
    // truncation and padding are ignored on purpose: a decoding runtime wants its prompt whole.
    tokenizer.model_ = make_model(config.at("model"), path);
    tokenizer.normalizer_ = make_normalizer(config.value("normalizer", nlohmann::json()), path);
    tokenizer.pre_tokenizer_ =
        make_pre_tokenizer(config.value("pre_tokenizer", nlohmann::json()), path);
    tokenizer.post_processor_ =
        make_post_processor(config.value("post_processor", nlohmann::json()), path);
    tokenizer.decoder_ = make_decoder(config.value("decoder", nlohmann::json()), path);
    tokenizer.added_ = std::make_unique<AddedVocabulary>(parse_added_tokens(config, path),
                                                         tokenizer.normalizer_.get());
  } catch (const nlohmann::json::exception& error) {
    // type_error / out_of_range of a field read with .get or .at: short, and kept on one line.
    input_error(path, "malformed tokenizer.json: " + single_quoted(error.what()));
  }
  return tokenizer;
}

// The ordinary text between raw-matched added tokens: normalize, cut at normalized added
// tokens, pre-tokenize, and let the model tokenize each piece.
void Tokenizer::encode_text(std::string_view text, bool at_input_start,
                            std::vector<int32_t>& ids) const {
  std::string normalized(text);
  if (normalizer_) normalizer_->normalize(normalized);
  for (const auto& segment : added_->split(normalized, true)) {
    if (segment.token >= 0) {
      ids.push_back(segment.token);
      continue;
    }
    if (segment.begin == segment.end) continue;
    std::vector<TextPiece> pieces{
        {normalized.substr(segment.begin, segment.end - segment.begin),
         at_input_start && segment.begin == 0}};
    if (pre_tokenizer_) pre_tokenizer_->pre_tokenize(pieces);
    for (const auto& piece : pieces) model_->tokenize(piece.text, ids);
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  const std::size_t valid = valid_utf8_prefix(text);
  if (valid != text.size()) {
    input_error("text", "invalid UTF-8 at byte " + std::to_string(valid));
  }
  std::vector<int32_t> ids;
  for (const auto& segment : added_->split(text, false)) {
    if (segment.token >= 0) {
      ids.push_back(segment.token);
    } else {
      encode_text(text.substr(segment.begin, segment.end - segment.begin), segment.begin == 0,
                  ids);
    }
  }
  if (add_special_tokens && post_processor_) post_processor_->add_special_tokens(ids);
  return ids;
}

const std::string* Tokenizer::token_of(int32_t id) const {
  if (const AddedToken* added = added_->find(id)) return &added->content;
  return model_->id_to_token(id);
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    const std::string* token = token_of(id);
    if (!token) continue;
    if (skip_special_tokens && added_->is_special_content(*token)) continue;
    tokens.push_back(*token);
  }
  if (decoder_) {
    decoder_->decode_chain(tokens);
  } else if (tokens.size() > 1) {
    // Without a decoder Hugging Face joins the tokens with spaces.
    for (std::size_t i = 1; i < tokens.size(); ++i) tokens[0] += " " + tokens[i];
    tokens.resize(1);
  }
  std::string text;
  for (const auto& token : tokens) text += token;
  return text;
}

int32_t Tokenizer::vocab_size() const {
  return std::max(model_->max_id(), added_->max_id().value_or(-1)) + 1;
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (auto id = added_->token_to_id(token)) return id;
  return model_->token_to_id(token);
}

std::string Tokenizer::id_to_token(int32_t id) const {
  const std::string* token = token_of(id);
  if (!token) throw std::out_of_range("token id " + std::to_string(id) + " is not in the vocabulary");
  return *token;
}

bool Tokenizer::is_special(int32_t id) const {
  const AddedToken* added = added_->find(id);
  return added && added->special;
}

}  // namespace specd
