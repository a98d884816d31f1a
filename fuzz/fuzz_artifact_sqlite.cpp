// An artifact's calibration.sqlite opened with the real reader: schema version, integrity and
// schema checks, then every table read back and every value checked against its domain, as
// verify and deploy check them.
#include "artifact/artifact_tables.h"
#include "artifact/value_domains.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specd;
  static fuzz::ScratchFile scratch("calibration.sqlite");
  const std::string& path = scratch.write(data, size);
  return fuzz::run_input([&] {
    ArtifactTables tables(path);
    (void)tables.integrity_problems(false);
    (void)tables.schema_problems();
    Artifact artifact;
    CsdCalibration& csd = artifact.csd.emplace();
    csd.prompts = tables.prompts(kCsdPolicy);
    csd.pairs = tables.csd_pairs();
    artifact.sam_corpus.emplace().prompts = tables.prompts(kSamCorpusPolicy);
    ArcCalibration& arc = artifact.arc.emplace();
    arc.prompts = tables.prompts(kArcPolicy);
    arc.constants = tables.arc_constants();
    arc.audit = tables.arc_audit();
    artifact.thresholds = tables.thresholds();
    for (const std::string& policy : tables.policies()) (void)tables.prompts(policy);
    (void)value_problems(artifact);
  });
}
