// specd: calibrated speculative decoding. This file only routes to a subcommand and turns
// errors into one line and an exit code (2 for anything the user can fix).
#include <boost/program_options/errors.hpp>

#include <cstring>
#include <functional>
#include <iostream>
#include <map>

#include "aten_handoff.h"
#include "commands.h"
#include "util/error.h"

namespace {

struct Command {
  std::function<int(const specd::cli::Args&)> run;
  const char* summary;
};

const std::map<std::string, Command>& commands() {
  static const std::map<std::string, Command> table = {
      {"generate", {specd::cli::run_generate, "decode a continuation of a prompt"}},
      {"serve", {specd::cli::run_serve, "an OpenAI-compatible HTTP server with per-request speculation"}},
      {"tokenize", {specd::cli::run_tokenize, "print token ids for each line of text"}},
      {"bench", {specd::cli::run_bench, "measure decode speed and forward cost"}},
      {"init-model", {specd::cli::run_init_model, "write a random-weight Llama checkpoint (for benchmarks and tests)"}},
      {"calibrate", {specd::cli::run_calibrate, "offline calibration per model pair (csd, arc, sam-corpus)"}},
      {"audit", {specd::cli::run_audit, "coverage audits of calibrated policies (arc)"}},
      {"report", {specd::cli::run_report, "coverage-audit report of an artifact and its deployments (HTML + Markdown)"}},
      {"artifact", {specd::cli::run_artifact, "inspect, verify or merge per-pair calibration artifacts"}},
      {"methods", {specd::cli::run_methods, "list the decoding methods and their parameters (defaults, allowed values)"}},
      {"traces", {specd::cli::run_traces, "list or export the per-step traces of specd bench --traces"}},
  };
  return table;
}

void print_usage(std::ostream& out) {
  out << "usage: specd <command> [options]   (specd <command> --help for its options)\n\ncommands:\n";
  for (const auto& [name, command] : commands()) out << "  " << name << std::string(12 - name.size(), ' ') << command.summary << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  specd::cli::hand_off_to_aten(argc, argv);
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    print_usage(argc < 2 ? std::cerr : std::cout);
    return argc < 2 ? 2 : 0;
  }
  std::string name = argv[1];
  auto it = commands().find(name);
  if (it == commands().end()) {
    std::cerr << "specd: unknown command '" << name << "'\n";
    print_usage(std::cerr);
    return 2;
  }
  try {
    return it->second.run(specd::cli::Args(argv + 2, argv + argc));
  } catch (const specd::InputError& e) {
    std::cerr << "specd " << name << ": " << e.what() << "\n";
    return 2;
  } catch (const boost::program_options::error& e) {
    std::cerr << "specd " << name << ": " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "specd " << name << ": internal error: " << e.what() << "\n";
    return 1;
  }
}
