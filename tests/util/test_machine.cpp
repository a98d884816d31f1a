// The machine specd records beside its timings: the CPU from /proc/cpuinfo, the last-level cache
// from sysfs, their JSON form and one-line text.
#include <catch2/catch.hpp>

#include "util/machine.h"

using namespace specd;
using nlohmann::json;

TEST_CASE("cpuinfo gives the first processor's model and the features the kernels use", "[machine]") {
  const std::string text =
      "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480C\n"
      "flags\t\t: fpu sse avx2 fma avx512f avx512bw avx512_bf16 avx512_fp16\n\n"
      "processor\t: 1\nmodel name\t: something else\nflags\t\t: fpu\n";
  const CpuInfo info = parse_cpuinfo(text);
  CHECK(info.model == "Intel(R) Xeon(R) Platinum 8480C");
  CHECK(info.features == std::vector<std::string>{"avx2", "fma", "avx512f", "avx512_bf16"});
  CHECK(info.last_level_cache.bytes == 0);
  const CpuInfo bare = parse_cpuinfo("processor : 0\nflags : fpu sse2 avx512_bf16x\n");
  CHECK(bare.model == "unknown");
  CHECK(bare.features.empty());
}

TEST_CASE("sysfs cache sizes and CPU lists are read, and text they do not hold gives 0", "[machine]") {
  CHECK(parse_cache_size("307200K\n") == int64_t{300} << 20);
  CHECK(parse_cache_size("32M") == int64_t{32} << 20);
  CHECK(parse_cache_size("1048576") == int64_t{1} << 20);
  for (const char* bad : {"", "K", "32KB", "-1K", "32 K", "1234567890123K"}) CHECK(parse_cache_size(bad) == 0);
  CHECK(parse_cpu_list_count("0-1\n") == 2);
  CHECK(parse_cpu_list_count("0-1,4-5,7") == 5);
  CHECK(parse_cpu_list_count("3") == 1);
  for (const char* bad : {"", "a", "1-", "3-1", "0-1;2"}) CHECK(parse_cpu_list_count(bad) == 0);
}

TEST_CASE("the machine's JSON form and its text", "[machine]") {
  CpuInfo cpu;
  cpu.model = "AMD EPYC 9B14";
  cpu.features = {"avx2", "fma"};
  cpu.last_level_cache = {3, int64_t{32} << 20, 2};
  const json epyc = machine_json(cpu, 2, "cpu");
  CHECK(epyc == json{{"cpu", "AMD EPYC 9B14"}, {"features", {"avx2", "fma"}}, {"cache_level", 3}, {"cache_bytes", 33554432}, {"threads", 2},
                     {"device", "cpu"}});
  CHECK(machine_text(epyc) == "AMD EPYC 9B14, 32 MiB L3, 2 threads");
  const json gpu = machine_json(cpu, 2, "cuda:0");
  CHECK(machine_text(gpu) == "AMD EPYC 9B14, 32 MiB L3, 2 threads, on cuda:0");
  CHECK_FALSE(same_machine(epyc, gpu));  // the host alone does not make two runs comparable
  cpu.last_level_cache = {};
  const json unknown_cache = machine_json(cpu, 1, "cpu");
  CHECK(unknown_cache["cache_bytes"].is_null());
  CHECK(machine_text(unknown_cache) == "AMD EPYC 9B14, 1 thread");
  CHECK(machine_text(json()).empty());
  CHECK(machine_text(json{{"threads", 2}}).empty());

  CHECK(same_machine(epyc, epyc));
  CHECK_FALSE(same_machine(epyc, unknown_cache));  // another cache, another thread count
  json more_threads = epyc;
  more_threads["threads"] = 4;
  CHECK_FALSE(same_machine(epyc, more_threads));
  json other_features = epyc;
  other_features["features"] = json::array();  // features follow from the CPU: not compared
  CHECK(same_machine(epyc, other_features));
  CHECK_FALSE(same_machine(epyc, json()));
  CHECK_FALSE(same_machine(json(), json()));
}

TEST_CASE("this machine: a model name, and a last-level cache where sysfs has one", "[machine]") {
  const CpuInfo here = read_cpuinfo();
  CHECK(!here.model.empty());
  const CacheLevel& cache = here.last_level_cache;
  if (cache.bytes > 0) {
    CHECK(cache.level >= 1);
    CHECK(cache.sharers >= 1);
  } else {
    CHECK(cache.level == 0);
  }
  CHECK(!machine_text(machine_json(here, 2, "cpu")).empty());
}
