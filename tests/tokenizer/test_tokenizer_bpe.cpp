// The BPE model on tiny hand-written tokenizer.json files. Every expectation here was checked
// once against Hugging Face's tokenizers 0.23.2 on the same JSON.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "test_helpers.h"
#include "tokenizer/tokenizer.h"

using namespace specd;
using nlohmann::json;
using Ids = std::vector<int32_t>;

namespace {

json toy_tokenizer(json model) {
  json base_model = {{"type", "BPE"},          {"dropout", nullptr},
                     {"unk_token", nullptr},   {"continuing_subword_prefix", nullptr},
                     {"end_of_word_suffix", nullptr}, {"fuse_unk", false},
                     {"byte_fallback", false}, {"ignore_merges", false}};
  base_model.update(model);
  return {{"version", "1.0"},        {"truncation", nullptr},     {"padding", nullptr},
          {"added_tokens", json::array()}, {"normalizer", nullptr}, {"pre_tokenizer", nullptr},
          {"post_processor", nullptr}, {"decoder", nullptr},     {"model", base_model}};
}

Tokenizer load(const json& config) {
  test::ScopedTempDir dir("toy-tokenizer");
  const std::string path = dir.file("tokenizer.json");
  test::write_text_file(path, config.dump());
  return Tokenizer::from_file(path);
}

const json kAbcVocab = {{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"bc", 4}, {"abc", 5}};
const json kUnkVocab = {{"<unk>", 0}, {"a", 1}, {"b", 2}, {"<0x78>", 3}};

}  // namespace

TEST_CASE("BPE merges the lowest-ranked pair first, leftmost among equals", "[tokenizer]") {
  const Tokenizer tokenizer =
      load(toy_tokenizer({{"vocab", kAbcVocab}, {"merges", {"a b", "b c"}}}));
  CHECK(tokenizer.encode("abc") == Ids{3, 2});
  CHECK(tokenizer.encode("bcab") == Ids{4, 3});
  CHECK(tokenizer.encode("abcab") == Ids{3, 2, 3});
  CHECK(tokenizer.encode("") == Ids{});
  // Without a decoder, Hugging Face joins the tokens with spaces.
  CHECK(tokenizer.decode({3, 2}) == "ab c");

  const Tokenizer swapped =
      load(toy_tokenizer({{"vocab", kAbcVocab}, {"merges", {"b c", "a b"}}}));
  CHECK(swapped.encode("abc") == Ids{0, 4});
  CHECK(swapped.encode("abcab") == Ids{0, 4, 3});
}

TEST_CASE("BPE merges read the same in string and array form", "[tokenizer]") {
  const Tokenizer strings =
      load(toy_tokenizer({{"vocab", kAbcVocab}, {"merges", {"a b", "b c"}}}));
  const Tokenizer arrays = load(toy_tokenizer(
      {{"vocab", kAbcVocab}, {"merges", json::array({json::array({"a", "b"}), json::array({"b", "c"})})}}));
  for (const char* text : {"abc", "bcab", "abcab", "cba", "aaabbbccc"}) {
    CHECK(strings.encode(text) == arrays.encode(text));
  }
}

TEST_CASE("ignore_merges emits a word that is in the vocab as one token", "[tokenizer]") {
  const Tokenizer tokenizer = load(toy_tokenizer(
      {{"vocab", kAbcVocab}, {"merges", {"a b", "b c"}}, {"ignore_merges", true}}));
  CHECK(tokenizer.encode("abc") == Ids{5});
  CHECK(tokenizer.encode("abcab") == Ids{3, 2, 3});
}

TEST_CASE("unknown characters: dropped, fused, unfused or byte fallback", "[tokenizer]") {
  const Tokenizer no_unk = load(toy_tokenizer({{"vocab", kAbcVocab}, {"merges", {"a b"}}}));
  CHECK(no_unk.encode("abx") == Ids{3});

  const Tokenizer fused = load(toy_tokenizer(
      {{"vocab", kUnkVocab}, {"merges", json::array()}, {"unk_token", "<unk>"}, {"fuse_unk", true}}));
  CHECK(fused.encode("axyzb") == Ids{1, 0, 2});
  CHECK(fused.encode("xyz") == Ids{0});
  CHECK(fused.decode({1, 0, 2}) == "a <unk> b");

  const Tokenizer unfused = load(toy_tokenizer(
      {{"vocab", kUnkVocab}, {"merges", json::array()}, {"unk_token", "<unk>"}}));
  CHECK(unfused.encode("axyzb") == Ids{1, 0, 0, 0, 2});

  const Tokenizer fallback = load(toy_tokenizer({{"vocab", kUnkVocab},
                                                 {"merges", json::array()},
                                                 {"unk_token", "<unk>"},
                                                 {"byte_fallback", true}}));
  CHECK(fallback.encode("axyb") == Ids{1, 3, 0, 2});
}
