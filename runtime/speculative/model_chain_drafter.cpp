#include "speculative/model_chain_drafter.h"

#include <algorithm>
#include <cmath>

#include "model/llama_model.h"

namespace specd {
namespace {

SamplingParams drafter_stream(SamplingParams params, uint64_t request_seed) {
  params.seed = request_seed * 6364136223846793005ULL + 1442695040888963407ULL;  // a stream apart from the target's
  return params;
}

}  // namespace

ModelChainDrafter::ModelChainDrafter(std::shared_ptr<const LlamaModel> draft, int32_t gamma, const SamplingParams& sampling)
    : runner_(std::move(draft)), gamma_(gamma), sampling_(sampling), sampler_(drafter_stream(sampling, sampling.seed)) {}

// The stream restarts from the request's seed, not the policy's: restarted from one fixed seed, a
// policy reused across requests (bench: every item and turn) drew the same uniforms in every
// request, so each draft was a function of the prefix instead of a sample from q, and the
// committed tokens were no longer distributed as the target's (test_sampling_distribution.cpp).
void ModelChainDrafter::begin(const std::vector<int32_t>& prompt, uint64_t seed) {
  runner_.reset();
  sampler_ = Sampler(drafter_stream(sampling_, seed));
}

DraftTree ModelChainDrafter::propose(const DraftRequest& request) {
  DraftTree tree(request.root_token);
  catch_up_ = 0;
  const int32_t length = std::min({gamma_, request.max_nodes, request.max_depth});
  if (length <= 0) return tree;
  std::vector<int32_t> tokens = request.committed;
  tokens.push_back(request.root_token);
  const int64_t room = runner_.model().context_length() - static_cast<int64_t>(tokens.size());
  const int32_t steps = static_cast<int32_t>(std::min<int64_t>(length, room));
  std::vector<float> logits = runner_.sync(tokens);
  catch_up_ = runner_.last_sync_rows() - 1;
  const int64_t vocab = static_cast<int64_t>(logits.size());
  int32_t parent = 0;
  double score = 0;  // cumulative log q of the sampled path (greedy drafts carry none)
  for (int32_t d = 0; d < steps; ++d) {
    const float* row = logits.data();
    int32_t token;
    if (sampling_.temperature == 0.0) {
      token = argmax(row, vocab);
      parent = tree.add(parent, token, DraftSource::Model);
    } else {
      auto q = std::make_shared<const std::vector<float>>([&] {
        std::vector<double> shaped = shaped_distribution(row, vocab, sampling_);
        return std::vector<float>(shaped.begin(), shaped.end());
      }());
      token = draw(std::vector<double>(q->begin(), q->end()), sampler_.uniform());
      tree.child_q[parent] = q;
      score += std::log((*q)[token]);
      parent = tree.add(parent, token, DraftSource::Model, (*q)[token], static_cast<float>(score));
    }
    if (d + 1 < steps) {
      tokens.push_back(token);
      logits = runner_.sync(tokens);
    }
  }
  return tree;
}

}  // namespace specd
