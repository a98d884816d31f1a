// specd bench's first form (decode and forward timings): its bandwidth and FLOP/s figures agree
// with its own bytes, FLOPs, times and measured ceilings. No wall-clock thresholds.
#include "cli_helpers.h"

#include <nlohmann/json.hpp>

using namespace specd;
using namespace specd::test;

namespace {

// gbps and gflops are bytes and FLOPs per ms recomputed, the fractions those over the ceilings.
void check_rates(const nlohmann::json& entry, const std::string& prefix, double ms, double read_gbps, double peak_gflops) {
  CAPTURE(prefix, entry.dump());
  const double bytes = entry.at(prefix + "bytes"), flops = entry.at(prefix + "flops");
  CHECK(bytes > 0);
  CHECK(flops > 0);
  CHECK(entry.at(prefix + "gbps").get<double>() == Approx(bytes / ms / 1e6));
  CHECK(entry.at(prefix + "gflops").get<double>() == Approx(flops / ms / 1e6));
  CHECK(entry.at(prefix + "bandwidth_fraction").get<double>() == Approx(entry.at(prefix + "gbps").get<double>() / read_gbps));
  CHECK(entry.at(prefix + "flops_fraction").get<double>() == Approx(entry.at(prefix + "gflops").get<double>() / peak_gflops));
  CHECK(entry.at(prefix + "bandwidth_fraction").get<double>() > 0);
  CHECK(entry.at(prefix + "flops_fraction").get<double>() > 0);
}

}  // namespace

TEST_CASE("specd bench reports bandwidth and FLOP/s as fractions of the measured ceilings", "[cli][bench]") {
  for (DType dtype : {DType::F32, DType::BF16}) {
    const bool bf16 = dtype == DType::BF16;
    const std::string dir = write_model(bf16 ? "cli-bench-limits-bf16" : "cli-bench-limits-f32", tiny_config(), dtype);
    const std::string args = "bench --model " + dir + " --threads 1 --repeats 1 --prompt-lengths 4 8 --new-tokens 4 --prefix 8 --forward-sizes 1 4";
    const CliResult r = run_cli(args + " --json");
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    const auto report = nlohmann::json::parse(r.out);

    const auto& machine = report.at("machine");
    CHECK(!machine.at("cpu").get<std::string>().empty());
    CHECK(machine.at("features").is_array());
    CHECK(machine.at("threads") == 1);
    const double read_gbps = machine.at("read_gbps"), f32_gflops = machine.at("f32_gflops");
    CHECK(read_gbps > 0);
    CHECK(f32_gflops > 0);
    const bool has_bf16 = !machine.at("bf16_gflops").is_null();
    if (has_bf16) CHECK(machine.at("bf16_gflops").get<double>() > 0);
    // BF16 weights use the BF16 dot products wherever the CPU kernels have them.
    const bool bf16_peak = bf16 && has_bf16;
    CHECK(report.at("flops_ceiling") == (bf16_peak ? "bf16" : "f32"));
    const double peak = bf16_peak ? machine.at("bf16_gflops").get<double>() : f32_gflops;

    check_rates(report, "decode_", report.at("decode_ms_per_token"), read_gbps, peak);
    const auto& forward = report.at("forward");
    REQUIRE(forward.size() == 2);
    for (const auto& entry : forward) check_rates(entry, "", entry.at("ms"), read_gbps, peak);
    // Four tokens read more (embedding rows, KV rows) and compute about four times as much.
    CHECK(forward[1].at("bytes").get<double>() > forward[0].at("bytes").get<double>());
    CHECK(forward[1].at("flops").get<double>() > 3 * forward[0].at("flops").get<double>());

    const CliResult text = run_cli(args);
    REQUIRE(text.exit_code == 0);
    for (const char* part : {"CPU: ", "GB/s", "GFLOP/s", "% of read", bf16_peak ? "% of BF16 peak" : "% of F32 peak", "MB and"})
      CHECK(text.out.find(part) != std::string::npos);
  }
}
