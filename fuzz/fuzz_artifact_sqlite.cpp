// An artifact's calibration.sqlite opened with the real reader: schema version, integrity and
// schema checks, then every table read back.
#include "artifact/artifact_tables.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specd;
  static fuzz::ScratchFile scratch("calibration.sqlite");
  const std::string& path = scratch.write(data, size);
  return fuzz::run_input([&] {
    ArtifactTables tables(path);
    (void)tables.integrity_problems(false);
    (void)tables.schema_problems();
    for (const std::string& policy : tables.policies()) (void)tables.prompts(policy);
    (void)tables.csd_pairs();
    (void)tables.arc_constants();
    (void)tables.arc_audit();
    (void)tables.thresholds();
  });
}
