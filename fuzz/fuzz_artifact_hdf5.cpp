// An artifact's calibration.h5 opened with the real reader: the schema version attribute, every
// object the file holds against the layout specd writes, then CSD's rejection events, the SAM
// corpus documents and ARC's whitening and samples with their dtypes, ranks and lengths, and
// every value read checked against its domain as verify and deploy check it.
#include "artifact/artifact_arrays.h"
#include "artifact/value_domains.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specd;
  static fuzz::ScratchFile scratch("calibration.h5");
  const std::string& path = scratch.write(data, size);
  return fuzz::run_input([&] {
    const Hdf5File arrays = open_artifact_arrays(path);
    (void)unexpected_objects(arrays);
    Artifact artifact;
    if (has_csd_rejections(arrays)) artifact.csd.emplace().rejections = read_csd_rejections(arrays);
    if (has_sam_corpus(arrays)) artifact.sam_corpus.emplace().documents = read_sam_documents(arrays);
    if (has_arc(arrays)) {
      ArcCalibration& arc = artifact.arc.emplace();
      arc.whitening = read_arc_whitening(arrays);
      arc.samples = read_arc_samples(arrays);
    }
    (void)value_problems(artifact);
  });
}
