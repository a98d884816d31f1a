#include "trace/trace_reader.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "io/json_reader.h"
#include "trace/trace_fields.h"
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
  sqlite::Statement query(db_,
                          "SELECT id, created_at, finished_at, (SELECT count(*) FROM requests r WHERE r.run_id = runs.id), "
                          "(SELECT count(*) FROM steps s WHERE s.run_id = runs.id), " +
                              field_list(run_fields(), "", version_) + " FROM runs ORDER BY id");
  std::vector<TraceRun> runs;
  while (query.step()) {
    TraceRun run;
    run.id = query.int64(0);
    run.created_at = query.text(1);
    run.finished_at = query.text(2);
    run.requests = query.int64(3);
    run.steps = query.int64(4);
    read_fields(query, 5, run_fields(), run.info, db_.path() + ": run " + std::to_string(run.id));
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
  sqlite::Statement query(db_, "SELECT request, " + field_list(request_fields(), "", version_) +
                                   " FROM requests WHERE run_id = ?1 ORDER BY request");
  query.bind(1, run_id);
  std::vector<TraceRequest> requests;
  while (query.step()) {
    TraceRequest r;
    r.info.index = query.int64(0);
    read_fields(query, 1, request_fields(), r, db_.path() + ": run " + std::to_string(run_id) + " request " + std::to_string(r.info.index));
    requests.push_back(std::move(r));
  }
  return requests;
}

std::vector<StepTraceRow> TraceReader::steps(int64_t run_id) {
  require_run(run_id);
  sqlite::Statement query(db_, "SELECT s.request, s.step, r.workload, r.category, " + field_list(step_fields(), "s.", version_) +
                                   " FROM steps s JOIN requests r ON r.run_id = s.run_id AND r.request = s.request "
                                   "WHERE s.run_id = ?1 ORDER BY s.request, s.step");
  query.bind(1, run_id);
  std::vector<StepTraceRow> steps;
  while (query.step()) {
    StepTraceRow s;
    s.request = query.int64(0);
    s.step = query.int64(1);
    s.workload = query.text(2);
    s.category = query.text(3);
    const std::string where = db_.path() + ": run " + std::to_string(run_id) + " request " + std::to_string(s.request) + " step " +
                              std::to_string(s.step);
    read_fields(query, 4, step_fields(), s.record, where);
    steps.push_back(std::move(s));
  }
  return steps;
}

void TraceReader::export_steps(int64_t run_id, TraceFormat format, std::ostream& out) {
  const auto rows = steps(run_id);
  const auto& fields = step_fields();
  if (format == TraceFormat::Csv) {
    out << "run_id,request,workload,category,step";
    for (const auto& field : fields) out << ',' << field.name;
    out << '\n';
    for (const auto& s : rows) {
      out << run_id << ',' << s.request << ',' << csv_field(s.workload) << ',' << csv_field(s.category) << ',' << s.step;
      for (const auto& field : fields) {
        const TraceCell cell = field.get(s.record);
        out << ',';
        if (const auto* integer = std::get_if<int64_t>(&cell)) out << *integer;
        else if (const auto* real = std::get_if<double>(&cell)) out << number(*real);
        else if (const auto* text = std::get_if<std::string>(&cell)) out << csv_field(*text);
      }
      out << '\n';
    }
    return;
  }
  for (const auto& s : rows) {
    nlohmann::ordered_json line;
    line["run_id"] = run_id;
    line["request"] = s.request;
    line["workload"] = s.workload;
    line["category"] = s.category;
    line["step"] = s.step;
    const std::string where = db_.path() + ": run " + std::to_string(run_id) + " step " + std::to_string(s.step);
    for (const auto& field : fields) {
      const TraceCell cell = field.get(s.record);
      nlohmann::ordered_json& value = line[field.name];
      if (const auto* integer = std::get_if<int64_t>(&cell)) value = field.kind == FieldKind::Flag ? nlohmann::ordered_json(*integer != 0)
                                                                                                         : nlohmann::ordered_json(*integer);
      else if (const auto* real = std::get_if<double>(&cell)) value = *real;
      // JSON columns embedded with their keys sorted, as the export has always written them.
      else if (const auto* text = std::get_if<std::string>(&cell))
        value = field.kind == FieldKind::Json ? nlohmann::ordered_json(parse_json(*text, where + " " + field.name)) : nlohmann::ordered_json(*text);
      else value = nullptr;
    }
    // Text columns of a foreign file may hold invalid UTF-8: replaced, as the CSV export keeps them.
    out << line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
  }
}

}  // namespace specd
