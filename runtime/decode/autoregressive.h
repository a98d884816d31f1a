#pragma once
// Plain autoregressive decoding: the baseline every speculative method must match. It runs as
// the speculative loop (decode/speculative.h) with nothing drafted.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "sampling/sampler.h"

namespace specd {

class LlamaModel;
class Drafter;
class Acceptor;

struct GenerateOptions {
  int64_t max_new_tokens = 128;
  SamplingParams sampling;
  std::vector<int32_t> stop_tokens;              // usually the model's EOS ids
  std::function<void(int32_t token)> on_token;  // called as each token is chosen
};

struct GenerateStats {
  int64_t prompt_tokens = 0;
  int64_t new_tokens = 0;
  double prefill_ms = 0;  // prompt forward, up to the first new token's logits
  double decode_ms = 0;   // from the first new token to the last (new_tokens - 1 forwards)
  bool stopped = false;   // ended on a stop token
  double decode_tokens_per_s() const { return decode_ms > 0 ? (new_tokens - 1) * 1000.0 / decode_ms : 0.0; }
};

struct GenerateOutput {
  std::vector<int32_t> tokens;  // the new tokens, stop token included when there was one
  GenerateStats stats;
};

// Checks the prompt (not empty, ids in the vocabulary, room for one new token in the context) and
// returns how many tokens may be generated: max_new_tokens capped by the context. InputError
// otherwise. Every decoding loop starts with it.
int64_t new_token_budget(const LlamaModel& model, const std::vector<int32_t>& prompt, int64_t max_new_tokens);

// The parts that make the speculative loop autoregressive: a drafter that proposes only the root
// and an acceptor that samples the next token from the root's logits (a server runs AR requests
// as sessions of the loop, decode/speculative.h).
std::unique_ptr<Drafter> no_drafter();
std::unique_ptr<Acceptor> next_token_acceptor();

// Throws InputError when the prompt is empty or leaves no room in the model's context.
GenerateOutput generate_autoregressive(const LlamaModel& model, const std::vector<int32_t>& prompt,
                                       const GenerateOptions& options);

}  // namespace specd
