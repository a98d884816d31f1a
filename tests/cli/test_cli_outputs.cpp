// Every output is checked when the options are parsed, before any work: a FIFO, a device or a
// directory where a file belongs, an unwritable place, two outputs naming one file (in any
// spelling) and a model directory that already holds files are refused with one line naming the
// option; a symlinked output is written through to its target. Commands that print a listing
// print nothing when they fail halfway.
#include <sys/stat.h>

#include "catch_torch.h"

#include "cli_helpers.h"
#include "fixture_models.h"
#include "io/sqlite_db.h"
#include "trace/trace_schema.h"

using namespace specd;
using namespace specd::test;
namespace fs = std::filesystem;

namespace {

std::string scratch(const std::string& name) {
  const std::string dir = std::string(SPECD_BINARY_DIR) + "/test-fixtures/" + name;
  remove_tree(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("outputs that are not regular files, or not writable, are refused before any work", "[cli][errors][outputs]") {
  const std::string dir = scratch("cli-bad-outputs");
  const std::string bench = "bench --methods pld --threads 1 --max-prompts 1 --repeats 1";
  REQUIRE(::mkfifo((dir + "/pipe").c_str(), 0644) == 0);
  write_text(dir + "/file", "x");
  fs::create_directories(dir + "/a-dir");

  require_one_line_error(run_cli(bench + " --json /dev/full"), "--json /dev/full: is a character device");
  require_one_line_error(run_cli(bench + " --json " + dir + "/pipe"), "is a FIFO");
  CHECK(fs::is_fifo(dir + "/pipe"));
  require_one_line_error(run_cli(bench + " --traces " + dir + "/a-dir"), "--traces");
  require_one_line_error(run_cli(bench + " --json " + dir + "/file/report.json"), "is not a directory");
  fs::create_symlink("pipe", dir + "/to-pipe");
  require_one_line_error(run_cli(bench + " --json " + dir + "/to-pipe"), "symbolic link's target");
  require_one_line_error(run_cli("generate --method csd --prompt hi --threads 1 --save-memory " + dir + "/file"), "--save-memory");
  require_one_line_error(run_cli("calibrate sam-corpus --threads 1 --out " + dir + "/pipe"), "--out");
  require_one_line_error(run_cli("artifact merge --out /dev/null " + dir), "--out /dev/null");
  require_one_line_error(run_cli("init-model --out " + dir + "/file"), "--out");
  CHECK(fs::is_character_file("/dev/full"));
  CHECK(fs::is_character_file("/dev/null"));
}

TEST_CASE("two outputs naming one file are refused, in any spelling", "[cli][errors][outputs]") {
  const std::string dir = scratch("cli-same-outputs");
  const std::string bench = "bench --methods pld --threads 1 --max-prompts 1 --repeats 1";
  require_one_line_error(run_cli(bench + " --json " + dir + "/x --traces " + dir + "/x"), "is the same file as --json");
  require_one_line_error(run_cli(bench + " --json " + dir + "/x --traces " + dir + "/../cli-same-outputs/./x"), "same file");
  fs::create_symlink("real.sqlite", dir + "/link.sqlite");
  require_one_line_error(run_cli(bench + " --json " + dir + "/link.sqlite --traces " + dir + "/real.sqlite"), "same file");
  write_text(dir + "/real.json", "{}");
  fs::create_hard_link(dir + "/real.json", dir + "/hard.json");
  require_one_line_error(run_cli(bench + " --json " + dir + "/real.json --traces " + dir + "/hard.json"), "same file");
  require_one_line_error(run_cli(bench + " --json " + dir + "/y --save-memory " + dir + "/y"), "same file");
}

TEST_CASE("init-model refuses a directory that holds files, replaces it whole with --force, and writes through a link",
          "[cli][outputs]") {
  const std::string dir = scratch("cli-init-model-out");
  const std::string init = "init-model --layers 1 --hidden 32 --heads 2 --ffn 48 --vocab 64 --context 32 --out ";
  fs::create_directories(dir + "/model");
  write_text(dir + "/model/notes.txt", "my weights");
  require_one_line_error(run_cli(init + dir + "/model"), "--force");
  CHECK(slurp(dir + "/model/notes.txt") == "my weights");

  CliResult forced = run_cli(init + dir + "/model --force");
  CAPTURE(forced.err);
  REQUIRE(forced.exit_code == 0);
  CHECK(fs::exists(dir + "/model/config.json"));
  CHECK(fs::exists(dir + "/model/model.safetensors"));
  CHECK_FALSE(fs::exists(dir + "/model/notes.txt"));  // replaced whole: no stale files beside the new weights

  fs::create_directories(dir + "/store");
  fs::create_symlink("store/linked", dir + "/linked");
  CliResult linked = run_cli(init + dir + "/linked");
  CAPTURE(linked.err);
  REQUIRE(linked.exit_code == 0);
  CHECK(fs::is_symlink(dir + "/linked"));
  CHECK(fs::exists(dir + "/store/linked/config.json"));
  CHECK(run_cli(init + dir + "/empty-is-fine").exit_code == 0);
  for (const auto& entry : fs::directory_iterator(dir)) CHECK(entry.path().filename().string().find(".tmp-") == std::string::npos);
}

TEST_CASE("tokenize and traces list print nothing when they fail halfway", "[cli][errors]") {
  const std::string dir = scratch("cli-partial-listings");
  write_text(dir + "/lines.txt", "def the thing\nthe quick fox\ncaf\xE9 au lait\n");
  require_one_line_error(run_cli("tokenize --tokenizer " + tiny_tokenizer(), dir + "/lines.txt"), "standard input line 3");

  // A traces file whose runs table reads but whose steps table is gone: the listing fails after
  // its header line.
  {
    sqlite::Database db(dir + "/traces.sqlite", sqlite::Database::Mode::ReadWriteCreate);
    db.exec("PRAGMA user_version = " + std::to_string(kTracesSchemaVersion) +
            "; CREATE TABLE runs (id INTEGER PRIMARY KEY, created_at TEXT, finished_at TEXT, command_line TEXT, target_model TEXT, "
            "draft_model TEXT, method TEXT, options_json TEXT, specd_version TEXT);"
            "CREATE TABLE requests (run_id INTEGER); INSERT INTO runs (id, method) VALUES (1, 'pld');");
  }
  require_one_line_error(run_cli("traces list --file " + dir + "/traces.sqlite"), "traces.sqlite");
}
