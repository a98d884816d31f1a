#pragma once
// ReSpec's knobs (Fang et al., arXiv:2511.01282, §3, Algorithm 1). The paper fixes
// theta_entropy = 1.5, l = 3, top-3 candidates, tau <= 3 and m <= 3; lambda_e, alpha, theta_score,
// phi and beta it leaves open: `specd calibrate sweep --policy respec` calibrates them per pair.
#include <cstdint>

namespace specd {

struct RespecOptions {
  // Entropy-guided trigger: H_k = mean target entropy (nats, T = 1) over the last k positions,
  // k = 1..max_key; k* = argmin H_k + lambda_e / k; retrieve when H_k* <= theta_entropy and the
  // text so far holds the key.
  double theta_entropy = 1.5;
  int32_t max_key = 3;        // l
  double lambda_e = 0.3;      // nats: the length preference (larger favours longer keys)
  // false: the paper's rule, k* over every k, then retrieve only if key_k* occurred. true: k* over
  // the k whose key occurred earlier (on the demo pair about half the paper's k* never occurred,
  // while a shorter or longer key had).
  bool key_among_existing = false;
  // Feedback-driven selection: per match position (its end in the text) an EMA score
  // S <- (1 - alpha) S + alpha R, S0 = 0.5; keep S >= theta_score, the best `candidates`.
  double alpha = 0.3;
  double theta_score = 0.2;
  double initial_score = 0.5;  // S0
  int32_t candidates = 3;
  int32_t draft_length = 40;   // tokens copied per candidate (the tree's depth bound)
  // Relaxed verification with look-ahead, retrieved nodes only: a token the greedy test rejects
  // is taken when it is in the target's top-beta and log p(top1) - log p(token) <= tau, at most
  // phi times a step, each followed by at least min_matches greedy matches.
  double tau = 2.0;
  int32_t phi = 2;
  int32_t min_matches = 2;     // m
  int32_t beta = 5;
  // Ablations (respec-no-trigger, respec-no-ema, respec-lossless).
  bool use_trigger = true;
  bool use_ema = true;
  bool relaxed = true;
};

// Throws InputError naming the option when a value is out of range.
void validate(const RespecOptions& options);

}  // namespace specd
