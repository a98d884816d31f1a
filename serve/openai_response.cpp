#include "serve/openai_response.h"

#include <atomic>
#include <cstdio>
#include <ctime>
#include <random>

namespace specd::serve {
namespace {

using nlohmann::json;

json header_fields(const ResponseHeader& h, bool chunk) {
  return {{"id", h.id},
          {"object", h.chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
          {"created", h.created},
          {"model", h.model}};
}

}  // namespace

ResponseHeader new_response_header(const std::string& model, bool chat) {
  // Unique within the process (the counter) and across restarts (the random prefix).
  static const uint64_t prefix = std::random_device{}();
  static std::atomic<uint64_t> counter{0};
  char id[64];
  std::snprintf(id, sizeof id, "%s-%08llx%08llx", chat ? "chatcmpl" : "cmpl", static_cast<unsigned long long>(prefix & 0xffffffffu),
                static_cast<unsigned long long>(counter++));
  return ResponseHeader{id, static_cast<int64_t>(std::time(nullptr)), model, chat};
}

json error_body(const RequestError& error) {
  return {{"error",
           {{"message", error.what()},
            {"type", error.type},
            {"param", error.param.empty() ? json(nullptr) : json(error.param)},
            {"code", error.status}}}};
}

json usage_json(int64_t prompt_tokens, int64_t completion_tokens) {
  return {{"prompt_tokens", prompt_tokens}, {"completion_tokens", completion_tokens}, {"total_tokens", prompt_tokens + completion_tokens}};
}

json completion_body(const ResponseHeader& header, const std::string& text, const std::string& finish_reason, int64_t prompt_tokens,
                     int64_t completion_tokens, const SpeculativeMetrics& metrics) {
  json body = header_fields(header, false);
  json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish_reason}};
  if (header.chat) choice["message"] = {{"role", "assistant"}, {"content", text}};
  else choice["text"] = text;
  body["choices"] = json::array({choice});
  body["usage"] = usage_json(prompt_tokens, completion_tokens);
  body["speculative"] = metrics.to_json();
  return body;
}

json stream_chunk(const ResponseHeader& header, const std::string& text, bool first, const ChunkEnd* end) {
  json body = header_fields(header, true);
  json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", end ? json(end->finish_reason) : json(nullptr)}};
  if (header.chat) {
    json delta = json::object();
    if (first) delta["role"] = "assistant";
    if (!text.empty() || first) delta["content"] = text;
    choice["delta"] = delta;
  } else {
    choice["text"] = text;
  }
  body["choices"] = json::array({choice});
  if (end) {
    body["usage"] = usage_json(end->prompt_tokens, end->completion_tokens);
    body["speculative"] = end->metrics.to_json();
  }
  return body;
}

json usage_chunk(const ResponseHeader& header, const ChunkEnd& end) {
  json body = header_fields(header, true);
  body["choices"] = json::array();
  body["usage"] = usage_json(end.prompt_tokens, end.completion_tokens);
  body["speculative"] = end.metrics.to_json();
  return body;
}

json models_body(const std::string& model, int64_t created) {
  return {{"object", "list"}, {"data", json::array({{{"id", model}, {"object", "model"}, {"created", created}, {"owned_by", "specd"}}})}};
}

}  // namespace specd::serve
