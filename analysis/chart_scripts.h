#pragma once
// The Vega and Vega-Lite browser builds (analysis/charts/node_modules, pinned in
// analysis/charts/package.json), embedded into the binary at build time so that `specd report`
// writes a self-contained page anywhere, with no node_modules and no network at run time.
#include <string_view>

namespace specd::report {

std::string_view vega_script();       // build/vega.min.js: the global `vega`
std::string_view vega_lite_script();  // build/vega-lite.min.js: the global `vegaLite`
std::string_view vega_version();
std::string_view vega_lite_version();

}  // namespace specd::report
