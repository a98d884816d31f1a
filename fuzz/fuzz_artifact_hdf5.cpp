// An artifact's calibration.h5 opened with the real reader: the schema version attribute, then
// CSD's rejection events, the SAM corpus documents and ARC's whitening and samples with their
// dtypes, ranks and lengths.
#include "artifact/artifact_arrays.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specd;
  static fuzz::ScratchFile scratch("calibration.h5");
  const std::string& path = scratch.write(data, size);
  return fuzz::run_input([&] {
    const Hdf5File arrays = open_artifact_arrays(path);
    if (has_csd_rejections(arrays)) (void)read_csd_rejections(arrays);
    if (has_sam_corpus(arrays)) (void)read_sam_documents(arrays);
    if (has_arc(arrays)) {
      (void)read_arc_whitening(arrays);
      (void)read_arc_samples(arrays);
    }
  });
}
