// specd report as a user runs it: a tiny pair calibrated (csd and arc into one artifact) and
// deployed (bench with traces and JSON) gives report.html and report.md with every section, and
// ARC's coverage at deploy equal to what `specd audit arc --traces` measures; bad inputs are
// refused in one line naming the file, with no report written and an existing one left as it was.
#include "catch_torch.h"

#include <filesystem>

#include "cli_helpers.h"
#include "fixture_models.h"

using namespace specd;
using namespace specd::test;

namespace {

std::string own(const std::string& name) { return name + "-" + std::to_string(getpid()); }

struct Deployed {
  std::string target, draft, workloads, artifact, traces, bench;
};

// One thread each: ctest runs other test processes beside this one.
const Deployed& deployed() {
  static const Deployed d = [] {
    Deployed made;
    made.target = model_with_tokenizer(own("report-target"));
    made.draft = write_model(own("report-draft"), tiny_config("llama"), DType::F32, 99);
    std::filesystem::copy_file(tiny_tokenizer(), made.draft + "/tokenizer.json", std::filesystem::copy_options::overwrite_existing);
    const std::string dir = fixture_dir(own("report-files"));
    made.workloads = dir + "/workloads";
    std::filesystem::create_directories(made.workloads);
    write_text(made.workloads + "/code.jsonl", "{\"id\": \"c-1\", \"category\": \"code\", \"prompt\": \"def f(x):\", \"max_new_tokens\": 32}\n"
                                               "{\"id\": \"c-2\", \"category\": \"code\", \"prompt\": \"import sys\", \"max_new_tokens\": 32}\n");
    write_text(made.workloads + "/prose.jsonl", "{\"id\": \"p-1\", \"category\": \"prose\", \"prompt\": \"the quick\", \"max_new_tokens\": 32}\n"
                                                "{\"id\": \"p-2\", \"category\": \"prose\", \"prompt\": \"the the\", \"max_new_tokens\": 32}\n");
    const std::string prompts = dir + "/prompts.jsonl";
    std::string lines;
    for (const char* text : {"def the thing", "the quick fox", "import os", "for i in range", "the the the", "class A:", "x = 1"})
      lines += std::string("{\"id\": \"q-") + std::to_string(lines.size()) + "\", \"category\": \"calibration\", \"prompt\": \"" + text +
               "\", \"max_new_tokens\": 40}\n";
    write_text(prompts, lines);
    made.artifact = dir + "/artifact";
    made.traces = dir + "/traces.sqlite";
    made.bench = dir + "/bench.json";
    const std::string pair = " --threads 1 --target " + made.target + " --draft " + made.draft + " --prompts " + prompts + " --out " + made.artifact;
    for (const std::string& command : {"calibrate csd" + pair,
                                       "calibrate arc" + pair + " --audit-prompts " + made.workloads + " --audit-per-category 1 --delta 0.1",
                                       "bench --threads 1 --model " + made.target + " --draft " + made.draft + " --artifact " + made.artifact +
                                           " --methods sd,csd,arc --temperature 1 --draft-budget fixed --max-prompts 2 --repeats 1 --workloads " +
                                           made.workloads + " --traces " + made.traces + " --json " + made.bench}) {
      const CliResult r = run_cli(command);
      INFO(command);
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
    }
    return made;
  }();
  return d;
}

std::string report_args(const Deployed& d, const std::string& out) {
  return "report --artifact " + d.artifact + " --traces " + d.traces + " --bench " + d.bench + " --model " + d.target + " --workloads " +
         d.workloads + " --threads 1 --out " + out;
}

}  // namespace

TEST_CASE("report: a calibrated and deployed pair gives both files with every section", "[report][cli]") {
  const Deployed& d = deployed();
  const std::string out = fixture_dir(own("report-out")) + "/report";
  const CliResult r = run_cli(report_args(d, out));
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("report.html") != std::string::npos);
  const std::string html = slurp(out + "/report.html"), md = slurp(out + "/report.md");
  for (const char* id : {"verdict", "provenance", "arc-coverage", "csd-memory", "sweeps", "deployment", "drift", "what-if"})
    CHECK(html.find(std::string("id=\"") + id + "\"") != std::string::npos);
  for (const char* fetch : {"src=\"http", "href=\"http", "src=\"//", "href=\"//"})  // nothing the page could fetch
    CHECK(html.find(fetch) == std::string::npos);
  CHECK(md.find("# ") != std::string::npos);
  CHECK(md.find("Sweeps") != std::string::npos);
  // Every input above was named by an absolute path; nothing written shows this machine's layout.
  CHECK(md.find(SPECD_BINARY_DIR) == std::string::npos);
  CHECK(html.find(SPECD_BINARY_DIR) == std::string::npos);
}

TEST_CASE("report: bad inputs are refused in one line naming the file, and no report is left behind", "[report][cli][errors]") {
  const Deployed& d = deployed();
  const std::string dir = fixture_dir(own("report-bad"));
  const std::string out = dir + "/report";
  remove_tree(out);

  require_one_line_error(run_cli("report --artifact " + dir + "/missing --out " + out), dir + "/missing");
  CHECK(!std::filesystem::exists(out));

  write_text(dir + "/not.json", "{ nope");
  require_one_line_error(run_cli("report --artifact " + d.artifact + " --no-model --bench " + dir + "/not.json --out " + out), dir + "/not.json");
  write_text(dir + "/other.json", "{\"methods\": []}");
  require_one_line_error(run_cli("report --artifact " + d.artifact + " --no-model --bench " + dir + "/other.json --out " + out), "results");
  CHECK(!std::filesystem::exists(out));

  // An existing report stays as it was when the new one fails.
  std::filesystem::create_directories(out);
  write_text(out + "/report.md", "the earlier report\n");
  write_text(dir + "/not-traces.sqlite", "plain text, not SQLite");
  require_one_line_error(run_cli("report --artifact " + d.artifact + " --no-model --traces " + dir + "/not-traces.sqlite --out " + out),
                         dir + "/not-traces.sqlite");
  CHECK(slurp(out + "/report.md") == "the earlier report\n");
  require_one_line_error(run_cli("report --artifact " + d.artifact + " --out " + out + " --model " + d.draft), "draft");
  CHECK(slurp(out + "/report.md") == "the earlier report\n");
}

TEST_CASE("report: --out replaces only an earlier report, never other files or a link's target, unless --force", "[report][cli][errors]") {
  const Deployed& d = deployed();
  const std::string dir = fixture_dir(own("report-out-guard"));
  auto report_to = [&](const std::string& out, const std::string& extra = "") {
    return run_cli("report --artifact " + d.artifact + " --no-model --bench " + d.bench + " --out " + out + extra);
  };
  // The artifact itself, named as --out by mistake, is refused and stays whole.
  const std::string manifest = slurp(d.artifact + "/manifest.json");
  require_one_line_error(report_to(d.artifact), "--out: " + d.artifact + " holds '");
  CHECK(slurp(d.artifact + "/manifest.json") == manifest);
  // A folder of the user's: refused, its file kept; with --force replaced whole.
  const std::string mine = dir + "/mine";
  std::filesystem::create_directories(mine);
  write_text(mine + "/notes.txt", "keep me\n");
  require_one_line_error(report_to(mine), "holds 'notes.txt', which is not part of a report");
  CHECK(slurp(mine + "/notes.txt") == "keep me\n");
  REQUIRE(report_to(mine, " --force").exit_code == 0);
  CHECK(std::filesystem::exists(mine + "/report.html"));
  CHECK(!std::filesystem::exists(mine + "/notes.txt"));
  // An earlier report is replaced without --force; so is an empty directory.
  REQUIRE(report_to(mine).exit_code == 0);
  std::filesystem::create_directories(dir + "/empty");
  REQUIRE(report_to(dir + "/empty").exit_code == 0);
  // A symlinked --out is refused even with --force: replacing it would empty the link's target.
  const std::string target = dir + "/target", link = dir + "/link";
  std::filesystem::create_directories(target);
  write_text(target + "/notes.txt", "keep me\n");
  std::filesystem::remove(link);
  std::filesystem::create_directory_symlink(target, link);
  require_one_line_error(report_to(link, " --force"), link + " is a symlink");
  CHECK(slurp(target + "/notes.txt") == "keep me\n");
}
