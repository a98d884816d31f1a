// Merging shards of a calibration gives the artifact of the unsharded run; shards that do not
// belong together are refused naming the input.
#include <catch2/catch.hpp>

#include "artifact/artifact_arrays.h"
#include "artifact/artifact_reader.h"
#include "artifact_fixtures.h"
#include "calibrate/artifact_merge.h"
#include "calibrate/artifact_writer.h"
#include "util/error.h"

using namespace specd;
using test::ScopedTempDir;

TEST_CASE("artifact merge: shards by prompt index % N merge into the unsharded artifact", "[artifact][merge]") {
  ScopedTempDir tmp("merge");
  const Artifact whole = test::synthetic_artifact(23);
  write_artifact(tmp.file("whole"), whole);  // a merge fits ARC's constants on all the samples, as the whole run
  for (int32_t count : {1, 2, 3, 5}) {
    INFO(count << " shards");
    const Artifact merged = test::merge_written_shards(whole, count, tmp);
    CHECK(merged.csd->prompts == whole.csd->prompts);
    CHECK(merged.csd->rejections == whole.csd->rejections);
    CHECK(merged.csd->pairs == whole.csd->pairs);
    CHECK(merged.csd->provenance.counts == whole.csd->provenance.counts);
    CHECK(merged.sam_corpus->prompts == whole.sam_corpus->prompts);
    CHECK(merged.sam_corpus->documents == whole.sam_corpus->documents);
    CHECK(merged.sam_corpus->provenance.counts == whole.sam_corpus->provenance.counts);
    CHECK(merged.thresholds == whole.thresholds);
    CHECK(merged.arc->samples == whole.arc->samples);
    CHECK(merged.arc->constants == whole.arc->constants);
    CHECK(merged.arc->audit == whole.arc->audit);
    const CalibrationProvenance& p = merged.csd->provenance;
    CHECK(p.shard_index == 0);
    CHECK(p.shard_count == 1);
    REQUIRE(p.shards.size() == static_cast<size_t>(count));
    for (int32_t index = 0; index < count; ++index) CHECK(p.shards[static_cast<size_t>(index)]["shard"]["index"] == index);
    CHECK(p.wall_s == Approx(count * (count + 1) / 2.0));
    CHECK(p.seed == whole.csd->provenance.seed);
    CHECK(p.options == whole.csd->provenance.options);

    // On disk: the same tables and arrays as the unsharded artifact.
    const std::string out = tmp.file("merged-" + std::to_string(count));
    write_artifact(out, merged);
    CHECK(test::table_dump(out + "/calibration.sqlite") == test::table_dump(tmp.file("whole/calibration.sqlite")));
    Hdf5File a = open_artifact_arrays(out + "/calibration.h5");
    Hdf5File b = open_artifact_arrays(tmp.file("whole/calibration.h5"));
    CHECK(read_csd_rejections(a) == read_csd_rejections(b));
    CHECK(read_sam_documents(a) == read_sam_documents(b));
    CHECK(read_artifact(out).csd->provenance.shards.size() == static_cast<size_t>(count));
  }
}

TEST_CASE("artifact merge: refuses shards that overlap, miss one or come from another calibration", "[artifact][merge]") {
  const Artifact whole = test::synthetic_artifact(9);
  const Artifact s0 = test::shard_of(whole, 0, 3), s1 = test::shard_of(whole, 1, 3), s2 = test::shard_of(whole, 2, 3);
  CHECK(test::merge_error({s0, s1, s2}).empty());
  CHECK(test::merge_error({s0, s1}) == "merge: csd shard 2 is missing: 2 of the 3 shards were given");
  CHECK(test::merge_error({s1}) == "merge: csd shards 0, 2 are missing: 1 of the 3 shards were given");
  CHECK(test::merge_error({s0, s1, s1}) == "shard2: csd shard 1 is also in shard1");
  CHECK(test::merge_error({s0, s1, test::shard_of(whole, 0, 2)}) == "shard2: csd is shard 0 of 2, but shard0's is one of 3");

  Artifact overlapping = s2;
  overlapping.csd->prompts.push_back(s0.csd->prompts[0]);
  CHECK(test::merge_error({s0, s1, overlapping}) == "shard2: csd prompt 0 is also in shard0");

  auto with = [&](const std::function<void(Artifact&)>& edit) {
    Artifact changed = s1;
    edit(changed);
    return test::merge_error({s0, changed, s2});
  };
  const std::string other = "shard1: not a shard of the same csd calibration as shard0 (";
  CHECK(with([](Artifact& a) { a.csd->provenance.seed = 1; }) == other + "seed differs)");
  CHECK(with([](Artifact& a) { a.csd->provenance.top_p = 0.9; }) == other + "sampling/top_p differs)");
  CHECK(with([](Artifact& a) { a.csd->provenance.options["gamma"] = 4; }) == other + "options/gamma differs)");
  CHECK(with([](Artifact& a) { a.csd->provenance.prompts_sha256 = test::fake_fingerprint("p").config_sha256; }) ==
        other + "prompts sha256 differs)");
  CHECK(with([](Artifact& a) { a.target.tokenizer_sha256 = a.draft->tokenizer_sha256; }) == other + "target/tokenizer_sha256 differs)");
  CHECK(with([](Artifact& a) { a.draft.reset(); }) == other + "draft differs)");
  CHECK(with([](Artifact& a) { a.csd->provenance.prompts_path = "/elsewhere/prompts.jsonl"; }).empty());  // paths may differ
  CHECK(with([](Artifact& a) { a.target.path = "/elsewhere/target"; }).empty());
  CHECK(with([](Artifact& a) { a.sam_corpus.reset(); }) == "shard1: holds other calibrations than shard0");
  CHECK(with([](Artifact& a) { a.thresholds[0].value = 7; }) == "shard1: has other thresholds than shard0");
}
