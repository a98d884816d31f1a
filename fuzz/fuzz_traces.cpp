// A trace file of `specd bench --traces` opened with the real reader: its runs, each run's
// requests, and the export of its steps as CSV and JSON Lines (as `specd traces` does).
#include <sstream>

#include "fuzz_support.h"
#include "trace/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specd;
  static fuzz::ScratchFile scratch("traces.sqlite");
  const std::string& path = scratch.write(data, size);
  return fuzz::run_input([&] {
    TraceReader reader(path);
    for (const TraceRun& run : reader.runs()) {
      (void)reader.requests(run.id);
      for (TraceFormat format : {TraceFormat::Csv, TraceFormat::JsonLines}) {
        std::ostringstream out;
        reader.export_steps(run.id, format, out);
      }
    }
  });
}
