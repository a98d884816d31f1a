#include "serve/request_plan.h"

#include <random>

#include "model/llama_model.h"
#include "util/error.h"

namespace specd::serve {
namespace {

std::string method_list(const Deployment& deployment, bool lossy) {
  std::string list;
  for (const auto& [name, method] : deployment.methods)
    if (method.lossless != lossy) list += (list.empty() ? "" : ", ") + name;
  return list.empty() ? "none" : list;
}

std::vector<int32_t> prompt_tokens(const Deployment& deployment, const CompletionRequest& request) {
  const int64_t vocab = deployment.target->config().vocab_size;
  if (request.chat) {
    std::string text;
    try {
      text = deployment.chat_template.render(request.messages);
    } catch (const InputError& e) {
      throw RequestError(400, "messages", e.what());
    }
    return deployment.tokenizer->encode(text, deployment.chat_template.encode_with_special_tokens());
  }
  if (!request.prompt_tokens.empty()) {
    for (size_t i = 0; i < request.prompt_tokens.size(); ++i)
      if (request.prompt_tokens[i] >= vocab)
        throw RequestError(400, "prompt", "prompt[" + std::to_string(i) + "]: token id " + std::to_string(request.prompt_tokens[i]) +
                                              " is outside the vocabulary of " + std::to_string(vocab));
    return request.prompt_tokens;
  }
  return deployment.tokenizer->encode(request.prompt, true);
}

}  // namespace

RequestPlan plan_request(const Deployment& deployment, const CompletionRequest& request) {
  if (!request.model.empty() && request.model != deployment.model_id)
    throw RequestError(404, "model", "model: '" + request.model + "' is not served here (GET /v1/models lists '" + deployment.model_id + "')",
                       "not_found_error");
  RequestPlan plan;
  plan.prompt = prompt_tokens(deployment, request);
  const char* prompt_field = request.chat ? "messages" : "prompt";
  const int64_t context = deployment.target->context_length();
  const int64_t prompt_length = static_cast<int64_t>(plan.prompt.size());
  if (prompt_length == 0) throw RequestError(400, prompt_field, std::string(prompt_field) + ": encodes to no tokens");
  if (prompt_length >= context)
    throw RequestError(400, prompt_field, std::string(prompt_field) + ": " + std::to_string(prompt_length) +
                                              " tokens leave no room in the model's context of " + std::to_string(context) + " tokens");
  const int64_t room = context - prompt_length;
  int64_t max_tokens = 0;
  if (request.max_tokens) {
    max_tokens = *request.max_tokens;
    if (max_tokens > deployment.max_tokens)
      throw RequestError(400, "max_tokens", "max_tokens: " + std::to_string(max_tokens) + " is past this server's cap of " +
                                                std::to_string(deployment.max_tokens) + " (specd serve --max-tokens)");
    if (max_tokens > room)
      throw RequestError(400, "max_tokens", "max_tokens: the prompt's " + std::to_string(prompt_length) + " tokens and " +
                                                std::to_string(max_tokens) + " new ones pass the model's context of " +
                                                std::to_string(context) + " tokens");
  } else {
    max_tokens = std::min<int64_t>(request.chat ? deployment.max_tokens : 16, room);
  }
  plan.generate.max_new_tokens = max_tokens;
  plan.generate.stop_tokens = deployment.stop_tokens;
  plan.generate.sampling.temperature = request.temperature;
  plan.generate.sampling.top_p = request.top_p;
  plan.generate.sampling.top_k = static_cast<int>(request.top_k);
  plan.generate.sampling.seed = request.seed ? *request.seed : std::random_device{}();
  plan.stop = request.stop;

  const SpeculativeRequest& spec = request.speculative;
  plan.method = spec.method ? *spec.method : deployment.default_method;
  const auto served = deployment.methods.find(plan.method);
  if (served == deployment.methods.end())
    throw RequestError(400, "speculative.method", "speculative.method: '" + plan.method + "' is not served here (lossless: " +
                                                      method_list(deployment, false) + "; lossy, with allow_lossy: " +
                                                      method_list(deployment, true) + ")");
  if (!served->second.lossless && !spec.allow_lossy)
    throw RequestError(400, "speculative.allow_lossy", "speculative.allow_lossy: '" + plan.method +
                                                           "' may change the target's output; set allow_lossy to true to use it");
  const MethodContext method_context{*deployment.target, deployment.draft, plan.generate.sampling, served->second.options,
                                     deployment.artifact.get(), deployment.artifact_name};
  try {
    plan.policy = std::make_unique<Policy>(make_policy(plan.method, method_context, deployment.shared));
  } catch (const InputError& e) {
    throw RequestError(400, "speculative.method", e.what());
  }
  if (spec.max_draft) {
    plan.policy->max_nodes = std::min(plan.policy->max_nodes, *spec.max_draft);
    plan.policy->max_depth = std::min(plan.policy->max_depth, *spec.max_draft);
  }
  return plan;
}

}  // namespace specd::serve
