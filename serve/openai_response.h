#pragma once
// The JSON bodies the server answers with, in OpenAI's shapes: completions and chat completions
// (whole, or as server-sent-event chunks), the model list and error objects. specd's extension is
// one field, "speculative", beside "usage": what the request's speculation did.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "serve/openai_request.h"
#include "serve/request_metrics.h"

namespace specd::serve {

// Identifies one response: the same in every chunk of a stream.
struct ResponseHeader {
  std::string id;  // cmpl-... or chatcmpl-...
  int64_t created = 0;
  std::string model;
  bool chat = false;
};

ResponseHeader new_response_header(const std::string& model, bool chat);

nlohmann::json error_body(const RequestError& error);

nlohmann::json usage_json(int64_t prompt_tokens, int64_t completion_tokens);

// A whole response (stream: false).
nlohmann::json completion_body(const ResponseHeader& header, const std::string& text, const std::string& finish_reason,
                               int64_t prompt_tokens, int64_t completion_tokens, const SpeculativeMetrics& metrics);

// One chunk of a stream: `text` new, `first` adds the chat's role, a finish reason ends the
// choice (and then `end` carries usage and the speculative metrics).
struct ChunkEnd {
  std::string finish_reason;
  int64_t prompt_tokens = 0, completion_tokens = 0;
  SpeculativeMetrics metrics;
};
nlohmann::json stream_chunk(const ResponseHeader& header, const std::string& text, bool first, const ChunkEnd* end);
// OpenAI's stream_options.include_usage chunk: no choices, the usage (and the metrics).
nlohmann::json usage_chunk(const ResponseHeader& header, const ChunkEnd& end);

nlohmann::json models_body(const std::string& model, int64_t created);

}  // namespace specd::serve
