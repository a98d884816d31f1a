#pragma once
// Which of an ARC calibration's buckets serves a position: the bucket whose name ("depth=2",
// "entropy=[0.2,0.4)", or both crossed, as stats/arc_fit.h names them) matches the position's
// draft depth and the root's normalized entropy H_m, else "all". Shared by the fit and audit
// (stats/arc_fit.h) and the acceptor that deploys the buckets (speculative/arc_acceptor.h).
#include <cstdint>
#include <vector>

#include "artifact/artifact.h"

namespace specd {

// constants[0] must be "all"; std::invalid_argument when it is not or a bucket name is not one
// fit_arc_constants writes.
const ArcConstants& constants_for(const std::vector<ArcConstants>& constants, int32_t depth, float root_entropy);

}  // namespace specd
