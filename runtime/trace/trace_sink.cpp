#include "trace/trace_sink.h"

#include <filesystem>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "trace/step_fields.h"
#include "trace/trace_schema.h"
#include "util/error.h"
#include "util/timestamp.h"

namespace specd {

namespace {

void bind_optional_text(sqlite::Statement& statement, int index, const std::string& text) {
  if (text.empty()) {
    statement.bind_null(index);
  } else {
    statement.bind(index, text);
  }
}

// INSERT INTO steps (run_id, request, step, <step_fields()>) VALUES (?1, ...).
std::string insert_step_sql() {
  std::string columns = "run_id, request, step", values = "?1, ?2, ?3";
  int n = 3;
  for (const StepField& field : step_fields()) {
    columns += std::string(", ") + field.name;
    values += ", ?" + std::to_string(++n);
  }
  return "INSERT INTO steps (" + columns + ") VALUES (" + values + ")";
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
  sqlite::Statement insert_run(
      db,
      "INSERT INTO runs (created_at, command_line, target_model, draft_model, method, options_json, specd_version, "
      "specd_commit) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  sqlite::Statement insert_request(
      db,
      "INSERT INTO requests (run_id, request, workload, category, prompt_tokens, new_tokens, wall_ms, output_hash, "
      "output_tokens, measurement) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  sqlite::Statement insert_step(db, insert_step_sql());

  // Run rows made in this transaction get their ids only once it commits.
  std::map<int, int64_t> new_ids;
  sqlite::Transaction transaction(db);
  for (const auto& [handle, record] : records) {
    const Run& r = runs_[handle];
    std::optional<int64_t> id = r.id;
    if (!id && new_ids.count(handle)) id = new_ids.at(handle);
    if (!id) {
      insert_run.bind(1, utc_timestamp()).bind(2, r.info.command_line).bind(3, r.info.target_model);
      bind_optional_text(insert_run, 4, r.info.draft_model);
      insert_run.bind(5, r.info.method).bind(6, r.info.options_json).bind(7, r.info.specd_version);
      bind_optional_text(insert_run, 8, r.info.specd_commit);
      insert_run.run();
      id = new_ids[handle] = db.last_insert_rowid();
    }
    const RequestInfo& request = record.info;
    insert_request.bind(1, *id)
        .bind(2, request.index)
        .bind(3, request.workload)
        .bind(4, request.category)
        .bind(5, request.prompt_tokens)
        .bind(6, static_cast<int64_t>(record.outcome.output_tokens.size()))
        .bind(7, record.outcome.wall_ms)
        .bind(8, token_hash(record.outcome.output_tokens))
        .bind(9, nlohmann::json(record.outcome.output_tokens).dump());
    bind_optional_text(insert_request, 10, record.outcome.measurement);
    insert_request.run();
    for (size_t i = 0; i < record.steps.size(); ++i) {
      const StepTrace& s = record.steps[i];
      insert_step.bind(1, *id).bind(2, request.index).bind(3, static_cast<int64_t>(i));
      int column = 4;
      for (const StepField& field : step_fields()) {
        const TraceCell cell = field.get(s);
        if (const auto* integer = std::get_if<int64_t>(&cell)) insert_step.bind(column, *integer);
        else if (const auto* real = std::get_if<double>(&cell)) insert_step.bind(column, *real);
        else if (const auto* text = std::get_if<std::string>(&cell)) insert_step.bind(column, *text);
        else insert_step.bind_null(column);
        ++column;
      }
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
