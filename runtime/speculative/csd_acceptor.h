#pragma once
// Calibrated Speculative Decoding's verification (the CSD paper, Algorithm 1), for draft chains: each
// drafted token first takes the lossless test (greedy match at T = 0, rejection sampling at
// T > 0). When it fails, t* is the token the lossless rule emits instead (the argmax, or a draw
// from the residual), the pair (x, t*) is recorded in the Online Correction Memory, and x is
// rescued when
//   the memory has seen (x, t*) at least lambda times (this rejection included), and
//   z(x) - z(t*) >= log tau on the target's raw logits (Semantic Consistency Gating).
// A rescued token is committed and verification goes on with the next drafted token. LOSSY: the
// output is no longer the target's; traces mark rescued tokens and their logit gaps, and the
// step's detail names each rescue's pair: {"rescues": [{"draft": x, "target": t*, "gap": g}]}.
//
// Ablations (the CSD paper Table 3): use_memory = false rescues on the gate alone (csd-scg-only),
// use_gate = false on the memory alone (csd-ocm-only).
//
// Algorithm 1 computes is_freq (line 16) before UPDATEMEMORY (line 18); specd counts the event
// toward its own threshold (the paper's text reads that way, its pseudo-code does not): with
// lambda = 6 a pair is rescued from its 6th rejection, one sooner.
#include <cstdint>
#include <memory>

#include "speculative/acceptor.h"
#include "speculative/correction_memory.h"

namespace specd {

struct CsdOptions {
  int64_t lambda = 6;      // frequency threshold (OCM)
  double tau = 0.01;       // probability-ratio threshold (SCG): rescue when p(x)/p(t*) >= tau at T = 1
  bool use_memory = true;
  bool use_gate = true;
};

// InputError naming the field for lambda < 1 or tau outside (0, 1].
void validate(const CsdOptions& options);

class CsdAcceptor : public Acceptor {
 public:
  CsdAcceptor(std::shared_ptr<CorrectionMemory> memory, CsdOptions options);
  std::string name() const override { return "csd"; }
  // Throws std::logic_error for a tree that is not a chain.
  AcceptResult accept(const DraftTree& tree, const float* logits, int64_t vocab, Sampler& sampler) override;
  bool lossless() const override { return false; }
  const CorrectionMemory& memory() const { return *memory_; }

 private:
  std::shared_ptr<CorrectionMemory> memory_;
  CsdOptions options_;
  double log_tau_;
};

}  // namespace specd
