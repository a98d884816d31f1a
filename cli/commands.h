#pragma once
// One function per `specd` subcommand; args excludes "specd" and the subcommand name.
#include <string>
#include <vector>

namespace specd::cli {

using Args = std::vector<std::string>;

int run_generate(const Args& args);
int run_tokenize(const Args& args);
int run_bench(const Args& args);
int run_bench_methods(const Args& args);  // specd bench --methods ...
int run_init_model(const Args& args);
int run_traces(const Args& args);
int run_calibrate(const Args& args);
// specd calibrate sweep (cmd_calibrate_sweep.cpp), dispatched from run_calibrate.
int run_calibrate_sweep(const Args& args);
int run_artifact(const Args& args);
int run_audit(const Args& args);
int run_report(const Args& args);  // cmd_report.cpp: the coverage-audit report (analysis/)
int run_methods(const Args& args);  // the methods and their parameters
int run_serve(const Args& args);  // cmd_serve.cpp: the OpenAI-compatible server (serve/)

}  // namespace specd::cli
