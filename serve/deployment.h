#pragma once
// What a server deploys: the pair, its tokenizer and chat template, the artifact, and the methods a
// request may ask for with the options each runs with (the command line's, with the artifact's
// swept thresholds). Built once at start-up by `specd serve`; read-only afterwards, except the
// correction memory, which only the decoding thread touches.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "methods/method_registry.h"
#include "speculative/draft_budget.h"
#include "speculative/method_options.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace specd {
class LlamaModel;
struct Artifact;
}  // namespace specd

namespace specd::serve {

struct ServedMethod {
  MethodOptions options;  // as deployed: flags, then the artifact's thresholds
  bool lossless = true;
};

struct Deployment {
  std::string model_id;  // the name /v1/models lists and responses carry
  std::shared_ptr<const LlamaModel> target, draft;
  std::shared_ptr<const Tokenizer> tokenizer;
  std::vector<int32_t> stop_tokens;
  ChatTemplate chat_template{ChatFamily::Plain};
  std::shared_ptr<const Artifact> artifact;
  std::string artifact_name = "artifact";  // how errors name it
  std::string default_method = "ar";       // lossless: what a request that names none gets
  std::map<std::string, ServedMethod> methods;
  // Built once, shared by all requests (CSD's memory is updated online, on the decoding thread).
  SharedParts shared;
  // The target's and the draft's forward cost at a few row counts, measured at start-up: the
  // requests' draft budgets and the batch planner start from them. Empty: not measured.
  CostCurve target_cost, draft_cost;
  int64_t max_tokens = 512;  // the most new tokens a request may ask for (and a chat's default)
  // Where the models run (machine_json): /metrics names it, since the server's speeds are its.
  nlohmann::json machine;
};

}  // namespace specd::serve
