#pragma once
// Where per-step traces go. The engine calls, per run:
//   begin_run, then per request: begin_request, record_step for each step, end_request; end_run.
// SqliteTraceSink writes schemas/traces.sql files.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/sqlite_db.h"
#include "trace/trace_records.h"

namespace specd {

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void begin_run(const RunInfo& run) = 0;
  virtual void begin_request(const RequestInfo& request) = 0;
  // Steps are numbered from 0 within their request in the order they are recorded.
  virtual void record_step(const StepTrace& step) = 0;
  virtual void end_request(const RequestOutcome& outcome) = 0;
  virtual void end_run() = 0;
};

// Appends runs to a SQLite file, creating it with the schema when it does not exist. A run row
// is written at begin_run; a request and all its steps are buffered and written in one
// transaction at end_request, so a crash or an error never leaves a half-written request (a run
// that died keeps finished_at NULL). Calls out of order are bugs (std::logic_error); SQLite
// failures and a file of another schema version are InputErrors naming the file.
class SqliteTraceSink : public TraceSink {
 public:
  explicit SqliteTraceSink(const std::string& path);
  ~SqliteTraceSink() override;

  void begin_run(const RunInfo& run) override;
  void begin_request(const RequestInfo& request) override;
  void record_step(const StepTrace& step) override;
  void end_request(const RequestOutcome& outcome) override;
  void end_run() override;

  // The id of the current (or last) run; nullopt before the first begin_run.
  std::optional<int64_t> run_id() const { return run_id_; }

 private:
  sqlite::Database db_;
  std::unique_ptr<sqlite::Statement> insert_request_, insert_step_;
  std::optional<int64_t> run_id_;
  bool run_open_ = false;
  std::optional<RequestInfo> request_;
  std::vector<StepTrace> steps_;
};

}  // namespace specd
