#pragma once
// The body of POST /v1/completions and /v1/chat/completions as OpenAI defines it, checked field by
// field: a wrong type, a value out of range, a field specd does not implement (logprobs, n > 1,
// tools) or one no OpenAI client sends is a 400 naming the field, never a silent default.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tokenizer/chat_template.h"

namespace specd::serve {

// An error a client gets as OpenAI's {"error": {message, type, param, code}} object.
class RequestError : public std::runtime_error {
 public:
  RequestError(int status, std::string param, const std::string& message, std::string type = "invalid_request_error")
      : std::runtime_error(message), status(status), param(std::move(param)), type(std::move(type)) {}
  int status;
  std::string param;  // the field at fault ("messages[1].role"), "" when none
  std::string type;
};

// specd's extension object "speculative": how this request is decoded.
struct SpeculativeRequest {
  std::optional<std::string> method;  // absent: the server's default (lossless)
  bool allow_lossy = false;           // a lossy method runs only when the request opts in
  std::optional<int32_t> max_draft;   // caps the drafted tokens per step (0: none, AR's output)
};

struct CompletionRequest {
  bool chat = false;
  std::string model;                   // "" when the client named none
  std::string prompt;                  // /v1/completions: the text
  std::vector<int32_t> prompt_tokens;  // /v1/completions: token ids instead of text
  std::vector<ChatMessage> messages;   // /v1/chat/completions
  std::optional<int64_t> max_tokens;   // absent: completions 16 (OpenAI's default), chat the server's cap
  double temperature = 1.0;            // OpenAI's default; 0 is greedy
  double top_p = 1.0;
  int64_t top_k = 0;                   // vLLM's extension; 0 is off
  std::optional<uint64_t> seed;
  std::vector<std::string> stop;       // at most 4 strings, none empty
  bool stream = false;
  bool include_usage = false;          // stream_options.include_usage: a last chunk with usage
  SpeculativeRequest speculative;
};

// Parses and checks a request body. RequestError (400) naming the field for malformed JSON, a
// wrong type, a value out of range, an unknown field or one specd does not implement.
CompletionRequest parse_completion_request(const std::string& body, bool chat);

}  // namespace specd::serve
