// Broken or unsupported tokenizer.json files: one InputError naming the file and the problem.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "test_helpers.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

using namespace specd;
using nlohmann::json;

namespace {

json minimal_tokenizer() {
  return {{"added_tokens", json::array()},
          {"normalizer", nullptr},
          {"pre_tokenizer", nullptr},
          {"post_processor", nullptr},
          {"decoder", nullptr},
          {"model",
           {{"type", "BPE"}, {"vocab", {{"a", 0}, {"b", 1}, {"ab", 2}}}, {"merges", {"a b"}}}}};
}

// The message of the InputError that loading `contents` gives, or "" if it loads.
std::string load_error(const std::string& contents, std::string* path_out = nullptr) {
  test::ScopedTempDir dir("bad-tokenizer");
  const std::string path = dir.file("tokenizer.json");
  test::write_text_file(path, contents);
  if (path_out) *path_out = path;
  try {
    Tokenizer::from_file(path);
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

std::string load_error_after(const std::function<void(json&)>& change) {
  json config = minimal_tokenizer();
  change(config);
  std::string path;
  const std::string message = load_error(config.dump(), &path);
  INFO(message);
  CHECK(message.rfind(path + ": ", 0) == 0);
  return message;
}

}  // namespace

TEST_CASE("the minimal tokenizer used below loads", "[tokenizer]") {
  CHECK(load_error(minimal_tokenizer().dump()).empty());
}

TEST_CASE("a missing tokenizer.json is an InputError naming it", "[tokenizer]") {
  const std::string path = "/nonexistent/specd/tokenizer.json";
  CHECK_THROWS_WITH(Tokenizer::from_file(path), Catch::StartsWith(path + ": cannot open: No such file"));
}

TEST_CASE("invalid JSON is an InputError naming the file", "[tokenizer]") {
  std::string path;
  const std::string message = load_error("{\"model\": {\"type\": \"BPE\",", &path);
  CHECK(message.rfind(path + ": invalid JSON", 0) == 0);
}

TEST_CASE("unsupported components are InputErrors naming file and component", "[tokenizer]") {
  CHECK_THAT(load_error_after([](json& c) { c["model"]["type"] = "WordPiece"; }),
             Catch::Contains("unsupported model type 'WordPiece'"));
  CHECK_THAT(load_error_after([](json& c) { c["model"] = {{"type", "Unigram"}, {"vocab", json::array()}}; }),
             Catch::Contains("unsupported model type 'Unigram'"));
  CHECK_THAT(load_error_after([](json& c) { c["normalizer"] = {{"type", "BertNormalizer"}}; }),
             Catch::Contains("unsupported normalizer type 'BertNormalizer'"));
  CHECK_THAT(load_error_after([](json& c) { c["pre_tokenizer"] = {{"type", "Whitespace"}}; }),
             Catch::Contains("unsupported pre_tokenizer type 'Whitespace'"));
  CHECK_THAT(load_error_after([](json& c) { c["post_processor"] = {{"type", "BertProcessing"}}; }),
             Catch::Contains("unsupported post_processor type 'BertProcessing'"));
  CHECK_THAT(load_error_after([](json& c) { c["decoder"] = {{"type", "WordPiece"}}; }),
             Catch::Contains("unsupported decoder type 'WordPiece'"));
}

TEST_CASE("malformed parts of a tokenizer.json are InputErrors", "[tokenizer]") {
  CHECK_THAT(load_error_after([](json& c) { c.erase("model"); }),
             Catch::Contains("no \"model\" section"));
  CHECK_THAT(load_error_after([](json& c) { c["model"]["merges"] = {"a c"}; }),
             Catch::Contains("'c', which is not in the vocab"));
  CHECK_THAT(load_error_after([](json& c) { c["model"]["merges"] = {"ab"}; }),
             Catch::Contains("bad BPE merge"));
  CHECK_THAT(load_error_after([](json& c) { c["model"]["vocab"] = "not a map"; }),
             Catch::Contains("model.vocab must be an object"));
  CHECK_THAT(load_error_after([](json& c) { c["model"]["dropout"] = 0.1; }),
             Catch::Contains("dropout"));
  CHECK_THAT(load_error_after([](json& c) {
               c["pre_tokenizer"] = {{"type", "Split"},
                                     {"pattern", {{"Regex", "(unclosed"}}},
                                     {"behavior", "Isolated"}};
             }),
             Catch::Contains("bad regex"));
  CHECK_THAT(load_error_after([](json& c) {
               c["pre_tokenizer"] = {
                   {"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "Sideways"}};
             }),
             Catch::Contains("unknown split behavior 'Sideways'"));
  CHECK_THAT(load_error_after([](json& c) {
               c["post_processor"] = {{"type", "TemplateProcessing"},
                                      {"single", {{{"SpecialToken", {{"id", "<s>"}}}},
                                                  {{"Sequence", {{"id", "A"}}}}}},
                                      {"special_tokens", json::object()}};
             }),
             Catch::Contains("missing from special_tokens"));
}
