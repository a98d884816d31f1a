#pragma once
// Standard speculative decoding's drafter: the draft model proposes a chain of up to gamma tokens,
// greedily at temperature 0, otherwise sampled from its own distribution shaped like the target's
// (temperature, top-k, top-p), keeping that distribution for the rejection-sampling residual.
#include <memory>

#include "speculative/draft_model_runner.h"
#include "sampling/sampler.h"
#include "speculative/drafter.h"

namespace specd {

class ModelChainDrafter : public Drafter {
 public:
  // sampling: temperature, top-k and top-p of the drafts; the seed is each request's (begin()).
  ModelChainDrafter(std::shared_ptr<const LlamaModel> draft, int32_t gamma, const SamplingParams& sampling);
  std::string name() const override { return "draft-chain"; }
  void begin(const std::vector<int32_t>& prompt, uint64_t seed) override;
  DraftTree propose(const DraftRequest& request) override;
  std::unique_ptr<DraftRounds> propose_in_rounds(const DraftRequest& request) override;
  int64_t last_catch_up() const override { return catch_up_; }
  int64_t first_round_rows(const std::vector<int32_t>& committed) const override { return runner_.rows_to_sync(committed); }
  void observe(const StepFeedback& feedback) override {}

 private:
  class Rounds;
  DraftModelRunner runner_;
  int64_t catch_up_ = 0;  // last_catch_up()
  int32_t gamma_;
  SamplingParams sampling_;
  Sampler sampler_;  // the drafter's own random stream, restarted by begin() from the request's seed
};

}  // namespace specd
