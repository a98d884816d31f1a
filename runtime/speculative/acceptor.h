#pragma once
// Acceptance: given a draft tree and the target's logits at every node (row i predicts the token
// after node i), choose the accepted root-to-node path and the token that follows it (the bonus
// token when every drafted token on the path was accepted, the correction otherwise).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sampling/sampler.h"
#include "speculative/draft_tree.h"
#include "trace/step_detail.h"

namespace specd {

// Accepted: the lossless test passed. Rescued (CSD) and Relaxed (ReSpec, ARC's risk-bounded
// test): the lossless test rejected the token and a lossy rule took it anyway; both are on the
// accepted path and change the output distribution.
enum class NodeVerdict : uint8_t { NotReached, Accepted, Rejected, Rescued, Relaxed };

struct AcceptResult {
  std::vector<int32_t> path;   // accepted node indices, root first (the root is always accepted)
  int32_t next_token = -1;     // the token after the path: the next step's root
  std::vector<NodeVerdict> verdicts;  // per node
  // Per node, the score that decided a Rescued or Relaxed verdict (CSD: the logit gap
  // z(draft) - z(target); ARC: LTS); NaN elsewhere. Empty when the acceptor never relaxes.
  std::vector<float> scores;
  bool lossless = true;        // false for relaxed/lossy acceptors; traces record it
  // What the acceptor measured beyond the verdicts, for the step's trace (ARC: U_emb, U_logit
  // and LTS of every node it evaluated; CSD: its rescues' pairs; ReSpec: its chains); none when
  // it has nothing to add.
  AcceptanceDetail detail;

  int32_t count(NodeVerdict verdict) const;
};

class Acceptor {
 public:
  virtual ~Acceptor() = default;
  virtual std::string name() const = 0;
  // logits: [tree.size(), vocab] row-major float32. `sampler` holds the sampling parameters that
  // shape the target distribution exactly as autoregressive sampling does, and the request's RNG.
  virtual AcceptResult accept(const DraftTree& tree, const float* logits, int64_t vocab, Sampler& sampler) = 0;
  // False for acceptors that may take a token the target would not have produced.
  // H_m of the step's root (the target's normalized entropy, temperature 1, at the row the root
  // was drawn from), given before accept() to an acceptor that asks for it.
  virtual bool uses_root_entropy() const { return false; }
  virtual void set_root_entropy(double /*normalized*/) {}
  virtual bool lossless() const { return true; }
};

// One letter per accepted drafted token in path order, comma-separated: A accepted, C rescued,
// X relaxed ("A,A,C"); "" when none was.
std::string accepted_verdicts(const AcceptResult& result);

}  // namespace specd
