#pragma once
// Reading trace files back: list the runs, fetch a run's requests and steps, and export a run's
// steps as CSV or JSON Lines (for `specd traces list|export`).
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "io/sqlite_db.h"
#include "trace/trace_records.h"

namespace specd {

struct TraceRun {
  int64_t id = 0;
  std::string created_at;
  std::string finished_at;  // "" when the run did not finish
  RunInfo info;
  int64_t requests = 0;
  int64_t steps = 0;
};

struct StepTraceRow {
  int64_t request = 0;
  int64_t step = 0;
  std::string workload, category;  // of the step's request
  StepTrace record;
};

enum class TraceFormat { Csv, JsonLines };

// "csv" or "jsonl"; anything else is an InputError naming --format.
TraceFormat parse_trace_format(const std::string& name);

class TraceReader {
 public:
  // Opens for reading (it writes nothing, but rolls back the transaction of a writer that was
  // killed, as SQLite requires of the next reader). InputError for a missing file, a file that is
  // not a traces database, or a schema version this specd does not read.
  explicit TraceReader(const std::string& path);

  std::vector<TraceRun> runs();
  // InputError "PATH: no run N" for an unknown run.
  std::vector<TraceRequest> requests(int64_t run_id);
  std::vector<StepTraceRow> steps(int64_t run_id);

  // One header line then one line per step (CSV), or one JSON object per step (JSON Lines), in
  // (request, step) order. Columns: run_id, request, workload, category, step, drafter,
  // draft_size, accepted_length, accepted_sources, root_entropy (empty / null when unknown),
  // draft_ms, verify_ms, accept_ms, lossless (0/1 in CSV, a boolean in JSON).
  void export_steps(int64_t run_id, TraceFormat format, std::ostream& out);

 private:
  void require_run(int64_t run_id);
  sqlite::Database db_;
  int version_ = 0;  // schema version of the file (older versions lack some step columns)
};

}  // namespace specd
