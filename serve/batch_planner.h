#pragma once
// How far the draft-model chains of a batched step draft (sd, csd and their ablations), chosen
// for the batch's throughput as SmartSpec does (Liu et al. 2024, "Optimizing Speculative Decoding
// for Serving Large Language Models Using Goodput"): a forward's time is fitted online as a line in
// the rows it runs (ms = a + b * rows: a is reading the weights, b each row's compute), one line
// for the target and one for the draft model, from every step the server runs. For each draft
// length k the planner adds up the tokens the chains are expected to commit (each request's own
// acceptance estimates) and the other requests', over the step's time (the target's forward of
// every row, and k levels of the draft model's forwards), and picks the k with the most tokens per
// millisecond: 0 when drafting does not pay at this batch, however well the draft agrees.
#include <cstdint>
#include <vector>

#include "speculative/draft_budget.h"

namespace specd::serve {

// ms = a + b * rows, least squares over every observation with older ones fading.
class LinearCost {
 public:
  void observe(double rows, double ms);
  bool ready() const;  // enough observations, at more than one row count
  double at(double rows) const;

 private:
  double w_ = 0, x_ = 0, xx_ = 0, y_ = 0, xy_ = 0;  // decayed sums
  int64_t n_ = 0;
};

class BatchPlanner {
 public:
  // A draft-model chain of the step: its acceptance estimates, its longest draft, and the
  // tokens its draft model must catch up with before drafting (the last step's commits).
  struct Chain {
    Acceptance acceptance;
    int32_t max_nodes = 0;
    int32_t catch_up_rows = 1;
  };
  // The step's other rows (prefills, other methods' trees), the tokens they are expected to
  // commit and their drafting time: what the chains share the step with.
  struct Fixed {
    int32_t rows = 0;
    double tokens = 0;
    double draft_ms = 0;
  };

  // The draft length for every chain this step (each capped by its own max_nodes), or -1 while
  // the fits have too little to go on (each request's own budget decides then).
  int32_t choose(const std::vector<Chain>& chains, const Fixed& fixed) const;
  // `load` priced by the target's fitted line (BatchLoad::fixed_ms, row_ms) once the fit is ready,
  // for the budgets of the requests the planner does not size (retrieval, trees, fallbacks).
  BatchLoad priced(BatchLoad load) const;
  void observe_target(int32_t rows, double ms) { target_.observe(rows, ms); }
  void observe_draft(int32_t rows, double ms) { draft_.observe(rows, ms); }

 private:
  LinearCost target_, draft_;
};

}  // namespace specd::serve
