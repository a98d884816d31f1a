#include "trace/trace_sink.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "trace/trace_schema.h"
#include "util/timestamp.h"

namespace specd {

SqliteTraceSink::SqliteTraceSink(const std::string& path) : db_(path, sqlite::Database::Mode::ReadWriteCreate) {
  open_traces_schema(db_, /*create=*/true);
  insert_request_ = std::make_unique<sqlite::Statement>(
      db_,
      "INSERT INTO requests (run_id, request, workload, category, prompt_tokens, new_tokens, wall_ms, output_hash, "
      "output_tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  insert_step_ = std::make_unique<sqlite::Statement>(
      db_,
      "INSERT INTO steps (run_id, request, step, drafter, draft_size, accepted_length, accepted_sources, root_entropy, "
      "draft_ms, verify_ms, accept_ms, lossless, pruned, rescued, relaxed, accepted_verdicts, decision_scores) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)");
}

// Statements must be finalized before the connection closes; members are destroyed in reverse
// order, so db_ (declared first) outlives them. An open request is dropped, never half-written.
SqliteTraceSink::~SqliteTraceSink() = default;

void SqliteTraceSink::begin_run(const RunInfo& run) {
  if (run_open_) throw std::logic_error("TraceSink::begin_run: the previous run is still open");
  sqlite::Statement insert(
      db_,
      "INSERT INTO runs (created_at, command_line, target_model, draft_model, method, options_json, specd_version) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  insert.bind(1, utc_timestamp()).bind(2, run.command_line).bind(3, run.target_model);
  if (run.draft_model.empty()) {
    insert.bind_null(4);
  } else {
    insert.bind(4, run.draft_model);
  }
  insert.bind(5, run.method).bind(6, run.options_json).bind(7, run.specd_version);
  insert.run();
  run_id_ = db_.last_insert_rowid();
  run_open_ = true;
}

void SqliteTraceSink::begin_request(const RequestInfo& request) {
  if (!run_open_) throw std::logic_error("TraceSink::begin_request: no run is open");
  if (request_) throw std::logic_error("TraceSink::begin_request: the previous request is still open");
  request_ = request;
  steps_.clear();
}

void SqliteTraceSink::record_step(const StepTrace& step) {
  if (!request_) throw std::logic_error("TraceSink::record_step: no request is open");
  steps_.push_back(step);
}

void SqliteTraceSink::end_request(const RequestOutcome& outcome) {
  if (!request_) throw std::logic_error("TraceSink::end_request: no request is open");
  const RequestInfo request = *request_;
  request_.reset();  // whatever happens below, the request is over

  sqlite::Transaction transaction(db_);
  insert_request_->bind(1, *run_id_)
      .bind(2, request.index)
      .bind(3, request.workload)
      .bind(4, request.category)
      .bind(5, request.prompt_tokens)
      .bind(6, static_cast<int64_t>(outcome.output_tokens.size()))
      .bind(7, outcome.wall_ms)
      .bind(8, token_hash(outcome.output_tokens))
      .bind(9, nlohmann::json(outcome.output_tokens).dump());
  insert_request_->run();
  for (size_t i = 0; i < steps_.size(); ++i) {
    const StepTrace& s = steps_[i];
    insert_step_->bind(1, *run_id_)
        .bind(2, request.index)
        .bind(3, static_cast<int64_t>(i))
        .bind(4, s.drafter)
        .bind(5, static_cast<int64_t>(s.draft_size))
        .bind(6, static_cast<int64_t>(s.accepted_length))
        .bind(7, s.accepted_sources)
        .bind(8, s.root_entropy)
        .bind(9, s.draft_ms)
        .bind(10, s.verify_ms)
        .bind(11, s.accept_ms)
        .bind(12, static_cast<int64_t>(s.lossless ? 1 : 0))
        .bind(13, static_cast<int64_t>(s.pruned))
        .bind(14, static_cast<int64_t>(s.rescued))
        .bind(15, static_cast<int64_t>(s.relaxed))
        .bind(16, s.accepted_verdicts);
    if (s.decision_scores.empty()) {
      insert_step_->bind_null(17);
    } else {
      insert_step_->bind(17, s.decision_scores);
    }
    insert_step_->run();
  }
  transaction.commit();
  steps_.clear();
}

void SqliteTraceSink::end_run() {
  if (!run_open_) throw std::logic_error("TraceSink::end_run: no run is open");
  if (request_) throw std::logic_error("TraceSink::end_run: a request is still open");
  sqlite::Statement finish(db_, "UPDATE runs SET finished_at = ?1 WHERE id = ?2");
  finish.bind(1, utc_timestamp()).bind(2, *run_id_);
  finish.run();
  run_open_ = false;
}

}  // namespace specd
