// specd methods: the decoding methods and their parameters, from the registry and the parameter
// table (the same declarations the flags, sweeps and artifacts use).
#include <cstdio>
#include <string>

#include "method_options.h"
#include "options.h"
#include "speculative/method_params.h"
#include "methods/method_registry.h"

namespace specd::cli {

int run_methods(const Args& args) {
  bool markdown = false;
  po::options_description desc("specd methods");
  desc.add_options()("markdown", po::bool_switch(&markdown), "print the parameter table of docs/methods.md");
  po::variables_map vm;
  if (!parse(args, desc, vm, "usage: specd methods [--markdown]")) return 0;
  if (markdown) {
    std::fputs(params_markdown().c_str(), stdout);
    return 0;
  }
  std::printf("methods:\n%s\nparameters (flag, default, allowed values, methods: meaning):\n", methods_help().c_str());
  for (const MethodParam& p : method_params()) {
    std::printf("  --%-22s %-9s %-18s %s: %s\n", p.flag.c_str(), p.default_text().c_str(), p.range_text().c_str(), p.families_text().c_str(),
                p.help.c_str());
  }
  return 0;
}

}  // namespace specd::cli
