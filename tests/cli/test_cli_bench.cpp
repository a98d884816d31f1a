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
    // --idle-gaps (F32 only: one measurement is enough) times the 12 one-token forwards after a
    // pause against back-to-back ones (gap 0, added when not asked for).
    const std::string args = "bench --model " + dir + " --threads 1 --repeats 1 --prompt-lengths 4 8 --new-tokens 4 --prefix 8 --forward-sizes 1 4" +
                             (bf16 ? "" : " --idle-gaps 2");
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
    // BF16 weights use the BF16 kernels wherever the CPU has them; the BF16 dot loop is the ceiling
    // where bench's process chose the dot products, FMA's where it chose widened weights or AMX.
    CHECK(report.contains("bf16_kernel") == (bf16 && has_bf16));
    const std::string kernel = report.contains("bf16_kernel") ? report.at("bf16_kernel").get<std::string>() : "";
    if (!kernel.empty()) CHECK((kernel == "dot" || kernel == "widened" || kernel == "amx"));
    const bool bf16_peak = bf16 && has_bf16 && kernel == "dot";
    CHECK(report.at("flops_ceiling") == (bf16_peak ? "bf16" : "f32"));
    const double peak = bf16_peak ? machine.at("bf16_gflops").get<double>() : f32_gflops;

    check_rates(report, "decode_", report.at("decode_ms_per_token"), read_gbps, peak);
    const auto& forward = report.at("forward");
    REQUIRE(forward.size() == 2);
    for (const auto& entry : forward) check_rates(entry, "", entry.at("ms"), read_gbps, peak);
    // Four tokens read more (embedding rows, KV rows) and compute about four times as much.
    CHECK(forward[1].at("bytes").get<double>() > forward[0].at("bytes").get<double>());
    CHECK(forward[1].at("flops").get<double>() > 3 * forward[0].at("flops").get<double>());

    if (!bf16) {
      CHECK(report.at("after_idle_rounds") == 4);
      const auto& idle = report.at("after_idle");
      REQUIRE(idle.size() == 2);
      CHECK(idle[0].at("gap_ms") == 0.0);
      CHECK(idle[0].at("extra_ms") == 0.0);
      CHECK(idle[1].at("gap_ms") == 2.0);
      double extra = 0;
      for (size_t i = 0; i < 12; ++i) {
        for (const auto& entry : idle) CHECK(entry.at("forward_ms").at(i).get<double>() > 0);
        extra += idle[1].at("forward_ms")[i].get<double>() - idle[0].at("forward_ms")[i].get<double>();
      }
      CHECK(idle[1].at("forward_ms").size() == 12);
      CHECK(idle[1].at("extra_ms").get<double>() == Approx(extra).margin(1e-9));
    } else {
      CHECK(!report.contains("after_idle"));
    }

    const CliResult text = run_cli(args);
    REQUIRE(text.exit_code == 0);
    for (const char* part : {"CPU: ", "GB/s", "GFLOP/s", "% of read", bf16_peak ? "% of BF16 peak" : "% of F32 peak", "MB and"})
      CHECK(text.out.find(part) != std::string::npos);
    for (const char* part : {"idle    0.0 ms:", "idle    2.0 ms:"}) CHECK((text.out.find(part) != std::string::npos) == !bf16);
  }
}

// --kv-dtype: the caches take half the memory at 16 bits, and bench reports how far that moves the
// logits from a float32 cache's on the text it decoded.
TEST_CASE("specd bench --kv-dtype reports the cache type, its memory and its distance from float32", "[cli][bench][kv]") {
  const std::string dir = write_model("cli-bench-kv", tiny_config());
  const std::string args = "bench --model " + dir + " --threads 1 --repeats 1 --prompt-lengths 8 --new-tokens 4 --prefix 8 --forward-sizes 1 4 --json";
  auto bench = [&](const std::string& kv) {
    const CliResult r = run_cli(args + " --kv-dtype " + kv);
    CAPTURE(kv, r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
  };
  const auto f32 = bench("f32");
  CHECK(f32.at("kv_dtype") == "f32");
  CHECK(!f32.contains("kv_vs_f32"));
  for (const char* kv : {"bf16", "f16"}) {
    const auto report = bench(kv);
    CAPTURE(kv, report.dump());
    CHECK(report.at("kv_dtype") == kv);
    CHECK(report.at("kv_peak_mib").get<double>() * 2 == Approx(f32.at("kv_peak_mib").get<double>()));
    const auto& d = report.at("kv_vs_f32");
    CHECK(d.at("positions") == 12);  // the 8-token prompt and the 4 tokens decoded after it
    CHECK(d.at("max_abs_logit").get<double>() > 0);
    CHECK(d.at("max_abs_logit").get<double>() >= d.at("mean_abs_logit").get<double>());
    CHECK(d.at("mean_kl_nats").get<double>() >= 0);
    CHECK(d.at("max_kl_nats").get<double>() >= d.at("mean_kl_nats").get<double>());
    CHECK(d.at("top1_agreement").get<double>() >= 0);
    CHECK(d.at("top1_agreement").get<double>() <= 1);
  }
  const CliResult text = run_cli("bench --model " + dir + " --threads 1 --repeats 1 --prompt-lengths 8 --new-tokens 4 --prefix 8 --forward-sizes 1 --kv-dtype bf16");
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("KV cache bf16") != std::string::npos);
  CHECK(text.out.find("bf16 KV cache vs float32, 12 positions") != std::string::npos);

  const CliResult bad = run_cli("bench --model " + dir + " --kv-dtype int8");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--kv-dtype") != std::string::npos);
  CHECK(bad.err.find("int8") != std::string::npos);
}

// --idle-gaps with a negative pause is refused before any model loads. (What it measures is checked
// in the first test's runs: a bench process is dear under the sanitizers.)
TEST_CASE("specd bench --idle-gaps refuses a negative pause in one line", "[cli][bench]") {
  const std::string dir = write_model("cli-bench-idle", tiny_config());
  const CliResult bad = run_cli("bench --model " + dir + " --idle-gaps -3");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--idle-gaps") != std::string::npos);
  CHECK(bad.out.empty());
}
