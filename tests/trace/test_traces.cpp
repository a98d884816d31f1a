// Per-step traces: a run written to SQLite reads back equal, files of another schema version or
// foreign files are refused naming the file, a failure never leaves a half-written request, and
// steps export as CSV and JSON Lines.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "speculative/draft_tree.h"
#include "killed_writer.h"
#include "test_helpers.h"
#include "io/sqlite_db.h"
#include "speculative/step_metrics.h"
#include "trace/trace_fields.h"
#include "trace/trace_reader.h"
#include "trace/trace_schema.h"
#include "trace/trace_sink.h"
#include "util/error.h"

using namespace specd;

namespace {

RunInfo sample_run(const std::string& method) {
  RunInfo run;
  run.command_line = "specd bench --methods " + method + " --temperature 0";
  run.target_model = "data/models/demo-target";
  run.draft_model = method == "pld" ? "" : "data/models/demo-draft";
  run.method = method;
  run.options_json = R"({"gamma":4,"temperature":0})";
  run.specd_version = "0.1.0";
  run.specd_commit = "0123456789abcdef0123456789abcdef01234567";
  run.machine_json = R"({"cache_bytes":33554432,"cache_level":3,"cpu":"AMD EPYC 9B14","device":"cpu","features":["avx2"],"threads":2})";
  return run;
}

StepTrace step(int32_t draft_size, int32_t accepted, const std::string& sources, std::optional<double> entropy,
                bool lossless = true) {
  StepTrace s;
  s.drafter = sources.find('R') != std::string::npos ? "pld" : "draft-model";
  s.draft_size = draft_size;
  s.accepted_length = accepted;
  s.accepted_sources = sources;
  s.root_entropy = entropy;
  s.draft_ms = 0.25;
  s.verify_ms = 3.5;
  s.accept_ms = 0.125;
  s.lossless = lossless;
  return s;
}

RequestInfo request(int64_t index, const std::string& workload, const std::string& category) {
  RequestInfo r;
  r.index = index;
  r.workload = workload;
  r.category = category;
  r.prompt_tokens = 40 + index;
  return r;
}

bool same(const StepTrace& a, const StepTrace& b) {
  return a.drafter == b.drafter && a.draft_size == b.draft_size && a.accepted_length == b.accepted_length &&
         a.accepted_sources == b.accepted_sources && a.root_entropy == b.root_entropy && a.draft_ms == b.draft_ms &&
         a.verify_ms == b.verify_ms && a.accept_ms == b.accept_ms && a.lossless == b.lossless && a.pruned == b.pruned &&
         a.rescued == b.rescued && a.relaxed == b.relaxed && a.accepted_verdicts == b.accepted_verdicts &&
         a.decision_scores == b.decision_scores && step_detail_json(a.detail) == step_detail_json(b.detail);
}

// A step of a lossy policy: two drafted tokens pruned, one rescued with its logit gap, the
// pruner's and acceptor's detail.
StepTrace lossy_step() {
  StepTrace s = step(4, 3, "M,M,M", 0.75, false);
  s.pruned = 2;
  s.rescued = 1;
  s.accepted_verdicts = "A,C,A";
  s.decision_scores = "[-1.25]";
  s.detail.pruning = PruningDetail{"entropy", 0.25, 5, 3};
  s.detail.acceptance = ArcAcceptance{{LtsNode{2, 1, 7, 9, 0.125, 0.375, 0.5, true}}};
  return s;
}

RequestRecord record(RequestInfo info, std::vector<StepTrace> steps, std::vector<int32_t> tokens, double wall_ms,
                     std::string measurement = "") {
  return RequestRecord{std::move(info), std::move(steps), RequestOutcome{std::move(tokens), wall_ms, std::move(measurement)}};
}

// Writes one run: request 0 (code, two steps) and request 1 (summary, one step, unknown entropy).
int64_t write_sample(const std::string& path, const std::string& method = "sd") {
  SqliteTraceSink sink(path);
  const int run = sink.add_run(sample_run(method));
  sink.write_request(run, record(request(0, "code-001", "code"), {step(4, 2, "M,M", 1.0 / 3.0), lossy_step()}, {11, 12, 13}, 12.75,
                                 R"({"tokens":3})"));
  sink.write_request(run, record(request(1, "sum,002", "summary"), {step(8, 3, "R,R,M", std::nullopt)}, {7}, 3.0));
  sink.finish_run(run);
  return *sink.run_id(run);
}

}  // namespace

TEST_CASE("traces: a run reads back as written", "[traces]") {
  test::ScopedTempDir dir("traces");
  const std::string path = dir.file("t.sqlite");
  const int64_t id = write_sample(path);

  TraceReader reader(path);
  auto runs = reader.runs();
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].id == id);
  CHECK(runs[0].info.command_line == sample_run("sd").command_line);
  CHECK(runs[0].info.target_model == "data/models/demo-target");
  CHECK(runs[0].info.draft_model == "data/models/demo-draft");
  CHECK(runs[0].info.method == "sd");
  CHECK(runs[0].info.options_json == R"({"gamma":4,"temperature":0})");
  CHECK(runs[0].info.specd_version == "0.1.0");
  CHECK(runs[0].info.specd_commit == sample_run("sd").specd_commit);
  CHECK(runs[0].info.machine_json == sample_run("sd").machine_json);
  CHECK(runs[0].created_at.size() == 20);  // 2025-01-31T12:00:00Z
  CHECK(runs[0].finished_at.size() == 20);
  CHECK(runs[0].requests == 2);
  CHECK(runs[0].steps == 3);

  auto requests = reader.requests(id);
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].info.workload == "code-001");
  CHECK(requests[0].info.category == "code");
  CHECK(requests[0].info.prompt_tokens == 40);
  CHECK(requests[0].outcome.output_tokens == std::vector<int32_t>{11, 12, 13});
  CHECK(requests[0].outcome.wall_ms == 12.75);
  CHECK(requests[0].output_hash == token_hash({11, 12, 13}));
  CHECK(requests[0].outcome.measurement == R"({"tokens":3})");
  CHECK(requests[1].outcome.measurement.empty());
  CHECK(requests[1].info.workload == "sum,002");
  CHECK(requests[1].outcome.output_tokens == std::vector<int32_t>{7});

  auto steps = reader.steps(id);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].request == 0);
  CHECK(steps[0].step == 0);
  CHECK(same(steps[0].record, step(4, 2, "M,M", 1.0 / 3.0)));  // doubles round-trip exactly
  CHECK(steps[1].step == 1);
  CHECK(same(steps[1].record, lossy_step()));
  CHECK(steps[2].request == 1);
  CHECK(steps[2].step == 0);
  CHECK(steps[2].category == "summary");
  CHECK(same(steps[2].record, step(8, 3, "R,R,M", std::nullopt)));
}

TEST_CASE("traces: runs append to an existing file, a model-free method has no draft model", "[traces]") {
  test::ScopedTempDir dir("traces");
  const std::string path = dir.file("t.sqlite");
  const int64_t first = write_sample(path, "sd");
  const int64_t second = write_sample(path, "pld");
  CHECK(second != first);
  TraceReader reader(path);
  auto runs = reader.runs();
  REQUIRE(runs.size() == 2);
  CHECK(runs[1].info.method == "pld");
  CHECK(runs[1].info.draft_model.empty());
  CHECK(reader.steps(second).size() == 3);
  CHECK_THROWS_WITH(reader.steps(99), Catch::Contains("no run 99"));
}

TEST_CASE("traces: another schema version is refused naming the file and both versions", "[traces]") {
  test::ScopedTempDir dir("traces");
  const std::string path = dir.file("t.sqlite");
  write_sample(path);
  {
    sqlite::Database db(path, sqlite::Database::Mode::ReadWriteCreate);
    db.exec("PRAGMA user_version = 7");
  }
  CHECK_THROWS_AS(SqliteTraceSink(path), InputError);
  CHECK_THROWS_WITH(SqliteTraceSink(path), path + ": schema version 7, this specd writes 5 (write the traces to a new file)");
  CHECK_THROWS_WITH(TraceReader(path), path + ": schema version 7, this specd reads 1 to 5");
}

TEST_CASE("traces: version-1 to version-4 files still read, their new columns as 0 and empty, they are not appended to", "[traces]") {
  test::ScopedTempDir dir("traces");
  const std::string path = dir.file("t.sqlite");
  const int64_t id = write_sample(path);
  {  // what a version-4 file holds: no machine
    sqlite::Database db(path, sqlite::Database::Mode::ReadWriteCreate);
    db.exec("ALTER TABLE runs DROP COLUMN machine");
    db.exec("PRAGMA user_version = 4");
  }
  {
    TraceReader reader(path);
    CHECK(reader.runs().at(0).info.machine_json.empty());
    CHECK(same(reader.steps(id).at(1).record, lossy_step()));
  }
  CHECK_THROWS_WITH(SqliteTraceSink(path), Catch::Contains("schema version 4, this specd writes 5"));
  StepTrace v3 = lossy_step();
  v3.detail = StepDetail{};
  {  // what a version-3 file holds: no step detail
    sqlite::Database db(path, sqlite::Database::Mode::ReadWriteCreate);
    db.exec("ALTER TABLE steps DROP COLUMN detail");
    db.exec("PRAGMA user_version = 3");
  }
  {
    TraceReader reader(path);
    CHECK(same(reader.steps(id).at(1).record, v3));
    CHECK_FALSE(reader.runs().at(0).info.specd_commit.empty());
  }
  CHECK_THROWS_WITH(SqliteTraceSink(path), Catch::Contains("schema version 3, this specd writes 5"));
  {  // what a version-2 file holds: no commit, no request measurement
    sqlite::Database db(path, sqlite::Database::Mode::ReadWriteCreate);
    db.exec("ALTER TABLE runs DROP COLUMN specd_commit");
    db.exec("ALTER TABLE requests DROP COLUMN measurement");
    db.exec("PRAGMA user_version = 2");
  }
  {
    TraceReader reader(path);
    CHECK(reader.runs().at(0).info.specd_commit.empty());
    CHECK(reader.requests(id).at(0).outcome.measurement.empty());
    CHECK(same(reader.steps(id).at(1).record, v3));
  }
  CHECK_THROWS_WITH(SqliteTraceSink(path), Catch::Contains("schema version 2, this specd writes 5"));
  {  // what a version-1 file holds: the steps table without the version-2 columns
    sqlite::Database db(path, sqlite::Database::Mode::ReadWriteCreate);
    for (const char* column : {"pruned", "rescued", "relaxed", "accepted_verdicts", "decision_scores"})
      db.exec(std::string("ALTER TABLE steps DROP COLUMN ") + column);
    db.exec("PRAGMA user_version = 1");
  }
  TraceReader reader(path);
  auto steps = reader.steps(id);
  REQUIRE(steps.size() == 3);
  StepTrace old = v3;
  old.pruned = old.rescued = 0;
  old.accepted_verdicts = old.decision_scores = "";
  CHECK(same(steps[1].record, old));
  CHECK_THROWS_WITH(SqliteTraceSink(path), Catch::Contains("schema version 1, this specd writes 5"));
}

TEST_CASE("traces: files that are not traces databases are refused", "[traces]") {
  test::ScopedTempDir dir("traces");
  CHECK_THROWS_WITH(TraceReader(dir.file("missing.sqlite")), Catch::Contains("missing.sqlite: no such file"));

  const std::string foreign = dir.file("foreign.sqlite");
  {
    sqlite::Database db(foreign, sqlite::Database::Mode::ReadWriteCreate);
    db.exec("CREATE TABLE other (x INTEGER)");
  }
  CHECK_THROWS_WITH(SqliteTraceSink(foreign), Catch::Contains("foreign.sqlite: not a specd traces file"));

  const std::string text = dir.file("notes.txt");
  test::write_text_file(text, std::string(4096, 'x'));
  CHECK_THROWS_AS(SqliteTraceSink(text), InputError);
  CHECK_THROWS_AS(TraceReader(text), InputError);
}

TEST_CASE("traces: a failure never leaves a half-written request, nor half of an item's requests", "[traces]") {
  test::ScopedTempDir dir("traces");
  const std::string path = dir.file("t.sqlite");
  {
    SqliteTraceSink sink(path);
    const int sd = sink.add_run(sample_run("sd"));
    sink.write_request(sd, record(request(0, "a", "code"), {step(4, 1, "M", 1.0)}, {1, 2}, 1.0));

    // The same request index again, in one transaction with a new run's first request: the insert
    // fails, both roll back, the new run gets no row (and no id), and the sink goes on.
    const int pld = sink.add_run(sample_run("pld"));
    CHECK_THROWS_AS(sink.write_requests({{pld, record(request(0, "a", "code"), {step(2, 2, "R,R", 0.5)}, {1, 2}, 1.0)},
                                         {sd, record(request(0, "b", "code"), {step(4, 4, "M,M,M,M", 1.0)}, {3}, 1.0)}}),
                    InputError);
    CHECK_FALSE(sink.run_id(pld));
    sink.write_requests({{pld, record(request(0, "a", "code"), {step(2, 2, "R,R", 0.5)}, {1, 2}, 1.0)},
                         {sd, record(request(1, "c", "qa"), {step(2, 2, "R,R", 0.5)}, {4}, 1.0)}});
    CHECK(sink.run_id(pld));
    sink.finish_run(pld);
    // The process gives up before sd finishes: its run stays unfinished.
  }
  TraceReader reader(path);
  auto runs = reader.runs();
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].info.method == "sd");
  CHECK(runs[0].finished_at.empty());  // the run died
  CHECK(runs[1].finished_at.size() == 20);
  auto requests = reader.requests(runs[0].id);
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].info.workload == "a");
  CHECK(requests[1].info.workload == "c");
  auto steps = reader.steps(runs[0].id);
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].record.accepted_sources == "M");
  CHECK(steps[1].record.accepted_sources == "R,R");
  CHECK(reader.requests(runs[1].id).size() == 1);
}

TEST_CASE("traces: nothing is written before a request finishes, reading leaves no side files", "[traces]") {
  test::ScopedTempDir dir("traces");
  const std::string path = dir.file("t.sqlite");
  {
    SqliteTraceSink sink(path);
    const int run = sink.add_run(sample_run("sd"));
    sink.finish_run(run);  // a run with no finished request: no row, no file
  }
  CHECK_FALSE(std::filesystem::exists(path));
  write_sample(path);
  { TraceReader(path).runs(); }
  for (const char* side : {"-wal", "-shm", "-journal"}) CHECK_FALSE(std::filesystem::exists(path + side));
}

TEST_CASE("traces: an unfinished run is taken up again, finished or unknown runs are refused", "[traces]") {
  test::ScopedTempDir dir("traces");
  const std::string path = dir.file("t.sqlite");
  int64_t id = 0;
  {
    SqliteTraceSink sink(path);
    const int run = sink.add_run(sample_run("sd"));
    sink.write_request(run, record(request(0, "a", "code"), {step(4, 1, "M", 1.0)}, {1, 2}, 1.0));
    id = *sink.run_id(run);
  }
  {
    SqliteTraceSink sink(path);
    const int run = sink.resume_run(id);
    CHECK(sink.run_id(run) == id);
    sink.write_request(run, record(request(1, "b", "qa"), {step(4, 1, "M", 1.0)}, {3}, 1.0));
    sink.finish_run(run);
    CHECK_THROWS_AS(sink.write_request(run, record(request(2, "c", "qa"), {}, {4}, 1.0)), std::logic_error);
  }
  TraceReader reader(path);
  REQUIRE(reader.runs().size() == 1);
  CHECK(reader.runs()[0].finished_at.size() == 20);
  CHECK(reader.requests(id).size() == 2);
  SqliteTraceSink sink(path);
  CHECK_THROWS_WITH(sink.resume_run(id), path + ": run " + std::to_string(id) + " has finished (nothing to resume)");
  CHECK_THROWS_WITH(sink.resume_run(99), path + ": no run 99");
  CHECK_THROWS_WITH(SqliteTraceSink(dir.file("none.sqlite")).resume_run(1), Catch::Contains("none.sqlite: no such file"));
}

TEST_CASE("traces: calls out of order are bugs", "[traces]") {
  test::ScopedTempDir dir("traces");
  SqliteTraceSink sink(dir.file("t.sqlite"));
  CHECK_THROWS_AS(sink.write_request(0, record(request(0, "a", "code"), {}, {}, 0.0)), std::logic_error);
  CHECK_THROWS_AS(sink.finish_run(0), std::logic_error);
  const int run = sink.add_run(sample_run("sd"));
  sink.finish_run(run);
  CHECK_THROWS_AS(sink.finish_run(run), std::logic_error);
  CHECK_THROWS_AS(sink.run_id(7), std::logic_error);
}

TEST_CASE("traces: steps export as CSV and JSON Lines", "[traces]") {
  test::ScopedTempDir dir("traces");
  const std::string path = dir.file("t.sqlite");
  const int64_t id = write_sample(path);
  TraceReader reader(path);
  const std::string run = std::to_string(id);

  std::ostringstream csv;
  reader.export_steps(id, parse_trace_format("csv"), csv);
  CHECK(csv.str() ==
        "run_id,request,workload,category,step,drafter,draft_size,accepted_length,accepted_sources,root_entropy,"
        "draft_ms,verify_ms,accept_ms,lossless,pruned,rescued,relaxed,accepted_verdicts,decision_scores,detail\n" +
            run + ",0,code-001,code,0,draft-model,4,2,\"M,M\",0.3333333333333333,0.25,3.5,0.125,1,0,0,0,,,\n" + run +
            ",0,code-001,code,1,draft-model,4,3,\"M,M,M\",0.75,0.25,3.5,0.125,0,2,1,0,\"A,C,A\",[-1.25],"
            "\"{\"\"pruning\"\":{\"\"pruner\"\":\"\"entropy\"\",\"\"root_entropy_normalized\"\":0.25,\"\"drafted\"\":5,\"\"kept\"\":3,"
            "\"\"pruned_fraction\"\":0.4},\"\"acceptance\"\":{\"\"lts\"\":[{\"\"depth\"\":1,\"\"lts\"\":0.5,\"\"node\"\":2,"
            "\"\"relaxed\"\":true,\"\"target\"\":9,\"\"token\"\":7,\"\"u_emb\"\":0.125,\"\"u_logit\"\":0.375}]}}\"\n" + run +
            ",1,\"sum,002\",summary,0,pld,8,3,\"R,R,M\",,0.25,3.5,0.125,1,0,0,0,,,\n");

  std::ostringstream jsonl;
  reader.export_steps(id, parse_trace_format("jsonl"), jsonl);
  std::istringstream lines(jsonl.str());
  std::vector<nlohmann::json> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(nlohmann::json::parse(line));
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["run_id"] == id);
  CHECK(rows[0]["accepted_sources"] == "M,M");
  CHECK(rows[0]["root_entropy"].get<double>() == 1.0 / 3.0);
  CHECK(rows[0]["lossless"] == true);
  CHECK(rows[1]["lossless"] == false);
  CHECK(rows[1]["rescued"] == 1);
  CHECK(rows[1]["accepted_verdicts"] == "A,C,A");
  CHECK(rows[1]["decision_scores"] == nlohmann::json::array({-1.25}));
  CHECK(rows[0]["decision_scores"].is_null());
  CHECK(rows[1]["detail"]["acceptance"]["lts"][0]["lts"] == 0.5);
  CHECK(rows[0]["detail"].is_null());
  CHECK(rows[2]["workload"] == "sum,002");
  CHECK(rows[2]["root_entropy"].is_null());
  CHECK(rows[2]["step"] == 0);
  CHECK(rows[2]["request"] == 1);
  CHECK(jsonl.str().rfind("{\"run_id\":", 0) == 0);  // keys in column order

  CHECK_THROWS_WITH(parse_trace_format("xml"), Catch::StartsWith("trace format: "));
}

TEST_CASE("traces: step metrics (accepted sources, root entropy, output hash)", "[traces]") {
  DraftTree tree(5);
  const int32_t r = tree.add(0, 1, DraftSource::Retrieval);
  const int32_t m = tree.add(r, 2, DraftSource::Model);
  tree.add(0, 3, DraftSource::Successor);
  AcceptResult result;
  result.path = {0, r, m};
  CHECK(accepted_sources(tree, result) == "R,M");
  result.path = {0};
  CHECK(accepted_sources(tree, result).empty());

  std::vector<float> uniform(8, 0.3f);
  CHECK(softmax_entropy(uniform.data(), 8) == Approx(std::log(8.0)));
  std::vector<float> two{0.0f, 0.0f, -INFINITY, -INFINITY};
  CHECK(softmax_entropy(two.data(), 4) == Approx(std::log(2.0)));
  std::vector<float> sharp{100.0f, 0.0f, 0.0f};
  CHECK(softmax_entropy(sharp.data(), 3) == Approx(0.0).margin(1e-12));
  // A vocabulary-sized row through the vectorised path, against the definition in double.
  std::vector<float> wide(4096);
  for (size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<float>(8.0 * std::sin(0.37 * i) + 20.0);
  double z = 0, h = 0;
  for (float v : wide) z += std::exp(static_cast<double>(v) - 28.0);
  for (float v : wide) {
    const double p = std::exp(static_cast<double>(v) - 28.0) / z;
    h -= p * std::log(p);
  }
  CHECK(softmax_entropy(wide.data(), 4096) == Approx(h).epsilon(1e-5));

  CHECK(token_hash({}) == "cbf29ce484222325");  // FNV-1a 64 offset basis
  CHECK(token_hash({1, 2}) != token_hash({2, 1}));
  CHECK(token_hash({1, 2}).size() == 16);
}

TEST_CASE("traces: a file whose writer was killed inside a transaction reads back its finished requests", "[traces]") {
  test::ScopedTempDir dir("traces");
  const std::string path = dir.file("t.sqlite");
  const int64_t id = write_sample(path);
  test::kill_writer_inside_transaction(path, [](int) {
    return "INSERT INTO runs (created_at, command_line, target_model, method, options_json, specd_version) VALUES "
           "('t', '" + std::string(1000, 'x') + "', 'm', 'sd', '{}', '0')";
  });
  TraceReader reader(path);
  REQUIRE(reader.runs().size() == 1);
  CHECK(reader.requests(id).size() == 2);
  CHECK_FALSE(std::filesystem::exists(path + "-journal"));
}

TEST_CASE("step detail: every shape reads back as it was written, in the text earlier versions wrote", "[traces]") {
  StepDetail arc;
  arc.drafting = {{"trigger", "retrieve"}, {"h_min", nullptr}, {"key", 3}, {"seen", true}, {"winner_r", 2.0}};
  arc.pruning = PruningDetail{"entropy", 0.25, 4, 4};
  arc.acceptance = ArcAcceptance{{LtsNode{1, 1, 5, 6, 0.1, 0.2, std::nan(""), false}}};
  const std::string text = step_detail_json(arc);
  // Drafting values in the drafter's order, pruning's fraction derived, ARC's nodes' keys sorted
  // (as nlohmann::json wrote them), a NaN LTS as null.
  CHECK(text == R"({"drafting":{"trigger":"retrieve","h_min":null,"key":3,"seen":true,"winner_r":2.0},)"
                R"("pruning":{"pruner":"entropy","root_entropy_normalized":0.25,"drafted":4,"kept":4,"pruned_fraction":0.0},)"
                R"("acceptance":{"lts":[{"depth":1,"lts":null,"node":1,"relaxed":false,"target":6,"token":5,"u_emb":0.1,"u_logit":0.2}]}})");
  const StepDetail back = parse_step_detail(text, "t");
  CHECK(step_detail_json(back) == text);
  CHECK(back.drafting == arc.drafting);
  CHECK(std::isnan(std::get<ArcAcceptance>(back.acceptance).lts[0].lts));

  StepDetail csd;
  csd.acceptance = CsdAcceptance{{CsdRescue{5, 2, -1.5f}}};
  CHECK(step_detail_json(csd) == R"({"acceptance":{"rescues":[{"draft":5,"gap":-1.5,"target":2}]}})");
  StepDetail respec;
  respec.acceptance = RespecAcceptance{2, 1, 3, 1, {0.5}};
  CHECK(step_detail_json(respec) == R"({"acceptance":{"chains":2,"greedy_prefix":1,"accepted":3,"tries":1,"relaxed":1,"gaps":[0.5]}})");
  for (const StepDetail& d : {csd, respec}) CHECK(step_detail_json(parse_step_detail(step_detail_json(d), "t")) == step_detail_json(d));
  CHECK(step_detail_json(StepDetail{}).empty());
  CHECK(parse_step_detail("", "t").empty());
}

namespace {

// Every problem between a field table and its table in the schema: names and order after the
// key, SQL types, and which columns older versions lack.
template <typename Record>
void check_fields(sqlite::Database& db, const std::string& table, std::vector<std::string> columns,
                  const std::vector<TraceField<Record>>& fields) {
  sqlite::Statement info(db, "SELECT name, type FROM pragma_table_info('" + table + "') ORDER BY cid");
  std::vector<std::string> schema;
  while (info.step()) {
    schema.push_back(info.text(0));
    for (const auto& field : fields) {
      if (info.text(0) != field.name) continue;
      CAPTURE(table, field.name);
      const bool integer = field.kind == FieldKind::Integer || field.kind == FieldKind::Flag;
      CHECK(info.text(1) == (integer ? "INTEGER" : field.kind == FieldKind::Real ? "REAL" : "TEXT"));
      // A column added after version 1 reads as `absent` from older files; version-1 ones are always there.
      CHECK((field.since == 1) == (field.absent == nullptr));
    }
  }
  for (const auto& field : fields) columns.push_back(field.name);
  CAPTURE(table);
  CHECK(schema == columns);
}

}  // namespace

TEST_CASE("traces: the field tables are the schema's tables, column for column", "[traces]") {
  test::ScopedTempDir dir("traces");
  sqlite::Database db(dir.file("t.sqlite"), sqlite::Database::Mode::ReadWriteCreate);
  open_traces_schema(db, /*create=*/true);
  check_fields(db, "runs", {"id", "created_at", "finished_at"}, run_fields());
  check_fields(db, "requests", {"run_id", "request"}, request_fields());
  check_fields(db, "steps", {"run_id", "request", "step"}, step_fields());
}
