#pragma once
// Running the specd binary from tests as a user would: its exit code, stdout and stderr; small
// fixture files; the one-line error every bad input must give.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "catch_torch.h"
#include "fixture_models.h"

namespace specd::test {

struct CliResult {
  int exit_code;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

inline CliResult run_cli(const std::string& args, const std::string& stdin_path = "/dev/null") {
  // One output pair per process: ctest may run test cases in parallel.
  std::string base = std::string(SPECD_BINARY_DIR) + "/test-fixtures/cli-run-" + std::to_string(getpid());
  std::string command = std::string(SPECD_CLI) + " " + args + " > " + base + ".out 2> " + base + ".err < " + stdin_path;
  int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(base + ".out"), slurp(base + ".err")};
}

inline std::string tiny_tokenizer() { return std::string(SPECD_SOURCE_DIR) + "/tests/fixtures/tiny_byte_tokenizer.json"; }

// A model directory with the tiny byte-level tokenizer (ids 0..300, EOS 300).
inline std::string model_with_tokenizer(const std::string& name) {
  std::string dir = write_model(name, tiny_config("llama"));
  std::filesystem::copy_file(tiny_tokenizer(), dir + "/tokenizer.json");
  return dir;
}

inline void require_one_line_error(const CliResult& r, const std::string& must_mention) {
  CAPTURE(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find(must_mention) != std::string::npos);
}

}  // namespace specd::test
