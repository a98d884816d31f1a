// specd bench --traces as a user relies on it: each prompt's traces land as soon as it is
// measured, so a bench killed with SIGKILL at random points keeps every finished prompt, and
// `--resume` finishes the same runs with the same outputs and tallies as an uninterrupted bench.
// The traces record the real command line, every option, the version, the commit and the machine
// (a bench resumes only on the machine it began on); the JSON the machine too.
#include "catch_torch.h"

#include <sstream>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "fixture_models.h"
#include "io/sqlite_db.h"
#include "test_helpers.h"
#include "trace/trace_reader.h"
#include "util/error.h"
#include "util/machine.h"
#include "util/version.h"

using namespace specd;
using namespace specd::test;

namespace {

std::string own(const std::string& name) { return name + "-" + std::to_string(getpid()); }

struct Setup {
  std::string target, draft, workloads, out;
};

// A target, a different draft and two workload files of 4 prompts each.
const Setup& setup() {
  static const Setup s = [] {
    Setup made;
    made.target = model_with_tokenizer(own("resume-target"));
    made.draft = write_model(own("resume-draft"), tiny_config("llama"), DType::F32, 5);
    std::filesystem::copy_file(tiny_tokenizer(), made.draft + "/tokenizer.json", std::filesystem::copy_options::overwrite_existing);
    made.workloads = fixture_dir(own("resume-workloads"));
    std::string code, qa;
    for (int i = 0; i < 4; ++i) {
      code += "{\"id\": \"code-" + std::to_string(i) + "\", \"category\": \"code\", \"prompt\": \"def f" + std::to_string(i) +
              "(x): return x\", \"max_new_tokens\": 40}\n";
      qa += "{\"id\": \"qa-" + std::to_string(i) + "\", \"category\": \"qa\", \"prompt\": \"the quick fox " + std::to_string(i) +
            "\", \"max_new_tokens\": 40}\n";
    }
    write_text(made.workloads + "/code.jsonl", code);
    write_text(made.workloads + "/qa.jsonl", qa);
    made.out = fixture_dir(own("resume-out"));
    return made;
  }();
  return s;
}

std::string bench(const std::string& traces, const std::string& json, const std::string& extra = "") {
  const Setup& s = setup();
  // A fixed draft budget: the cost-aware one adapts to measured times, so its drafts (and MAT)
  // differ from run to run, resumed or not.
  return "bench --methods sd,pld --threads 1 --repeats 1 --max-prompts 4 --draft-budget fixed --model " + s.target + " --draft " + s.draft +
         " --workloads " + s.workloads + " --traces " + traces + " --json " + json + " " + extra;
}

// A command line as a run records it: absolute paths relative to the working directory (the
// recorded line replays from there and carries no machine's layout).
std::string as_recorded(const std::string& command) {
  std::istringstream words(command);
  std::string word, line = "specd";
  while (words >> word) line += " " + (word[0] == '/' ? std::filesystem::path(word).lexically_proximate(std::filesystem::current_path()).string() : word);
  return line;
}

std::string fresh(const std::string& name) {
  const std::string path = setup().out + "/" + name;
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return path;
}

// method -> the output hash of each request, in order.
std::map<std::string, std::vector<std::string>> outputs(const std::string& traces) {
  TraceReader reader(traces);
  std::map<std::string, std::vector<std::string>> by_method;
  for (const TraceRun& run : reader.runs()) {
    auto& hashes = by_method[run.info.method];
    for (const TraceRequest& r : reader.requests(run.id)) hashes.push_back(r.output_hash);
  }
  return by_method;
}

// What must not depend on timing: tokens, MAT, acceptance, equality with AR, per method and category.
nlohmann::json deterministic(const std::string& json_path) {
  const auto report = nlohmann::json::parse(slurp(json_path));
  nlohmann::json kept;
  for (const auto& [method, categories] : report["results"].items())
    for (const auto& [category, j] : categories.items())
      kept[method][category] = {j["prompts"], j["new_tokens"], j["mat"], j["acceptance_rate"], j["equal_to_ar"]};
  return kept;
}

// Until `pid` has died. It is not this process's child (the shell that started it exited), so it
// may linger as a zombie until its new parent reaps it: a zombie has died.
void wait_gone(pid_t pid) {
  for (int i = 0; i < 2000 && kill(pid, 0) == 0; ++i) {
    const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z') return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Opened read-write, as a writer that died may have left a transaction to roll back.
bool holds_no_tables(const std::string& path) {
  sqlite::Database db(path, sqlite::Database::Mode::ReadExisting);
  sqlite::Statement tables(db, "SELECT count(*) FROM sqlite_master");
  tables.step();
  return tables.int64(0) == 0;
}

}  // namespace

TEST_CASE("bench --traces: killed with SIGKILL at random points, the finished prompts stay and --resume completes the runs",
          "[cli][bench]") {
  const std::string ref_traces = fresh("reference.sqlite"), ref_json = fresh("reference.json");
  const auto start = std::chrono::steady_clock::now();
  CliResult r = run_cli(bench(ref_traces, ref_json));
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto expected = outputs(ref_traces);
  REQUIRE(expected.at("ar").size() == 8);
  CHECK(expected.at("sd") == expected.at("ar"));  // greedy: lossless methods equal AR

  // The metadata is true: the command as typed, every option (defaults too), version and commit.
  {
    TraceReader reader(ref_traces);
    const TraceRun run = reader.runs().at(0);
    CHECK(run.info.command_line == as_recorded(bench(ref_traces, ref_json)));
    const auto options = nlohmann::json::parse(run.info.options_json);
    CHECK(options["methods"] == "sd,pld");
    CHECK(options["repeats"] == 1);
    CHECK(options["temperature"] == 0.0);
    CHECK(options["threads"] == 1);
    CHECK(options.contains("gamma"));  // a default the command line did not give
    CHECK(options.contains("tree-top-k"));
    CHECK(run.info.specd_version == specd_version());
    CHECK(run.info.specd_commit == specd_git_commit());
    CHECK(!run.finished_at.empty());
    // The speedups are this machine's: the JSON and the printed table say which one.
    const auto report = nlohmann::json::parse(read_text_file(ref_json));
    CHECK(report["machine"] == machine_json(read_cpuinfo(), 1, "cpu"));
    CHECK(nlohmann::json::parse(run.info.machine_json) == report["machine"]);
    CHECK(r.out.find("measured on " + machine_text(report["machine"]) + "\n") != std::string::npos);
  }

  // Kill points: a random moment after the first prompt's traces landed (found by polling the
  // file), so the kill hits the measuring, not the start-up; or, once, a random moment of the start.
  std::mt19937 rng(11);
  int resumed_midway = 0;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const std::string traces = fresh("killed-" + std::to_string(attempt) + ".sqlite");
    const std::string json = fresh("killed-" + std::to_string(attempt) + ".json");
    const std::string pid_file = fresh("killed-" + std::to_string(attempt) + ".pid");
    const std::string start_command =
        "sh -c 'exec " + std::string(SPECD_CLI) + " " + bench(traces, json) + " > /dev/null 2>&1' & echo $! > " + pid_file;
    REQUIRE(std::system(start_command.c_str()) == 0);
    const pid_t pid = static_cast<pid_t>(std::stol(slurp(pid_file)));
    const auto started = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
    double delay = std::uniform_real_distribution<double>(0.0, 0.1)(rng);
    if (attempt == 0) {
      delay = std::uniform_real_distribution<double>(0.0, 0.9)(rng) * seconds;
    } else {
      auto has_request = [&] {
        if (!std::filesystem::exists(traces)) return false;
        try {
          TraceReader reader(traces);
          for (const TraceRun& run : reader.runs())
            if (run.requests > 0) return true;
        } catch (const InputError&) {  // the schema is being written
        }
        return false;
      };
      while (!has_request() && elapsed() < 10 * seconds + 30) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    kill(pid, SIGKILL);  // no handler runs, as with kill -9 (or a machine that loses power)
    wait_gone(pid);
    CAPTURE(attempt, delay, elapsed());
    // The report is written to an unnamed temporary (io/atomic_file.h): a kill leaves none.
    for (const auto& entry : std::filesystem::directory_iterator(setup().out))
      CHECK(entry.path().string().rfind(json + ".tmp-", 0) != 0);
    if (std::filesystem::exists(json)) {  // its report was written before the kill (runs are marked finished after it)
      CHECK(outputs(traces) == expected);
      continue;
    }
    bool any_finished = false;
    // A kill between the file's creation and its schema's commit leaves an empty database
    // (SQLite rolls the rest back); any other file holds the whole schema and whole requests.
    if (std::filesystem::exists(traces) && !holds_no_tables(traces)) {
      // Whatever the moment of the kill, every request in the file is whole and the methods agree.
      TraceReader reader(traces);
      std::optional<int64_t> count;
      for (const TraceRun& run : reader.runs()) {
        CHECK(run.finished_at.empty());
        const auto requests = reader.requests(run.id);
        if (count) CHECK(static_cast<int64_t>(requests.size()) == *count);
        count = static_cast<int64_t>(requests.size());
        for (size_t i = 0; i < requests.size(); ++i)
          CHECK(requests[i].output_hash == expected.at(run.info.method).at(i));
        any_finished = any_finished || !requests.empty();
      }
    }
    if (!any_finished) {  // killed before the first prompt finished: nothing to resume, said in one line
      require_one_line_error(run_cli(bench(traces, json, "--resume")), traces);
      fresh(traces.substr(traces.rfind('/') + 1));
      REQUIRE(run_cli(bench(traces, json)).exit_code == 0);
    } else {
      ++resumed_midway;
      CliResult resumed = run_cli(bench(traces, json, "--resume"));
      CAPTURE(resumed.err);
      REQUIRE(resumed.exit_code == 0);
      CHECK(resumed.out.find("prompts measured by the interrupted run") != std::string::npos);
    }
    CHECK(outputs(traces) == expected);
    CHECK(deterministic(json) == deterministic(ref_json));
    TraceReader reader(traces);
    for (const TraceRun& run : reader.runs()) CHECK(!run.finished_at.empty());
  }
  CHECK(resumed_midway >= 1);  // the polled kills land while prompts are measured
  // Nothing left to resume once the runs finished; other options do not match the interrupted run.
  require_one_line_error(run_cli(bench(ref_traces, ref_json, "--resume")), "no unfinished run");
}

TEST_CASE("bench --resume: refused without traces, for a learning policy, and for other options", "[cli][bench]") {
  const std::string traces = fresh("refused.sqlite"), json = fresh("refused.json");
  require_one_line_error(run_cli("bench --methods pld --resume --threads 1 --model " + setup().target + " --workloads " + setup().workloads),
                         "--resume");
  require_one_line_error(run_cli("bench --methods csd --resume --threads 1 --traces " + traces + " --model " + setup().target +
                                 " --draft " + setup().draft + " --workloads " + setup().workloads),
                         "learns online");
  // Runs left unfinished (as by a kill after the last prompt): other options do not match them;
  // the same options resume with nothing left to measure and the same tallies.
  REQUIRE(run_cli(bench(traces, json)).exit_code == 0);
  const auto before = deterministic(json);
  {
    sqlite::Database db(traces, sqlite::Database::Mode::ReadWriteCreate);
    db.exec("UPDATE runs SET finished_at = NULL");
  }
  require_one_line_error(run_cli(bench(traces, json, "--resume --seed 3")), "no unfinished run of");
  // Runs measured on another machine (or on one the traces do not name): their speedups and this
  // machine's would not compare.
  {
    sqlite::Database db(traces, sqlite::Database::Mode::ReadWriteCreate);
    db.exec("UPDATE runs SET machine = json_set(machine, '$.cpu', 'another CPU')");
  }
  require_one_line_error(run_cli(bench(traces, json, "--resume")), "was measured on another CPU, ");
  {
    sqlite::Database db(traces, sqlite::Database::Mode::ReadWriteCreate);
    db.exec("UPDATE runs SET machine = NULL");
  }
  require_one_line_error(run_cli(bench(traces, json, "--resume")), "was measured on an unrecorded machine, ");
  {
    sqlite::Database db(traces, sqlite::Database::Mode::ReadWriteCreate);
    sqlite::Statement(db, "UPDATE runs SET machine = ?").bind(1, machine_json(read_cpuinfo(), 1, "cpu").dump()).run();
  }
  // An empty database (a bench killed before its schema committed) holds nothing to resume; a
  // bench without --resume writes its traces there.
  const std::string empty = fresh("empty.sqlite"), empty_json = fresh("empty.json");
  write_text(empty, "");
  require_one_line_error(run_cli(bench(empty, empty_json, "--resume")), "nothing to resume");
  CHECK(!std::filesystem::exists(empty_json));
  REQUIRE(run_cli(bench(empty, empty_json)).exit_code == 0);
  CHECK(deterministic(empty_json) == before);
  CliResult resumed = run_cli(bench(traces, json, "--resume"));
  CAPTURE(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(resumed.out.find("8 prompts measured by the interrupted run, 0 now") != std::string::npos);
  CHECK(deterministic(json) == before);
  TraceReader reader(traces);
  for (const TraceRun& run : reader.runs()) CHECK(!run.finished_at.empty());
}
