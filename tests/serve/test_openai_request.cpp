// The OpenAI request parser: what it takes, and that every refusal is a 400 (or 404) naming the
// field at fault.
#include <catch2/catch.hpp>

#include "serve/openai_request.h"

using specd::serve::CompletionRequest;
using specd::serve::parse_completion_request;
using specd::serve::RequestError;

namespace {

// The status and param of the refusal of `body`, or {0, ""} when it parses.
std::pair<int, std::string> refusal(const std::string& body, bool chat = false) {
  try {
    parse_completion_request(body, chat);
  } catch (const RequestError& e) {
    return {e.status, e.param};
  }
  return {0, ""};
}

}  // namespace

TEST_CASE("a completion request's fields are read as OpenAI defines them", "[serve]") {
  const CompletionRequest r = parse_completion_request(
      R"({"model": "m", "prompt": "hi", "max_tokens": 5, "temperature": 0, "top_p": 0.5, "seed": 3, "stop": ["\n", "END"],
          "stream": true, "stream_options": {"include_usage": true}, "user": "u", "logprobs": null, "n": 1,
          "speculative": {"method": "csd", "allow_lossy": true, "max_draft": 4}})",
      false);
  CHECK(r.model == "m");
  CHECK(r.prompt == "hi");
  CHECK(*r.max_tokens == 5);
  CHECK(r.temperature == 0.0);
  CHECK(r.top_p == 0.5);
  CHECK(*r.seed == 3);
  CHECK(r.stop == std::vector<std::string>{"\n", "END"});
  CHECK(r.stream);
  CHECK(r.include_usage);
  CHECK(*r.speculative.method == "csd");
  CHECK(r.speculative.allow_lossy);
  CHECK(*r.speculative.max_draft == 4);

  const CompletionRequest defaults = parse_completion_request(R"({"prompt": ["one prompt"]})", false);
  CHECK(defaults.prompt == "one prompt");
  CHECK(defaults.temperature == 1.0);  // OpenAI's default, not greedy
  CHECK(!defaults.max_tokens);
  CHECK(!defaults.speculative.method);
  CHECK(!defaults.speculative.allow_lossy);

  const CompletionRequest ids = parse_completion_request(R"({"prompt": [1, 2, 3], "stop": "x"})", false);
  CHECK(ids.prompt_tokens == std::vector<int32_t>{1, 2, 3});
  CHECK(ids.stop == std::vector<std::string>{"x"});
}

TEST_CASE("a chat request's messages: text parts joined, developer read as system", "[serve]") {
  const CompletionRequest r = parse_completion_request(
      R"({"messages": [{"role": "developer", "content": "Be brief."},
                       {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "name": "x"},
                       {"role": "assistant", "content": "ok"}],
          "max_completion_tokens": 9})",
      true);
  REQUIRE(r.messages.size() == 3);
  CHECK(r.messages[0].role == "system");
  CHECK(r.messages[0].content == "Be brief.");
  CHECK(r.messages[1].content == "ab");
  CHECK(*r.max_tokens == 9);
}

TEST_CASE("every malformed or unsupported request is refused naming its field", "[serve]") {
  using Case = std::tuple<std::string, bool, int, std::string>;
  const std::vector<Case> cases{
      {"not json", false, 400, ""},
      {"[1, 2]", false, 400, ""},
      {R"({})", false, 400, "prompt"},
      {R"({"prompt": ""})", false, 400, "prompt"},
      {R"({"prompt": 3})", false, 400, "prompt"},
      {R"({"prompt": ["a", "b"]})", false, 400, "prompt"},
      {R"({"prompt": [1, -2]})", false, 400, "prompt[1]"},
      {R"({"prompt": "\u00ff", "temperature": "hot"})", false, 400, "temperature"},
      {R"({"prompt": "x", "temperature": 2.5})", false, 400, "temperature"},
      {R"({"prompt": "x", "top_p": 0})", false, 400, "top_p"},
      {R"({"prompt": "x", "max_tokens": 0})", false, 400, "max_tokens"},
      {R"({"prompt": "x", "max_tokens": 1.5})", false, 400, "max_tokens"},
      {R"({"prompt": "x", "max_tokens": 18446744073709551615})", false, 400, "max_tokens"},
      {R"({"prompt": "x", "seed": -1})", false, 400, "seed"},
      {R"({"prompt": "x", "stop": ["a", "b", "c", "d", "e"]})", false, 400, "stop"},
      {R"({"prompt": "x", "stop": [""]})", false, 400, "stop"},
      {R"({"prompt": "x", "stop": [1]})", false, 400, "stop[0]"},
      {R"({"prompt": "x", "n": 2})", false, 400, "n"},
      {R"({"prompt": "x", "best_of": 3})", false, 400, "best_of"},
      {R"({"prompt": "x", "logprobs": 1})", false, 400, "logprobs"},
      {R"({"prompt": "x", "echo": true})", false, 400, "echo"},
      {R"({"prompt": "x", "presence_penalty": 0.5})", false, 400, "presence_penalty"},
      {R"({"prompt": "x", "logit_bias": {"1": 5}})", false, 400, "logit_bias"},
      {R"({"prompt": "x", "suffix": "y"})", false, 400, "suffix"},
      {R"({"prompt": "x", "stream": "yes"})", false, 400, "stream"},
      {R"({"prompt": "x", "stream_options": {"other": 1}})", false, 400, "stream_options.other"},
      {R"({"prompt": "x", "speculative": "csd"})", false, 400, "speculative"},
      {R"({"prompt": "x", "speculative": {"method": 1}})", false, 400, "speculative.method"},
      {R"({"prompt": "x", "speculative": {"max_draft": 65}})", false, 400, "speculative.max_draft"},
      {R"({"prompt": "x", "speculative": {"gamma": 2}})", false, 400, "speculative.gamma"},
      {R"({"prompt": "x", "frobnicate": 1})", false, 400, "frobnicate"},
      {R"({"prompt": "x", "messages": []})", false, 400, "messages"},
      {R"({"messages": "hi"})", true, 400, "messages"},
      {R"({"messages": []})", true, 400, "messages"},
      {R"({"messages": [{"content": "hi"}]})", true, 400, "messages[0].role"},
      {R"({"messages": [{"role": "wizard", "content": "hi"}]})", true, 400, "messages[0].role"},
      {R"({"messages": [{"role": "user"}]})", true, 400, "messages[0].content"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", true, 400, "messages[0].content[0].type"},
      {R"({"messages": [{"role": "user", "content": "hi", "mood": 1}]})", true, 400, "messages[0].mood"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "tools": [{}]})", true, 400, "tools"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "prompt": "x"})", true, 400, "prompt"},
  };
  for (const auto& [body, chat, status, param] : cases) {
    INFO(body);
    const auto [got_status, got_param] = refusal(body, chat);
    CHECK(got_status == status);
    CHECK(got_param == param);
  }
  // Text that is not UTF-8 is refused, not passed to the tokenizer.
  CHECK(refusal("{\"prompt\": \"\xff\"}").first == 400);
}
