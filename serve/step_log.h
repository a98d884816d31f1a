#pragma once
// `specd serve --step-log FILE`: one tab-separated line per batched step, for finding where a
// server's time goes (docs/serving.md, Load; scripts/step_log_summary.py reads it). Written by
// the decoding thread only; flushed per line, so a killed server leaves every finished step.
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace specd::serve {

struct StepRecord {
  std::string mix;   // the drafting guard's batch mix ("" when not the guard's step)
  std::string arm;   // planned, without-model or plain (Scheduler::Drafting)
  int32_t rows = 0;  // the target forward's
  bool prefill = false;
  int64_t tokens = 0;  // committed by decoding requests
  double draft_ms = 0, forward_ms = 0, step_ms = 0;
  struct Request {
    std::string method;
    int64_t rows = 0, context = 0;  // its rows in the forward; its KV rows before it
    bool model = false;             // its draft model ran this step
  };
  std::vector<Request> requests;
  // The batch planner's expectation of the step (BatchPlanner::Prediction): tokens and ms as
  // planned and undrafted; all 0 where it did not plan the step.
  double predicted_tokens = 0, predicted_ms = 0, plain_tokens = 0, plain_ms = 0;
};

class StepLog {
 public:
  // InputError naming --step-log when the file cannot be written.
  explicit StepLog(const std::string& path);
  void write(const StepRecord& step);

 private:
  std::ofstream out_;
  double start_s_;
};

}  // namespace specd::serve
