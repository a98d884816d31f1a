// Workload files (data/workloads/*.jsonl, the calibration prompts): one JSON object per line.
#include "fuzz_support.h"
#include "workload/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specd;
  return fuzz::run_input([&] { (void)parse_workload(fuzz::as_text(data, size), "workload.jsonl"); });
}
