#include "trace/trace_reader.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "io/json_reader.h"
#include "trace/trace_schema.h"
#include "util/error.h"

namespace specd {

namespace {

sqlite::Database open_existing(const std::string& path) {
  if (!std::filesystem::exists(path)) input_error(path, "no such file");
  // Not read-only: a bench killed inside a write leaves a hot journal to roll back first.
  return sqlite::Database(path, sqlite::Database::Mode::ReadExisting);
}

// Shortest text that reads back as the same double (nlohmann's number formatting).
std::string number(double value) { return nlohmann::json(value).dump(); }

// RFC 4180: quote a field holding a comma, a quote or a line break; double the quotes inside.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

TraceFormat parse_trace_format(const std::string& name) {
  if (name == "csv") return TraceFormat::Csv;
  if (name == "jsonl") return TraceFormat::JsonLines;
  input_error("trace format", "unknown format '" + name + "' (csv or jsonl)");
}

TraceReader::TraceReader(const std::string& path) : db_(open_existing(path)) {
  version_ = open_traces_schema(db_, /*create=*/false);
}

std::vector<TraceRun> TraceReader::runs() {
  sqlite::Statement query(
      db_,
      "SELECT id, created_at, finished_at, command_line, target_model, draft_model, method, options_json, specd_version, "
      "(SELECT count(*) FROM requests r WHERE r.run_id = runs.id), "
      "(SELECT count(*) FROM steps s WHERE s.run_id = runs.id), " +
          std::string(version_ >= 3 ? "specd_commit " : "NULL ") + "FROM runs ORDER BY id");
  std::vector<TraceRun> runs;
  while (query.step()) {
    TraceRun run;
    run.id = query.int64(0);
    run.created_at = query.text(1);
    run.finished_at = query.text(2);
    run.info.command_line = query.text(3);
    run.info.target_model = query.text(4);
    run.info.draft_model = query.text(5);
    run.info.method = query.text(6);
    run.info.options_json = query.text(7);
    run.info.specd_version = query.text(8);
    run.requests = query.int64(9);
    run.steps = query.int64(10);
    run.info.specd_commit = query.text(11);
    runs.push_back(std::move(run));
  }
  return runs;
}

void TraceReader::require_run(int64_t run_id) {
  sqlite::Statement query(db_, "SELECT 1 FROM runs WHERE id = ?1");
  query.bind(1, run_id);
  if (!query.step()) input_error(db_.path(), "no run " + std::to_string(run_id));
}

std::vector<TraceRequest> TraceReader::requests(int64_t run_id) {
  require_run(run_id);
  sqlite::Statement query(
      db_,
      "SELECT request, workload, category, prompt_tokens, wall_ms, output_hash, output_tokens, " +
          std::string(version_ >= 3 ? "measurement " : "NULL ") + "FROM requests WHERE run_id = ?1 ORDER BY request");
  query.bind(1, run_id);
  std::vector<TraceRequest> requests;
  while (query.step()) {
    TraceRequest r;
    r.info.index = query.int64(0);
    r.info.workload = query.text(1);
    r.info.category = query.text(2);
    r.info.prompt_tokens = query.int64(3);
    r.outcome.wall_ms = query.real(4);
    r.output_hash = query.text(5);
    const std::string where = db_.path() + ": run " + std::to_string(run_id) + " request " + std::to_string(r.info.index) + " output_tokens";
    r.outcome.output_tokens = parse_token_list(query.text(6), where);
    r.outcome.measurement = query.text(7);
    requests.push_back(std::move(r));
  }
  return requests;
}

std::vector<StepTraceRow> TraceReader::steps(int64_t run_id) {
  require_run(run_id);
  sqlite::Statement query(
      db_,
      "SELECT s.request, s.step, r.workload, r.category, s.drafter, s.draft_size, s.accepted_length, "
      "s.accepted_sources, s.root_entropy, s.draft_ms, s.verify_ms, s.accept_ms, s.lossless, " +
          std::string(version_ >= 2 ? "s.pruned, s.rescued, s.relaxed, s.accepted_verdicts, s.decision_scores "
                                    : "0, 0, 0, '', NULL ") +
          std::string(version_ >= 4 ? ", s.detail " : ", NULL ") +
          "FROM steps s JOIN requests r ON r.run_id = s.run_id AND r.request = s.request "
      "WHERE s.run_id = ?1 ORDER BY s.request, s.step");
  query.bind(1, run_id);
  std::vector<StepTraceRow> steps;
  while (query.step()) {
    StepTraceRow s;
    s.request = query.int64(0);
    s.step = query.int64(1);
    s.workload = query.text(2);
    s.category = query.text(3);
    s.record.drafter = query.text(4);
    s.record.draft_size = static_cast<int32_t>(query.int64(5));
    s.record.accepted_length = static_cast<int32_t>(query.int64(6));
    s.record.accepted_sources = query.text(7);
    if (!query.is_null(8)) s.record.root_entropy = query.real(8);
    s.record.draft_ms = query.real(9);
    s.record.verify_ms = query.real(10);
    s.record.accept_ms = query.real(11);
    s.record.lossless = query.int64(12) != 0;
    s.record.pruned = static_cast<int32_t>(query.int64(13));
    s.record.rescued = static_cast<int32_t>(query.int64(14));
    s.record.relaxed = static_cast<int32_t>(query.int64(15));
    s.record.accepted_verdicts = query.text(16);
    s.record.decision_scores = query.text(17);
    s.record.detail = parse_step_detail(query.text(18), db_.path() + ": run " + std::to_string(run_id) + " request " +
                                                            std::to_string(s.request) + " step " + std::to_string(s.step));
    steps.push_back(std::move(s));
  }
  return steps;
}

void TraceReader::export_steps(int64_t run_id, TraceFormat format, std::ostream& out) {
  const auto rows = steps(run_id);
  if (format == TraceFormat::Csv) {
    out << "run_id,request,workload,category,step,drafter,draft_size,accepted_length,accepted_sources,root_entropy,"
           "draft_ms,verify_ms,accept_ms,lossless,pruned,rescued,relaxed,accepted_verdicts,decision_scores,detail\n";
    for (const auto& s : rows) {
      const StepTrace& r = s.record;
      out << run_id << ',' << s.request << ',' << csv_field(s.workload) << ',' << csv_field(s.category) << ','
          << s.step << ',' << csv_field(r.drafter) << ',' << r.draft_size << ',' << r.accepted_length << ','
          << csv_field(r.accepted_sources) << ',' << (r.root_entropy ? number(*r.root_entropy) : "") << ','
          << number(r.draft_ms) << ',' << number(r.verify_ms) << ',' << number(r.accept_ms) << ','
          << (r.lossless ? 1 : 0) << ',' << r.pruned << ',' << r.rescued << ',' << r.relaxed << ','
          << csv_field(r.accepted_verdicts) << ',' << csv_field(r.decision_scores) << ',' << csv_field(step_detail_json(r.detail)) << '\n';
    }
    return;
  }
  for (const auto& s : rows) {
    const StepTrace& r = s.record;
    nlohmann::ordered_json line;
    line["run_id"] = run_id;
    line["request"] = s.request;
    line["workload"] = s.workload;
    line["category"] = s.category;
    line["step"] = s.step;
    line["drafter"] = r.drafter;
    line["draft_size"] = r.draft_size;
    line["accepted_length"] = r.accepted_length;
    line["accepted_sources"] = r.accepted_sources;
    line["root_entropy"] = r.root_entropy ? nlohmann::ordered_json(*r.root_entropy) : nlohmann::ordered_json(nullptr);
    line["draft_ms"] = r.draft_ms;
    line["verify_ms"] = r.verify_ms;
    line["accept_ms"] = r.accept_ms;
    line["lossless"] = r.lossless;
    line["pruned"] = r.pruned;
    line["rescued"] = r.rescued;
    line["relaxed"] = r.relaxed;
    line["accepted_verdicts"] = r.accepted_verdicts;
    line["decision_scores"] = r.decision_scores.empty()
                                  ? nlohmann::ordered_json(nullptr)
                                  : nlohmann::ordered_json(parse_json(r.decision_scores, db_.path() + ": run " + std::to_string(run_id) +
                                                                                             " step " + std::to_string(s.step) + " decision_scores"));
    // Keys sorted in the export, as it has always written them.
    line["detail"] = r.detail.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(nlohmann::json::parse(step_detail_json(r.detail)));
    // Text columns of a foreign file may hold invalid UTF-8: replaced, as the CSV export keeps them.
    out << line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
  }
}

}  // namespace specd
