#include "util/machine.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "util/format.h"

namespace specd {

namespace {

std::string trim(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t"), last = s.find_last_not_of(" \t\r\n");
  return first == std::string::npos ? "" : s.substr(first, last - first + 1);
}

std::string file_text(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The digits at the start of `text` (at most 9) as a number, and where they end; -1 without any.
int64_t leading_number(const std::string& text, size_t& end) {
  end = 0;
  while (end < text.size() && end < 9 && text[end] >= '0' && text[end] <= '9') ++end;
  return end == 0 ? -1 : std::stoll(text.substr(0, end));
}

nlohmann::json field(const nlohmann::json& m, const char* key) { return m.contains(key) ? m[key] : nlohmann::json(); }

}  // namespace

CpuInfo parse_cpuinfo(const std::string& text) {
  CpuInfo info;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line) && !trim(line).empty()) {  // the first processor's block
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "model name" && !value.empty()) info.model = value;
    if (key != "flags") continue;
    std::istringstream words(" " + value + " ");
    std::vector<std::string> flags;
    for (std::string w; words >> w;) flags.push_back(w);
    for (const char* feature : {"avx2", "fma", "avx512f", "avx512_bf16"})
      if (std::find(flags.begin(), flags.end(), feature) != flags.end()) info.features.push_back(feature);
  }
  return info;
}

int64_t parse_cache_size(const std::string& text) {
  const std::string t = trim(text);
  size_t end = 0;
  const int64_t value = leading_number(t, end);
  const std::string unit = t.substr(end);
  if (value < 0 || (end < t.size() && end + 1 != t.size())) return 0;  // one unit letter at most
  if (unit.empty()) return value;
  if (unit == "K") return value << 10;
  if (unit == "M") return value << 20;
  if (unit == "G") return value << 30;
  return 0;
}

int parse_cpu_list_count(const std::string& text) {
  std::istringstream ranges(trim(text));
  int count = 0;
  for (std::string range; std::getline(ranges, range, ',');) {  // "0-1,4-5"
    size_t end = 0;
    const int64_t first = leading_number(range, end);
    if (first < 0) return 0;
    if (end == range.size()) {
      ++count;
      continue;
    }
    if (range[end] != '-') return 0;
    const std::string rest = range.substr(end + 1);
    const int64_t last = leading_number(rest, end);
    if (last < first || end != rest.size()) return 0;
    count += static_cast<int>(last - first + 1);
  }
  return count;
}

CacheLevel read_last_level_cache() {
  CacheLevel best;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string level_text = trim(file_text(dir + "level"));
    if (level_text.empty()) break;
    size_t end = 0;
    const int64_t level = leading_number(level_text, end);
    const int64_t bytes = parse_cache_size(file_text(dir + "size"));
    if (level <= best.level || bytes <= 0) continue;
    best = {static_cast<int>(level), bytes, std::max(1, parse_cpu_list_count(file_text(dir + "shared_cpu_list")))};
  }
  return best;
}

CpuInfo read_cpuinfo() {
  CpuInfo info = parse_cpuinfo(file_text("/proc/cpuinfo"));
  info.last_level_cache = read_last_level_cache();
  return info;
}

nlohmann::json machine_json(const CpuInfo& cpu, int threads, const std::string& device) {
  const CacheLevel& cache = cpu.last_level_cache;
  return {{"cpu", cpu.model},
          {"features", cpu.features},
          {"cache_level", cache.bytes > 0 ? nlohmann::json(cache.level) : nlohmann::json()},
          {"cache_bytes", cache.bytes > 0 ? nlohmann::json(cache.bytes) : nlohmann::json()},
          {"threads", threads},
          {"device", device}};
}

std::string machine_text(const nlohmann::json& m) {
  if (!m.is_object() || !field(m, "cpu").is_string()) return "";
  std::string text = m["cpu"].get<std::string>();
  if (field(m, "cache_bytes").is_number_integer() && field(m, "cache_level").is_number_integer())
    text += strprintf(", %g MiB L%lld", static_cast<double>(m["cache_bytes"].get<int64_t>()) / (1 << 20),
                      static_cast<long long>(m["cache_level"].get<int64_t>()));
  if (field(m, "threads").is_number_integer()) {
    const int64_t threads = m["threads"].get<int64_t>();
    text += ", " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
  }
  if (field(m, "device").is_string() && m["device"] != "cpu") text += ", on " + m["device"].get<std::string>();
  return text;
}

bool same_machine(const nlohmann::json& a, const nlohmann::json& b) {
  if (machine_text(a).empty() || machine_text(b).empty()) return false;
  for (const char* key : {"cpu", "cache_level", "cache_bytes", "threads", "device"})
    if (field(a, key) != field(b, key)) return false;
  return true;
}

}  // namespace specd
