// Peak resident memory of specd (VmHWM: getrusage's ru_maxrss, which `specd bench --json` reports
// as peak_rss_mib) after loading a model and decoding a few tokens: at most the weights' bytes,
// the KV caches' reservations and 64 MiB. It fails if libtorch is loaded by the CPU path (~155
// MiB before any model) or if the checkpoint's file pages stay resident beside the packed copy.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "test_skip.h"

using namespace specd;
using namespace specd::test;

namespace {

constexpr double kMiB = 1 << 20;

nlohmann::json bench(const std::string& dir, const std::string& options) {
  const CliResult r = run_cli("bench --model " + dir + " --prompt-lengths 16 --new-tokens 8 --forward-sizes 1 8 --repeats 1 --json " + options);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("peak RSS after load and decode is at most the weights, the KV caches and 64 MiB", "[model][memory]") {
#ifdef SPECD_UNDER_ASAN
  SPECD_SKIP("AddressSanitizer's shadow memory and quarantine count in resident memory");
#endif
  const std::string fixtures = std::string(SPECD_BINARY_DIR) + "/test-fixtures/";
  auto [name, dir, options] = GENERATE(table<std::string, std::string, std::string>({
      {"demo target (BF16)", std::string(SPECD_SOURCE_DIR) + "/data/models/demo-target", ""},
      {"shape b F32", "f32", ""},
      {"shape b BF16", "bf16", ""},
      {"shape b BF16, BF16 KV cache", "bf16", "--kv-dtype bf16"},
  }));
  CAPTURE(name);
  if (dir == "f32" || dir == "bf16") {
    // 8 layers of 512, vocabulary 8192: ~130 MiB in F32, enough for a file kept resident to show.
    const std::string out = fixtures + "footprint-shape-b-" + dir;
    const CliResult made = run_cli("init-model --shape b --dtype " + dir + " --force --out " + out);
    CAPTURE(made.err);
    REQUIRE(made.exit_code == 0);
    dir = out;
  }
  const double weights_mib = static_cast<double>(std::filesystem::file_size(dir + "/model.safetensors")) / kMiB;
  const nlohmann::json report = bench(dir, options);
  const double peak = report.at("peak_rss_mib").get<double>(), kv = report.at("kv_peak_mib").get<double>();
  CAPTURE(peak, weights_mib, kv, report.at("weights_mib").get<double>());
  CHECK(kv > 0);
  CHECK(peak <= weights_mib + kv + 64.0);
}
