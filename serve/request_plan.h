#pragma once
// From a checked request to what the decoding thread runs: the prompt's token ids (a chat
// rendered by the model's template), the sampling and stop settings, and the request's own
// speculative policy. Every refusal is a RequestError naming the field: an unknown model or
// method, a lossy method without an artifact that calibrates it or without the request's opt-in,
// a prompt past the context, max_tokens past the server's cap.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "decode/autoregressive.h"
#include "methods/method_registry.h"
#include "serve/deployment.h"
#include "serve/openai_request.h"

namespace specd::serve {

struct RequestPlan {
  std::vector<int32_t> prompt;
  GenerateOptions generate;         // budget, sampling, stop tokens (on_token is the scheduler's)
  std::vector<std::string> stop;    // stop strings
  std::string method;
  std::unique_ptr<Policy> policy;   // owns the drafter and acceptor the session borrows
};

RequestPlan plan_request(const Deployment& deployment, const CompletionRequest& request);

}  // namespace specd::serve
