#include "serve/openai_request.h"

#include <cmath>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "util/utf8.h"

namespace specd::serve {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& param, const std::string& what) { throw RequestError(400, param, param + ": " + what); }

[[noreturn]] void unsupported(const std::string& param, const std::string& what) {
  throw RequestError(400, param, param + ": " + what + " (not supported by specd serve)");
}

const char* type_name(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "a number";
  }
}

std::string text_of(const json& value, const std::string& param) {
  if (!value.is_string()) bad(param, std::string("must be a string, not ") + type_name(value));
  const std::string text = value.get<std::string>();
  if (!is_valid_utf8(text)) bad(param, "is not valid UTF-8");
  return text;
}

bool flag_of(const json& value, const std::string& param) {
  if (!value.is_boolean()) bad(param, std::string("must be a boolean, not ") + type_name(value));
  return value.get<bool>();
}

double number_of(const json& value, const std::string& param, double low, double high) {
  if (!value.is_number()) bad(param, std::string("must be a number, not ") + type_name(value));
  const double x = value.get<double>();
  if (!std::isfinite(x) || x < low || x > high) bad(param, "must be in [" + json(low).dump() + ", " + json(high).dump() + "]");
  return x;
}

int64_t integer_of(const json& value, const std::string& param, int64_t low, int64_t high) {
  if (!value.is_number_integer()) bad(param, std::string("must be an integer, not ") + type_name(value));
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    bad(param, "must be at most " + std::to_string(high));
  const int64_t x = value.get<int64_t>();
  if (x < low || x > high) bad(param, "must be in [" + std::to_string(low) + ", " + std::to_string(high) + "]");
  return x;
}

// The text of a chat message's content: a string, or OpenAI's array of {"type": "text", "text"} parts.
std::string content_of(const json& value, const std::string& param) {
  if (value.is_string()) return text_of(value, param);
  if (!value.is_array()) bad(param, std::string("must be a string or an array of text parts, not ") + type_name(value));
  std::string text;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string part = param + "[" + std::to_string(i) + "]";
    const json& p = value[i];
    if (!p.is_object()) bad(part, std::string("must be an object, not ") + type_name(p));
    if (!p.contains("type") || text_of(p["type"], part + ".type") != "text") unsupported(part + ".type", "only text parts");
    if (!p.contains("text")) bad(part + ".text", "is missing");
    for (const auto& [key, unused] : p.items())
      if (key != "type" && key != "text") bad(part + "." + key, "is not a field of a text part");
    text += text_of(p["text"], part + ".text");
  }
  return text;
}

std::vector<ChatMessage> messages_of(const json& value) {
  if (!value.is_array()) bad("messages", std::string("must be an array, not ") + type_name(value));
  if (value.empty()) bad("messages", "must hold at least one message");
  std::vector<ChatMessage> messages;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string param = "messages[" + std::to_string(i) + "]";
    const json& m = value[i];
    if (!m.is_object()) bad(param, std::string("must be an object, not ") + type_name(m));
    if (!m.contains("role")) bad(param + ".role", "is missing");
    ChatMessage message;
    message.role = text_of(m["role"], param + ".role");
    if (message.role != "system" && message.role != "user" && message.role != "assistant" && message.role != "tool" &&
        message.role != "developer")
      bad(param + ".role", "must be system, developer, user, assistant or tool, not '" + message.role + "'");
    if (message.role == "developer") message.role = "system";  // OpenAI's newer name for the system role
    for (const auto& [key, field] : m.items()) {
      if (key == "role") continue;
      if (key == "content") {
        if (!field.is_null()) message.content = content_of(field, param + ".content");
      } else if (key == "name" || key == "tool_call_id") {
        text_of(field, param + "." + key);
      } else if (key == "tool_calls" || key == "function_call" || key == "refusal" || key == "audio") {
        if (!field.is_null()) unsupported(param + "." + key, "tool calls, refusals and audio");
      } else {
        bad(param + "." + key, "is not a field of a chat message");
      }
    }
    if (!m.contains("content") || m["content"].is_null()) bad(param + ".content", "is missing");
    messages.push_back(std::move(message));
  }
  return messages;
}

void read_prompt(const json& value, CompletionRequest& request) {
  if (value.is_string()) {
    request.prompt = text_of(value, "prompt");
  } else if (value.is_array() && value.size() == 1 && value[0].is_string()) {
    request.prompt = text_of(value[0], "prompt[0]");
  } else if (value.is_array() && !value.empty() && value[0].is_number()) {
    for (size_t i = 0; i < value.size(); ++i)
      request.prompt_tokens.push_back(
          static_cast<int32_t>(integer_of(value[i], "prompt[" + std::to_string(i) + "]", 0, std::numeric_limits<int32_t>::max())));
  } else if (value.is_array() && value.size() > 1) {
    unsupported("prompt", "one prompt per request (send the prompts as separate requests; they are batched)");
  } else {
    bad("prompt", std::string("must be a string, an array of one string or an array of token ids, not ") +
                      (value.is_array() ? "an empty array" : type_name(value)));
  }
  if (request.prompt_tokens.empty() && request.prompt.empty()) bad("prompt", "is empty");
}

std::vector<std::string> stop_of(const json& value) {
  std::vector<std::string> stop;
  if (value.is_null()) return stop;
  if (value.is_string()) {
    stop.push_back(text_of(value, "stop"));
  } else if (value.is_array()) {
    if (value.size() > 4) bad("stop", "holds at most 4 sequences");
    for (size_t i = 0; i < value.size(); ++i) stop.push_back(text_of(value[i], "stop[" + std::to_string(i) + "]"));
  } else {
    bad("stop", std::string("must be a string or an array of strings, not ") + type_name(value));
  }
  for (const std::string& s : stop)
    if (s.empty()) bad("stop", "holds an empty string");
  return stop;
}

SpeculativeRequest speculative_of(const json& value) {
  if (!value.is_object()) bad("speculative", std::string("must be an object, not ") + type_name(value));
  SpeculativeRequest spec;
  for (const auto& [key, field] : value.items()) {
    const std::string param = "speculative." + key;
    if (key == "method") spec.method = text_of(field, param);
    else if (key == "allow_lossy") spec.allow_lossy = flag_of(field, param);
    else if (key == "max_draft") spec.max_draft = static_cast<int32_t>(integer_of(field, param, 0, 64));
    else bad(param, "is not a field of speculative (method, allow_lossy, max_draft)");
  }
  return spec;
}

}  // namespace

CompletionRequest parse_completion_request(const std::string& body, bool chat) {
  json root = json::parse(body, nullptr, false);
  if (root.is_discarded()) throw RequestError(400, "", "the request body is not valid JSON");
  if (!root.is_object()) throw RequestError(400, "", std::string("the request body must be a JSON object, not ") + type_name(root));
  CompletionRequest request;
  request.chat = chat;
  const char* body_field = chat ? "messages" : "prompt";
  if (!root.contains(body_field)) bad(body_field, "is missing");
  // Fields OpenAI defines that change nothing here, accepted as clients send them.
  static const std::set<std::string> ignored{"user", "metadata", "store", "service_tier", "parallel_tool_calls"};
  for (const auto& [key, value] : root.items()) {
    if (key == "model") {
      request.model = text_of(value, key);
    } else if (key == (chat ? "messages" : "prompt")) {
      if (chat) request.messages = messages_of(value);
      else read_prompt(value, request);
    } else if (key == "max_tokens" || (chat && key == "max_completion_tokens")) {
      if (!value.is_null()) request.max_tokens = integer_of(value, key, 1, std::numeric_limits<int32_t>::max());
    } else if (key == "temperature") {
      if (!value.is_null()) request.temperature = number_of(value, key, 0.0, 2.0);
    } else if (key == "top_p") {
      if (!value.is_null()) request.top_p = number_of(value, key, 0.0, 1.0);
      if (request.top_p == 0.0) bad(key, "must be above 0");
    } else if (key == "top_k") {
      if (!value.is_null()) request.top_k = integer_of(value, key, -1, std::numeric_limits<int32_t>::max());
      if (request.top_k < 0) request.top_k = 0;  // vLLM's -1 for off
    } else if (key == "seed") {
      if (!value.is_null()) request.seed = static_cast<uint64_t>(integer_of(value, key, 0, std::numeric_limits<int64_t>::max()));
    } else if (key == "stop") {
      request.stop = stop_of(value);
    } else if (key == "stream") {
      if (!value.is_null()) request.stream = flag_of(value, key);
    } else if (key == "stream_options") {
      if (value.is_null()) continue;
      if (!value.is_object()) bad(key, std::string("must be an object, not ") + type_name(value));
      for (const auto& [option, field] : value.items()) {
        if (option == "include_usage") request.include_usage = flag_of(field, key + "." + option);
        else bad(key + "." + option, "is not a stream option (include_usage)");
      }
    } else if (key == "n" || key == "best_of") {
      if (!value.is_null() && integer_of(value, key, 1, 128) != 1) unsupported(key, "one choice per request; send the requests separately");
    } else if (key == "logprobs" || key == "top_logprobs") {
      if (!value.is_null() && !(value.is_boolean() && !value.get<bool>())) unsupported(key, "log-probabilities");
    } else if (key == "echo") {
      if (!value.is_null() && flag_of(value, key)) unsupported(key, "echoing the prompt");
    } else if (key == "presence_penalty" || key == "frequency_penalty") {
      if (!value.is_null() && number_of(value, key, -2.0, 2.0) != 0.0) unsupported(key, "penalties (they would change the target's distribution)");
    } else if (key == "logit_bias") {
      if (!value.is_null() && !(value.is_object() && value.empty())) unsupported(key, "logit biases");
    } else if (key == "suffix") {
      if (!value.is_null()) unsupported(key, "insertion");
    } else if (chat && (key == "tools" || key == "tool_choice" || key == "functions" || key == "function_call" ||
                        key == "response_format")) {
      if (!value.is_null()) unsupported(key, "tools and structured output");
    } else if (key == "speculative") {
      request.speculative = speculative_of(value);
    } else if (ignored.count(key) == 0) {
      bad(key, std::string("is not a field of a ") + (chat ? "chat completion" : "completion") + " request");
    }
  }
  return request;
}

}  // namespace specd::serve
