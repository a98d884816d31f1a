// The bundles go in by the assembler's .incbin (analysis/CMakeLists.txt passes their paths and
// rebuilds this file when they change): 770 KiB of JavaScript as a C array would cost far more to
// compile. Hidden symbols, so the references are PC-relative in PIE and PIC code alike. ccache
// hashes the preprocessed text, not the .incbin'd files: the versions compiled in below are what
// makes a new bundle a new object.
#include "analysis/chart_scripts.h"

#define SPECD_EMBED(name, path)                 \
  asm(".section .rodata\n"                      \
      ".balign 16\n"                            \
      ".global " #name "\n"                     \
      ".hidden " #name "\n"                     \
      #name ":\n"                               \
      ".incbin \"" path "\"\n"                  \
      ".global " #name "_end\n"                 \
      ".hidden " #name "_end\n"                 \
      #name "_end:\n"                           \
      ".byte 0\n"                               \
      ".previous\n")

SPECD_EMBED(specd_vega_js, SPECD_VEGA_JS);
SPECD_EMBED(specd_vega_lite_js, SPECD_VEGA_LITE_JS);

extern "C" {
extern const char specd_vega_js[];
extern const char specd_vega_js_end[];
extern const char specd_vega_lite_js[];
extern const char specd_vega_lite_js_end[];
}

namespace specd::report {

std::string_view vega_script() { return {specd_vega_js, static_cast<size_t>(specd_vega_js_end - specd_vega_js)}; }
std::string_view vega_lite_script() {
  return {specd_vega_lite_js, static_cast<size_t>(specd_vega_lite_js_end - specd_vega_lite_js)};
}
std::string_view vega_version() { return SPECD_VEGA_VERSION; }
std::string_view vega_lite_version() { return SPECD_VEGA_LITE_VERSION; }

}  // namespace specd::report
