#pragma once
// Writing per-step traces (schemas/traces.sql) to a SQLite file, one finished request at a time.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/sqlite_db.h"
#include "trace/trace_records.h"

namespace specd {

// One finished request of a run: its row and every step.
struct RequestRecord {
  RequestInfo info;
  std::vector<StepTrace> steps;
  RequestOutcome outcome;
};

// Appends runs to a traces file. Nothing is written until a request finishes: the file (with its
// schema), a run's row and the request land together in one transaction, so a process killed at
// any moment keeps every finished request, never half of one, and a run that finished nothing
// leaves no file behind. Requests of several runs can be written in one transaction (the methods
// of one bench item), so they land or fail together. A run whose process died keeps finished_at
// NULL; `resume_run` takes such a run up again. An existing file is checked when the sink is made
// (before any work): another schema version or a foreign file is an InputError naming the file.
// Calls out of order (an unknown handle, a finished run) are bugs (std::logic_error).
class SqliteTraceSink {
 public:
  explicit SqliteTraceSink(const std::string& path);
  ~SqliteTraceSink();
  SqliteTraceSink(const SqliteTraceSink&) = delete;
  SqliteTraceSink& operator=(const SqliteTraceSink&) = delete;

  // A new run; returns its handle. Its row is written with its first request.
  int add_run(const RunInfo& run);
  // An unfinished run already in the file (by id); returns its handle. InputError when the file
  // has no such run or it finished.
  int resume_run(int64_t run_id);
  void write_requests(const std::vector<std::pair<int, RequestRecord>>& records);
  void write_request(int run, const RequestRecord& record) { write_requests({{run, record}}); }
  // Marks the run finished (a run that wrote no request leaves nothing).
  void finish_run(int run);

  // The run's id in the file; nullopt until its first request is written.
  std::optional<int64_t> run_id(int run) const;
  const std::string& path() const { return path_; }

 private:
  struct Run {
    RunInfo info;
    std::optional<int64_t> id;
    bool finished = false;
  };
  Run& run(int handle, const char* caller);
  void open();

  std::string path_;
  std::unique_ptr<sqlite::Database> db_;  // opened (and the file created) at the first write
  std::vector<Run> runs_;
};

}  // namespace specd
