#include "serve/step_log.h"

#include <chrono>

#include "util/error.h"

namespace specd::serve {
namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

StepLog::StepLog(const std::string& path) : out_(path), start_s_(now_s()) {
  if (!out_) input_error("--step-log", "cannot write " + path);
  out_.setf(std::ios::fixed);
  out_.precision(4);
  out_ << "time_s\tmix\tarm\trows\tprefill\ttokens\tdraft_ms\tforward_ms\tstep_ms\trequests (method:rows:context:model)"
          "\tpredicted_tokens\tpredicted_ms\tplain_tokens\tplain_ms\n";
  out_.flush();
}

void StepLog::write(const StepRecord& step) {
  out_ << now_s() - start_s_ << '\t' << (step.mix.empty() ? "-" : step.mix) << '\t' << step.arm << '\t' << step.rows << '\t'
       << (step.prefill ? 1 : 0) << '\t' << step.tokens << '\t' << step.draft_ms << '\t' << step.forward_ms << '\t' << step.step_ms << '\t';
  for (size_t i = 0; i < step.requests.size(); ++i) {
    const StepRecord::Request& r = step.requests[i];
    out_ << (i ? " " : "") << r.method << ':' << r.rows << ':' << r.context << ':' << (r.model ? 1 : 0);
  }
  out_ << '\t' << step.predicted_tokens << '\t' << step.predicted_ms << '\t' << step.plain_tokens << '\t' << step.plain_ms << '\n';
  out_.flush();
}

}  // namespace specd::serve
