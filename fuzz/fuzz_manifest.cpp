// An artifact's manifest.json: the pair's fingerprints, each file's sha256 and schema version,
// each calibration's provenance. A manifest that loads must write back into one that loads equal.
#include <cstdlib>

#include "artifact/manifest.h"
#include "fuzz_support.h"
#include "io/json_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specd;
  return fuzz::run_input([&] {
    const Manifest manifest = parse_manifest(parse_json(fuzz::as_text(data, size), "manifest.json"), "manifest.json");
    const Manifest again = parse_manifest(manifest_json(manifest.header, manifest.files), "manifest.json written back");
    if (manifest_json(again.header, again.files) != manifest_json(manifest.header, manifest.files)) std::abort();
  });
}
