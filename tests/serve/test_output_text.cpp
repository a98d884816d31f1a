// A request's text as the client sees it: released as it becomes final, cut before a stop
// string, never sending what the whole answer would not hold.
#include <catch2/catch.hpp>

#include "serve/output_text.h"
#include "tokenizer/tokenizer.h"

using specd::Tokenizer;
using specd::serve::OutputText;

namespace {

const Tokenizer& demo_tokenizer() {
  static const Tokenizer tokenizer = Tokenizer::from_file(std::string(SPECD_SOURCE_DIR) + "/data/models/demo-target/tokenizer.json");
  return tokenizer;
}

// Feeds `text`'s tokens one at a time; returns the released pieces joined and whether it stopped.
std::pair<std::string, bool> run(const std::string& text, const std::vector<std::string>& stop, std::vector<std::string>* pieces = nullptr) {
  const Tokenizer& tokenizer = demo_tokenizer();
  const std::vector<int32_t> prompt = tokenizer.encode("Prompt:", true);
  OutputText out(tokenizer, prompt, stop);
  std::string joined;
  for (int32_t id : tokenizer.encode(text, false)) {
    const std::string piece = out.push(id);
    if (pieces) pieces->push_back(piece);
    joined += piece;
    if (out.stopped()) break;
  }
  joined += out.finish();
  CHECK(joined == out.text());
  return {joined, out.stopped()};
}

}  // namespace

TEST_CASE("without stop strings the text is the decoded continuation", "[serve]") {
  const auto [text, stopped] = run(" Hello world. Goodbye world.", {});
  CHECK(text == " Hello world. Goodbye world.");
  CHECK_FALSE(stopped);
}

TEST_CASE("a stop string ends the text before it, also when it spans tokens", "[serve]") {
  CHECK(run(" Hello world. Goodbye world.", {"Goodbye"}) == std::make_pair(std::string(" Hello world. "), true));
  CHECK(run(" Hello world. Goodbye world.", {"d. G", "zzz"}) == std::make_pair(std::string(" Hello worl"), true));
  CHECK(run(" Hello world.", {"world!"}) == std::make_pair(std::string(" Hello world."), false));
}

TEST_CASE("text that may start a stop string is held back until it cannot", "[serve]") {
  std::vector<std::string> pieces;
  const auto [text, stopped] = run(" one two three four", {" four", " tw0"}, &pieces);
  CHECK(text == " one two three");
  CHECK(stopped);
  // No piece released anything of the stop string.
  std::string released;
  for (const std::string& p : pieces) released += p;
  CHECK(released.find("four") == std::string::npos);
}
