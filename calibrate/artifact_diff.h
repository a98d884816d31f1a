#pragma once
// What differs between the calibrated data of two artifacts (specd artifact diff): the pair, and
// per calibration its settings, counts, rows and arrays. What differs between any two runs of the
// same calibration is left out: command lines, paths, times, shards and schedulers' job ids, and a
// sweep's timings with the choice and thresholds that follow from them. So a merge of shards and
// the unsharded run, or a calibration and its rerun, have no differences.
#include <string>
#include <vector>

#include "artifact/artifact.h"

namespace specd {

// One line per part that differs, e.g. "csd.rejections: 8816 rows vs 8815, first difference at
// row 12"; empty when the two hold the same calibrations.
std::vector<std::string> artifact_differences(const Artifact& a, const Artifact& b);

}  // namespace specd
