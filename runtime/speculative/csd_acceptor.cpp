#include "speculative/csd_acceptor.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "speculative/greedy_acceptor.h"
#include "speculative/method_params.h"
#include "speculative/sampling_acceptor.h"
#include "util/error.h"

namespace specd {

// The ranges are the parameter table's (method_params.cpp).
void validate(const CsdOptions& csd) {
  MethodOptions options;
  options.csd = csd;
  check_params(options, "csd", "csd");
}

CsdAcceptor::CsdAcceptor(std::shared_ptr<CorrectionMemory> memory, CsdOptions options)
    : memory_(std::move(memory)), options_(options), log_tau_(std::log(options.tau)) {
  if (!memory_) throw std::invalid_argument("CsdAcceptor: no memory");
  validate(options_);
}

AcceptResult CsdAcceptor::accept(const DraftTree& tree, const float* logits, int64_t vocab, Sampler& sampler) {
  check_tree_for_acceptance(tree, vocab);
  const int32_t n = tree.size();
  for (int32_t i = 1; i < n; ++i)
    if (tree.parents[i] != i - 1) throw std::logic_error("CsdAcceptor: the draft must be a chain");
  const bool greedy = sampler.params().temperature == 0.0;

  AcceptResult result;
  result.verdicts.assign(n, NodeVerdict::NotReached);
  result.verdicts[0] = NodeVerdict::Accepted;
  result.scores.assign(n, std::numeric_limits<float>::quiet_NaN());
  result.path.push_back(0);
  result.lossless = false;

  // The (draft, target) pair of every rescue, for the step's trace: the target's token is not in
  // the output (the drafted one was committed), and the report's rescues by pair need it.
  CsdAcceptance rescues;
  const auto finish = [&]() -> AcceptResult& {
    if (!rescues.rescues.empty()) result.detail = rescues;
    return result;
  };
  int32_t node = 0;
  std::vector<double> p;
  if (!greedy) p = shaped_distribution(logits, vocab, sampler.params());
  for (int32_t child = 1; child < n; node = child, ++child) {
    const float* row = logits + static_cast<int64_t>(node) * vocab;
    const int32_t x = tree.tokens[child];
    int32_t target;
    bool accepted;
    if (greedy) {
      target = argmax(row, vocab);
      accepted = x == target;
    } else {
      // The lossless rules exactly as SamplingAcceptor applies them (and from the same random
      // stream), so CSD differs from sd only where it rescues.
      accepted = try_children(tree, node, {child}, p, vocab, sampler, result.verdicts) == child;
      target = accepted ? x : draw(p, sampler.uniform());
    }
    if (!accepted) {
      const float gap = row[x] - row[target];
      memory_->record(x, target, gap, tree.depths[child]);
      const bool frequent = memory_->count(x, target) >= options_.lambda;
      const bool safe = gap >= log_tau_;
      if ((options_.use_memory && !frequent) || (options_.use_gate && !safe)) {
        result.verdicts[child] = NodeVerdict::Rejected;
        result.next_token = target;
        return finish();
      }
      result.verdicts[child] = NodeVerdict::Rescued;
      result.scores[child] = gap;
      rescues.rescues.push_back(CsdRescue{x, target, gap});
    } else {
      result.verdicts[child] = NodeVerdict::Accepted;
    }
    result.path.push_back(child);
    if (!greedy) p = shaped_distribution(logits + static_cast<int64_t>(child) * vocab, vocab, sampler.params());
  }
  const float* last = logits + static_cast<int64_t>(node) * vocab;
  result.next_token = greedy ? argmax(last, vocab) : draw(p, sampler.uniform());
  return finish();
}

}  // namespace specd
