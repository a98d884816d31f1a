// specd traces list|export: read back the per-step traces that specd bench --traces wrote.
#include <iostream>
#include <sstream>

#include "commands.h"
#include "options.h"
#include "trace/trace_reader.h"
#include "util/error.h"
#include "util/machine.h"

namespace specd::cli {

int run_traces(const Args& args) {
  if (args.empty() || (args[0] != "list" && args[0] != "export"))
    input_error("traces", "usage: specd traces list --file F | specd traces export --file F --run N [--format csv|jsonl]");
  const std::string action = args[0];
  std::string file, format_name = "csv";
  int64_t run_id = 0;
  po::options_description desc("specd traces " + action);
  desc.add_options()("file", po::value(&file)->required(), "traces SQLite file (specd bench --traces)");
  if (action == "export") {
    desc.add_options()
        ("run", po::value(&run_id)->required(), "run id (see specd traces list)")
        ("format", po::value(&format_name)->default_value("csv"), "csv or jsonl");
  }
  po::variables_map vm;
  if (!parse(Args(args.begin() + 1, args.end()), desc, vm, "usage: specd traces list|export --file F [options]")) return 0;

  // Built whole before printing: an error halfway leaves nothing on stdout, only its one line.
  std::ostringstream out;
  TraceReader reader(file);
  if (action == "export") {
    reader.export_steps(run_id, parse_trace_format(format_name), out);
    std::cout << out.str();
    return 0;
  }
  out << "run\tcreated\tmethod\trequests\tsteps\ttarget\tdraft\tmachine\n";
  for (const TraceRun& run : reader.runs()) {
    const std::string machine = machine_text(nlohmann::json::parse(run.info.machine_json, nullptr, /*allow_exceptions=*/false));
    out << run.id << "\t" << run.created_at << "\t" << run.info.method << "\t" << run.requests << "\t" << run.steps << "\t"
        << run.info.target_model << "\t" << (run.info.draft_model.empty() ? "-" : run.info.draft_model) << "\t"
        << (machine.empty() ? "-" : machine) << "\n";
  }
  std::cout << out.str();
  return 0;
}

}  // namespace specd::cli
