#pragma once
// The machine a timing was measured on. specd writes it beside every figure that depends on it
// (bench --json, a calibration's provenance, the report), because a timing from one CPU does not
// carry over to another. On this project's machines the last-level cache also decides whether a
// model's decode is memory-bound.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace specd {

// The last-level cache of cpu0 as sysfs tells it: its level, the size of one instance and how
// many CPUs share it (all 0, sharers 1, when sysfs does not say). glibc's sysconf can report the
// whole package's L3 instead (320 MiB on a 2-CPU EPYC guest whose CPUs share one 32 MiB L3).
struct CacheLevel {
  int level = 0;
  int64_t bytes = 0;
  int sharers = 1;
};

struct CpuInfo {
  std::string model = "unknown";      // /proc/cpuinfo's "model name", "unknown" without one
  std::vector<std::string> features;  // of avx2, fma, avx512f, avx512_bf16: those the CPU has
  CacheLevel last_level_cache;
};

// From the text of /proc/cpuinfo (its first processor's lines); the cache stays unknown.
CpuInfo parse_cpuinfo(const std::string& text);
// A sysfs cache size ("307200K", "32M", "1048576") in bytes; 0 for text it does not read.
int64_t parse_cache_size(const std::string& text);
// A sysfs shared_cpu_list ("0-1,4-5") as a count of CPUs; 0 for text it does not read.
int parse_cpu_list_count(const std::string& text);
CacheLevel read_last_level_cache();
// This machine's: /proc/cpuinfo and the cache from sysfs.
CpuInfo read_cpuinfo();

// {"cpu", "features", "cache_level", "cache_bytes" (both null when unknown), "threads", "device"}:
// the form written beside timings. `device` is what ran the model: "cpu" (specd's kernels), "cpu
// (ATen)", or a libtorch device such as "cuda:0" (then the CPU is only the host).
nlohmann::json machine_json(const CpuInfo& cpu, int threads, const std::string& device);
// "Intel(R) Xeon(R) Processor, 300 MiB L3, 2 threads" from machine_json's form (", on cuda:0"
// added for a device other than "cpu"); "" for null or a value that is not such an object.
std::string machine_text(const nlohmann::json& machine);
// Whether two machine_json values name the same CPU, cache, thread count and device; false when
// either is missing.
bool same_machine(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace specd
