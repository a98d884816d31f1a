// Chat templates: the plain template and the families' recognition here; their rendering of real
// templates against Hugging Face's Jinja engine in the hidden [chat-live] case, which
// tests/chat_template.cmake runs with the reference's renders.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "test_helpers.h"
#include "tokenizer/chat_template.h"

using namespace specd;

namespace {

std::vector<ChatMessage> messages_of(const nlohmann::json& conversation) {
  std::vector<ChatMessage> messages;
  for (const auto& m : conversation) messages.push_back({m.at("role").get<std::string>(), m.at("content").get<std::string>()});
  return messages;
}

}  // namespace

TEST_CASE("chat template: the plain template, and a config without a template gets it", "[chat]") {
  const ChatTemplate plain(ChatFamily::Plain);
  CHECK(plain.render({{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello."}, {"user", "Bye"}}) ==
        "System: Be brief.\n\nUser: Hi\n\nAssistant: Hello.\n\nUser: Bye\n\nAssistant:");
  test::ScopedTempDir dir("chat");
  test::write_text_file(dir.file("tokenizer_config.json"), R"({"bos_token": "<s>"})");
  CHECK(ChatTemplate::from_config(dir.file("tokenizer_config.json")).family() == ChatFamily::Plain);
  CHECK(test::input_error_message([&] { plain.render({}); }) == "messages: a conversation needs at least one message");
  CHECK(test::input_error_message([&] { plain.render({{"robot", "x"}}); }) ==
        "messages: message 0 has role 'robot' (system, user, assistant or tool)");
}

TEST_CASE("chat template: a template of no known family is refused naming the file", "[chat]") {
  test::ScopedTempDir dir("chat");
  const std::string path = dir.file("tokenizer_config.json");
  test::write_text_file(path, R"({"chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}"})");
  CHECK(test::input_error_message([&] { ChatTemplate::from_config(path); }) ==
        path + ": chat_template is of no family specd renders (Llama-3, Llama-3.2, Qwen2.5, Qwen3, Mistral); the plain template needs none");
  test::write_text_file(path, R"({"chat_template": [{"name": "default", "template": "x"}]})");
  CHECK(test::input_error_message([&] { ChatTemplate::from_config(path); }) ==
        path + ": chat_template is not one template (a list of named templates is not supported)");
}

TEST_CASE("chat template renders as Hugging Face's Jinja engine does", "[.][chat-live]") {
  const char* config = std::getenv("SPECD_CHAT_CONFIG");
  const char* conversations = std::getenv("SPECD_CHAT_CONVERSATIONS");
  const char* renders = std::getenv("SPECD_CHAT_RENDERS");
  if (!config || !conversations || !renders)
    FAIL("SPECD_CHAT_CONFIG / SPECD_CHAT_CONVERSATIONS / SPECD_CHAT_RENDERS not set: nothing to compare (ctest's chat-template.* tests set them)");
  const ChatTemplate chat = ChatTemplate::from_config(config);
  CHECK(chat.family() != ChatFamily::Plain);
  const nlohmann::json all = nlohmann::json::parse(test::read_text_file(conversations));
  std::ifstream expected(renders);
  std::string line;
  size_t i = 0;
  for (; std::getline(expected, line); ++i) {
    REQUIRE(i < all.size());
    CAPTURE(config, i);
    const nlohmann::json reference = nlohmann::json::parse(line);
    if (reference.is_object())  // the template refuses this conversation: so must specd
      CHECK_THROWS_AS(chat.render(messages_of(all[i])), InputError);
    else
      CHECK(chat.render(messages_of(all[i])) == reference.get<std::string>());
  }
  CHECK(i == all.size());
}
