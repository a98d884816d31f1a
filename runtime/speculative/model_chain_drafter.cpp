#include "speculative/model_chain_drafter.h"

#include <algorithm>
#include <cmath>

#include "model/llama_model.h"

namespace specd {

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

// The chain, one draft-model forward per level: the first brings the draft's cache up to the text
// and the root, each later one adds the token just drafted.
class ModelChainDrafter::Rounds final : public DraftRounds {
 public:
  Rounds(ModelChainDrafter& drafter, const DraftRequest& request) : d_(drafter), tree_(request.root_token) {
    d_.catch_up_ = 0;
    const int32_t length = std::min({d_.gamma_, request.max_nodes, request.max_depth});
    if (length <= 0) return;
    tokens_ = request.committed;
    tokens_.push_back(request.root_token);
    const int64_t room = d_.runner_.model().context_length() - static_cast<int64_t>(tokens_.size());
    steps_ = static_cast<int32_t>(std::min<int64_t>(length, room));
    pending_ = d_.runner_.sync_request(tokens_);
    has_pending_ = true;
  }

  DraftShape shape() const override { return DraftShape{steps_, steps_}; }
  const ForwardRequest* next() override { return has_pending_ ? &pending_ : nullptr; }
  const LlamaModel& model() const override { return d_.runner_.model(); }
  KvCache& cache() override { return d_.runner_.forward_cache(); }

  void feed(ForwardResult result) override {
    has_pending_ = false;
    const std::vector<float> logits = d_.runner_.sync_done(std::move(result));
    if (depth_ == 0) d_.catch_up_ = d_.runner_.last_sync_rows() - 1;
    if (depth_ >= steps_) return;
    const float* row = logits.data();
    const int64_t vocab = static_cast<int64_t>(logits.size());
    int32_t token;
    if (d_.sampling_.temperature == 0.0) {
      token = argmax(row, vocab);
      parent_ = tree_.add(parent_, token, DraftSource::Model);
    } else {
      auto q = std::make_shared<const std::vector<float>>([&] {
        std::vector<double> shaped = shaped_distribution(row, vocab, d_.sampling_);
        return std::vector<float>(shaped.begin(), shaped.end());
      }());
      token = draw(std::vector<double>(q->begin(), q->end()), d_.sampler_.uniform());
      tree_.child_q[parent_] = q;
      score_ += std::log((*q)[token]);
      parent_ = tree_.add(parent_, token, DraftSource::Model, (*q)[token], static_cast<float>(score_));
    }
    if (++depth_ < steps_) {
      tokens_.push_back(token);
      pending_ = d_.runner_.sync_request(tokens_);
      has_pending_ = true;
    }
  }

  DraftTree tree() override { return std::move(tree_); }

 private:
  ModelChainDrafter& d_;
  DraftTree tree_;
  std::vector<int32_t> tokens_;
  int32_t steps_ = 0, depth_ = 0, parent_ = 0;
  double score_ = 0;  // cumulative log q of the sampled path (greedy drafts carry none)
  ForwardRequest pending_;
  bool has_pending_ = false;
};

std::unique_ptr<DraftRounds> ModelChainDrafter::propose_in_rounds(const DraftRequest& request) {
  return std::make_unique<Rounds>(*this, request);
}

DraftTree ModelChainDrafter::propose(const DraftRequest& request) {
  Rounds rounds(*this, request);
  return run_alone(rounds);
}

}  // namespace specd
