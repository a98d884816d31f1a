#include "spec/sam_corpus.h"

#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/json_reader.h"
#include "io/read_file.h"
#include "util/error.h"
#include "util/fnv1a.h"

namespace specd {

std::string file_fnv1a(const std::string& path) {
  uint64_t hash = kFnv1aOffset;
  for (unsigned char byte : read_whole_file(path)) hash = fnv1a_byte(hash, byte);
  return hash_hex(hash);
}

SamCorpus read_sam_corpus(const std::string& path) {
  const nlohmann::json json = read_json_file(path);
  if (!json.is_object()) input_error(path, "not a SAM corpus (a JSON object expected)");
  JsonObjectReader reader(json, path);
  if (reader.string("format") != "specd-sam-corpus") input_error(path, "not a SAM corpus (format is not specd-sam-corpus)");
  if (reader.integer("version") != 1) input_error(path, "SAM corpus version " + std::to_string(reader.integer("version")) + " is not supported (1 is)");
  SamCorpus corpus;
  corpus.tokenizer_fnv1a = reader.string("tokenizer_fnv1a");
  corpus.vocab_size = reader.integer("vocab_size");
  corpus.source = reader.has("source") ? reader.string("source") : "";
  const nlohmann::json& documents = reader.at("documents");
  if (!documents.is_array()) input_error(path, "field 'documents' must be an array of token-id arrays");
  for (size_t d = 0; d < documents.size(); ++d) {
    const nlohmann::json& document = documents[d];
    if (!document.is_array()) input_error(path, "document " + std::to_string(d) + " is not an array of token ids");
    std::vector<int32_t> tokens;
    for (const nlohmann::json& id : document) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= corpus.vocab_size)
        input_error(path, "document " + std::to_string(d) + " holds " + id.dump() + ", not a token id below vocab_size " +
                              std::to_string(corpus.vocab_size));
      tokens.push_back(id.get<int32_t>());
    }
    corpus.documents.push_back(std::move(tokens));
  }
  return corpus;
}

void write_sam_corpus(const std::string& path, const SamCorpus& corpus) {
  nlohmann::json json = {{"format", "specd-sam-corpus"},
                         {"version", 1},
                         {"tokenizer_fnv1a", corpus.tokenizer_fnv1a},
                         {"vocab_size", corpus.vocab_size},
                         {"source", corpus.source},
                         {"documents", corpus.documents}};
  write_file_atomically(path, json.dump() + "\n");
}

StaticSam::StaticSam(const SamCorpus& corpus, int32_t separator) {
  size_t total = 0;
  for (const auto& document : corpus.documents) total += document.size() + 1;
  automaton_.reserve(total);
  for (const auto& document : corpus.documents) {
    for (int32_t token : document) automaton_.extend(token);
    automaton_.extend(separator);
  }
}

}  // namespace specd
