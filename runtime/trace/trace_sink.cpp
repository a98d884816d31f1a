#include "trace/trace_sink.h"

#include <filesystem>
#include <map>
#include <stdexcept>

#include "trace/trace_fields.h"
#include "trace/trace_schema.h"
#include "util/error.h"
#include "util/timestamp.h"

namespace specd {

namespace {

// INSERT INTO table (key..., fields...) VALUES (?1, ...).
template <typename Record>
std::string insert_sql(const std::string& table, const std::string& key, int key_columns, const std::vector<TraceField<Record>>& fields) {
  std::string values;
  for (size_t i = 1; i <= key_columns + fields.size(); ++i) values += (i > 1 ? ", ?" : "?") + std::to_string(i);
  return "INSERT INTO " + table + " (" + key + ", " + field_list(fields) + ") VALUES (" + values + ")";
}

}  // namespace

SqliteTraceSink::SqliteTraceSink(const std::string& path) : path_(path) {
  // An existing file is checked now, before the caller's work starts; a new one is made later.
  std::error_code error;
  if (std::filesystem::exists(path, error)) open();
}

// Statements are finalized before the connection closes (they are locals of each call).
SqliteTraceSink::~SqliteTraceSink() = default;

void SqliteTraceSink::open() {
  if (db_) return;
  db_ = std::make_unique<sqlite::Database>(path_, sqlite::Database::Mode::ReadWriteCreate);
  open_traces_schema(*db_, /*create=*/true);
}

SqliteTraceSink::Run& SqliteTraceSink::run(int handle, const char* caller) {
  if (handle < 0 || handle >= static_cast<int>(runs_.size()))
    throw std::logic_error(std::string("SqliteTraceSink::") + caller + ": unknown run");
  Run& r = runs_[handle];
  if (r.finished) throw std::logic_error(std::string("SqliteTraceSink::") + caller + ": the run is finished");
  return r;
}

int SqliteTraceSink::add_run(const RunInfo& info) {
  runs_.push_back(Run{info, std::nullopt, false});
  return static_cast<int>(runs_.size()) - 1;
}

int SqliteTraceSink::resume_run(int64_t run_id) {
  if (!db_) input_error(path_, "no such file (nothing to resume)");
  sqlite::Statement query(*db_, "SELECT finished_at IS NOT NULL FROM runs WHERE id = ?1");
  query.bind(1, run_id);
  if (!query.step()) input_error(path_, "no run " + std::to_string(run_id));
  if (query.int64(0) != 0) input_error(path_, "run " + std::to_string(run_id) + " has finished (nothing to resume)");
  for (const Run& r : runs_)
    if (r.id == run_id) throw std::logic_error("SqliteTraceSink::resume_run: run resumed twice");
  runs_.push_back(Run{RunInfo{}, run_id, false});
  return static_cast<int>(runs_.size()) - 1;
}

void SqliteTraceSink::write_requests(const std::vector<std::pair<int, RequestRecord>>& records) {
  for (const auto& [handle, record] : records) run(handle, "write_requests");
  open();
  sqlite::Database& db = *db_;
  sqlite::Statement insert_run(db, insert_sql("runs", "created_at", 1, run_fields()));
  sqlite::Statement insert_request(db, insert_sql("requests", "run_id, request", 2, request_fields()));
  sqlite::Statement insert_step(db, insert_sql("steps", "run_id, request, step", 3, step_fields()));

  // Run rows made in this transaction get their ids only once it commits.
  std::map<int, int64_t> new_ids;
  sqlite::Transaction transaction(db);
  for (const auto& [handle, record] : records) {
    const Run& r = runs_[handle];
    std::optional<int64_t> id = r.id;
    if (!id && new_ids.count(handle)) id = new_ids.at(handle);
    if (!id) {
      insert_run.bind(1, utc_timestamp());
      bind_fields(insert_run, 2, run_fields(), r.info);
      insert_run.run();
      id = new_ids[handle] = db.last_insert_rowid();
    }
    const RequestInfo& request = record.info;
    insert_request.bind(1, *id).bind(2, request.index);
    bind_fields(insert_request, 3, request_fields(), TraceRequest{request, record.outcome, ""});
    insert_request.run();
    for (size_t i = 0; i < record.steps.size(); ++i) {
      insert_step.bind(1, *id).bind(2, request.index).bind(3, static_cast<int64_t>(i));
      bind_fields(insert_step, 4, step_fields(), record.steps[i]);
      insert_step.run();
    }
  }
  transaction.commit();
  for (const auto& [handle, id] : new_ids) runs_[handle].id = id;
}

void SqliteTraceSink::finish_run(int handle) {
  Run& r = run(handle, "finish_run");
  r.finished = true;
  if (!r.id) return;
  sqlite::Statement finish(*db_, "UPDATE runs SET finished_at = ?1 WHERE id = ?2");
  finish.bind(1, utc_timestamp()).bind(2, *r.id);
  finish.run();
}

std::optional<int64_t> SqliteTraceSink::run_id(int handle) const {
  if (handle < 0 || handle >= static_cast<int>(runs_.size())) throw std::logic_error("SqliteTraceSink::run_id: unknown run");
  return runs_[handle].id;
}

}  // namespace specd
