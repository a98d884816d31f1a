#pragma once
// The server's tests' deployment (the small demo pair, the lossless methods) and what they check its
// answers against: one request decoded alone by the CLI's autoregressive loop.
#include <chrono>
#include <string>
#include <vector>

#include "decode/autoregressive.h"
#include "decode/text_stream.h"
#include "model/llama_model.h"
#include "serve/deployment.h"
#include "serve/request_plan.h"
#include "serve/scheduler.h"

namespace specd::test {

inline serve::Deployment demo_deployment() {
  const std::string dir = std::string(SPECD_SOURCE_DIR) + "/data/models/demo-target";
  serve::Deployment d;
  d.model_id = "demo-target";
  DeviceSpec device;
  device.threads = 1;
  d.target = LlamaModel::load(dir, device);
  d.draft = LlamaModel::load(std::string(SPECD_SOURCE_DIR) + "/data/models/demo-draft", device);
  d.tokenizer = std::make_shared<Tokenizer>(Tokenizer::from_file(dir + "/tokenizer.json"));
  for (int64_t id : d.target->config().eos_token_ids) d.stop_tokens.push_back(static_cast<int32_t>(id));
  for (const char* method : {"ar", "sd", "pld", "sam"}) {
    serve::ServedMethod served;
    served.options.adaptive_budget = false;  // no cost curve to measure in a unit test
    d.methods[method] = served;
  }
  return d;
}

inline serve::CompletionRequest greedy(const std::string& prompt, const std::string& method, int64_t max_tokens) {
  serve::CompletionRequest r;
  r.prompt = prompt;
  r.max_tokens = max_tokens;
  r.temperature = 0;
  r.speculative.method = method;
  return r;
}

// The whole text of a job.
inline serve::Job::Progress wait(serve::Job& job) {
  serve::Job::Progress all = job.take(std::chrono::milliseconds(0));
  while (!all.done) {
    serve::Job::Progress p = job.take(std::chrono::milliseconds(1000));
    p.text = all.text + p.text;
    all = p;
  }
  return all;
}

inline std::string ar_text(const serve::Deployment& d, const std::string& prompt, int64_t max_tokens) {
  const std::vector<int32_t> ids = d.tokenizer->encode(prompt, true);
  GenerateOptions options;
  options.max_new_tokens = max_tokens;
  options.stop_tokens = d.stop_tokens;
  const GenerateOutput out = generate_autoregressive(*d.target, ids, options);
  TextStream stream(*d.tokenizer, ids);
  std::string text;
  for (int32_t t : out.tokens) text += stream.push(t);
  return text + stream.finish();
}

}  // namespace specd::test
