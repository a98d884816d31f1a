// Sizes a user chooses are bounded before any work, each with one line naming the option: draft
// trees against the caches and the vocabulary, KV memory against --max-memory, threads against
// the CPUs, floating-point options against NaN, infinities and numbers too small to divide by.
#include "catch_torch.h"

#include <thread>

#include "cli_helpers.h"
#include "fixture_models.h"

using namespace specd;
using namespace specd::test;

TEST_CASE("draft trees are bounded by the draft cache and the vocabulary, before any work", "[cli][errors]") {
  const std::string dir = model_with_tokenizer("cli-tree-limits");
  const std::string base = "generate --model " + dir + " --draft " + dir + " --threads 1 --prompt 'def the thing' --max-new-tokens 12";
  const CliResult ar = run_cli(base);
  REQUIRE(ar.exit_code == 0);
  // Wide trees that fit (k x (depth - 1) <= 1024 rows): sd-tree and sam's fallback give AR's text.
  for (const std::string method : {"sd-tree", "sam"}) {
    const CliResult wide = run_cli(base + " --method " + method + " --draft-budget fixed --tree-top-k 200 --tree-depth 5 --tree-nodes 64");
    CAPTURE(method, wide.err);
    REQUIRE(wide.exit_code == 0);
    CHECK(wide.out == ar.out);
  }
  require_one_line_error(run_cli(base + " --method sd-tree --tree-top-k 4096"), "--tree-top-k");
  require_one_line_error(run_cli(base + " --method sam --tree-top-k 300"), "1200 tree rows");
  require_one_line_error(run_cli(base + " --method sd-tree --tree-top-k 302 --tree-depth 2"), "vocabulary of 301");
  require_one_line_error(run_cli(base + " --method sd-tree --tree-nodes 5000"), "--tree-nodes");
  require_one_line_error(run_cli(base + " --method sd --gamma 100000"), "--gamma");
  require_one_line_error(run_cli(base + " --method pld --pld-tokens 2000"), "--pld-tokens");
}

// A config allowing 2^24 positions (the loader's limit; 2e9 is refused there) used to size the
// caches (and RoPE's tables) by that maximum, gigabytes: now they follow the request, so a small
// request fits a small limit.
TEST_CASE("KV memory follows the request and is bounded by --max-memory", "[cli][errors]") {
  ModelConfig cfg = tiny_config("llama");
  cfg.max_position_embeddings = kMaxPositions;
  std::string dir = write_model("cli-huge-context", cfg);
  std::filesystem::copy_file(tiny_tokenizer(), dir + "/tokenizer.json");
  const std::string model = "generate --model " + dir + " --draft " + dir + " --threads 1 --prompt 'def the thing'";
  const std::string base = model + " --max-new-tokens 12";
  const CliResult ar = run_cli(base + " --max-memory 64M");
  CAPTURE(ar.err);
  REQUIRE(ar.exit_code == 0);
  const CliResult tree = run_cli(base + " --max-memory 64M --method sd-tree --draft-budget fixed");
  CAPTURE(tree.err);
  REQUIRE(tree.exit_code == 0);
  CHECK(tree.out == ar.out);

  const CliResult tight = run_cli(base + " --max-memory 20K");
  require_one_line_error(tight, "--max-memory");
  CHECK(tight.err.find("bytes") != std::string::npos);
  require_one_line_error(run_cli(model + " --max-new-tokens 1000000000 --max-memory 1G"), "--max-memory");
  require_one_line_error(run_cli(base + " --max-memory lots"), "--max-memory");
  require_one_line_error(run_cli(base + " --max-memory 8X"), "--max-memory");
  require_one_line_error(run_cli(base + " --max-memory 0"), "--max-memory");
}

TEST_CASE("thread counts and floating-point options out of range give one line naming the option", "[cli][errors]") {
  const std::string dir = model_with_tokenizer("cli-option-ranges");
  const std::string base = "generate --model " + dir + " --prompt hi --max-new-tokens 4";
  const std::string too_many = std::to_string(std::thread::hardware_concurrency() + 1);
  require_one_line_error(run_cli(base + " --threads 100000"), "--threads");
  require_one_line_error(run_cli(base + " --threads " + too_many), "--threads");
  require_one_line_error(run_cli(base + " --threads -1"), "--threads");
  for (const char* temperature : {"1e-320", "1e-7", "nan", "inf", "-1"}) {
    CAPTURE(temperature);
    require_one_line_error(run_cli(base + " --threads 1 --temperature " + temperature), "--temperature");
  }
  CHECK(run_cli(base + " --threads 1 --temperature 1e-6").exit_code == 0);
  for (const char* top_p : {"1e-320", "nan", "0"}) require_one_line_error(run_cli(base + " --threads 1 --top-p " + top_p), "--top-p");
  const std::string bench = "bench --methods csd --model " + dir + " --threads 1";
  for (const char* tau : {"1e-320", "nan", "inf"}) require_one_line_error(run_cli(bench + " --csd-tau " + tau), "--csd-tau");
}

// An error after work started (here the second prompt does not fit the context) is the only
// line on stderr: progress is drawn on terminals only and erased before the error.
TEST_CASE("an error during bench is one line, with no progress left on stderr", "[cli][errors]") {
  const std::string dir = model_with_tokenizer("cli-error-after-progress");
  const std::string workloads = std::string(SPECD_BINARY_DIR) + "/test-fixtures/cli-error-after-progress-workloads";
  std::filesystem::create_directories(workloads);
  write_text(workloads + "/qa.jsonl",
             "{\"id\": \"short\", \"category\": \"qa\", \"prompt\": \"def the thing\", \"max_new_tokens\": 4}\n"
             "{\"id\": \"long\", \"category\": \"qa\", \"prompt\": \"" + std::string(600, 'x') + "\", \"max_new_tokens\": 4}\n");
  const CliResult r = run_cli("bench --methods pld --model " + dir + " --workloads " + workloads + " --repeats 1 --threads 1");
  require_one_line_error(r, "workload long");
  CHECK(r.err.find('\r') == std::string::npos);
}
