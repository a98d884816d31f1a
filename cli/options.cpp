#include "options.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include "io/output_path.h"
#include "model/kv_memory.h"
#include "util/error.h"

namespace specd::cli {

namespace {

// The most --threads: one per logical CPU. More only makes the threads wait for each other
// (the CPU kernels' workers spin).
int max_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

void check_threads(int threads) {
  if (threads < 0 || threads > max_threads())
    input_error("--threads", "must be from 0 (one per CPU) to " + std::to_string(max_threads()) + ", the CPUs of this machine, not " +
                                 std::to_string(threads));
}

// "8G", "512M", "1.5GiB", "4096": bytes with an optional binary unit (K, M, G, T; "iB" and "B" allowed).
int64_t parse_byte_size(const std::string& option, const std::string& text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    input_error(option, "'" + text + "' is not a size (e.g. 8G, 512M, 1048576)");
  }
  std::string unit = text.substr(used);
  if (unit.size() >= 2 && unit.compare(unit.size() - 2, 2, "iB") == 0) unit.resize(unit.size() - 2);
  else if (!unit.empty() && unit.back() == 'B') unit.pop_back();
  const size_t power = unit.size() == 1 ? std::string("KMGT").find(static_cast<char>(std::toupper(unit[0]))) : std::string::npos;
  if (!unit.empty() && power == std::string::npos) input_error(option, "'" + text + "' has an unknown unit (use K, M, G or T, e.g. 8G)");
  const double scale = unit.empty() ? 1.0 : std::ldexp(1.0, 10 * (1 + static_cast<int>(power)));
  const double bytes = value * scale;
  if (!std::isfinite(bytes) || bytes < 1 || bytes >= 0x1p62) input_error(option, "'" + text + "' must be at least 1 byte and below 4 EiB");
  return static_cast<int64_t>(bytes);
}

// A floating-point option: finite, not subnormal (too small to compute with), and in its range.
void check_number(const std::string& option, double value, const std::string& range, bool in_range) {
  if (!std::isfinite(value) || std::fpclassify(value) == FP_SUBNORMAL || !in_range) input_error(option, "must be " + range);
}

}  // namespace

void add_device_options(po::options_description& options, DeviceSpec& device) {
  options.add_options()
      ("device", po::value(&device.name)->default_value("cpu"), "cpu, cuda or cuda:N")
      ("threads", po::value(&device.threads)->default_value(0)->notifier(check_threads),
       ("CPU math threads (0: one per CPU; at most " + std::to_string(max_threads()) + " here)").c_str())
      ("max-memory", po::value<std::string>()->notifier([&device](const std::string& text) { device.max_kv_bytes = parse_byte_size("--max-memory", text); }),
       ("most memory the KV caches may take together, e.g. 8G (default: half the physical memory, " +
        format_bytes(default_kv_memory_limit()) + " here)").c_str())
      ("kv-dtype", po::value<std::string>()->default_value("f32")->notifier([&device](const std::string& text) {
         device.kv_type = parse_kv_type("--kv-dtype", text);
       }),
       "what the KV caches store keys and values as: f32, bf16 or f16 (half the memory; attention still computes in "
       "float32)")
      ("aten", po::bool_switch(&device.aten_on_cpu), "on the CPU, run libtorch's ATen operations instead of specd's kernels")
      ("fp32-activations", po::bool_switch(&device.fp32_activations),
       "BF16 weights on a CPU with AVX512-BF16: keep activations float32 instead of rounding them to BF16 for the "
       "dot products (slower; equal to the ATen forward)");
}

bool parse(const Args& args, const po::options_description& options, po::variables_map& vm, const char* usage) {
  return parse(args, options, po::positional_options_description(), vm, usage);
}

bool parse(const Args& args, const po::options_description& options, const po::positional_options_description& positional,
           po::variables_map& vm, const char* usage) {
  po::options_description all(options);
  all.add_options()("help,h", "show this help");
  po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
  if (vm.count("help")) {
    std::cout << usage << "\n" << all << "\n";
    return false;
  }
  po::notify(vm);
  return true;
}

void check_sampling_options(const SamplingParams& params) {
  check_number("--temperature", params.temperature, "0 (greedy) or a finite number of at least 1e-6",
               params.temperature == 0.0 || params.temperature >= kMinTemperature);
  if (params.top_k < 0) input_error("--top-k", "must be >= 0 (0 turns it off)");
  check_number("--top-p", params.top_p, "in (0, 1]", params.top_p > 0.0 && params.top_p <= 1.0);
  validate(params);
}

void check_fraction_option(const std::string& option, double value) {
  check_number(option, value, "in (0, 1]", value > 0.0 && value <= 1.0);
}

void check_outputs(const std::vector<Output>& outputs) {
  std::map<std::string, std::string> seen;  // output_identity -> the option that named it
  for (const Output& output : outputs) {
    if (output.path.empty()) continue;
    const std::string where = output.option + " " + output.path;
    const std::string resolved = output.kind == Output::File ? check_output_file_writable(output.path, where)
                                                             : check_output_directory_writable(output.path, where);
    const auto [it, fresh] = seen.emplace(output_identity(resolved), output.option);
    if (!fresh) input_error(where, "is the same file as " + it->second + "'s: give each output its own path");
  }
}

std::string data_dir() {
  const char* overridden = std::getenv("SPECD_DATA");
  if (overridden && *overridden) return overridden;
  // Relative to the working directory: the defaults end up in artifacts' provenance, traces and
  // reports, which must not carry this machine's absolute paths (from the repository's root this
  // is "data", as a user would type it).
  return portable_path(SPECD_DATA_DIR);
}

std::string default_model_dir() { return data_dir() + "/models/demo-large-target"; }

std::string draft_dir_for(const std::string& draft_arg, const std::string& target_dir) {
  if (!draft_arg.empty()) return draft_arg;
  // Each demo target with the draft it is measured with (docs/models.md).
  static const std::pair<const char*, const char*> kDemoPairs[] = {{"demo-large-target", "demo-large-draft"}, {"demo-target", "demo-draft"}};
  std::error_code ec;
  const std::filesystem::path target = std::filesystem::weakly_canonical(target_dir, ec);
  for (const auto& [demo_target, demo_draft] : kDemoPairs) {
    std::error_code demo_ec;
    if (!ec && target == std::filesystem::weakly_canonical(data_dir() + "/models/" + demo_target, demo_ec) && !demo_ec)
      return data_dir() + "/models/" + demo_draft;
  }
  input_error("--draft", "not given, and " + target_dir + " is not a demo target whose draft specd knows: name the draft model");
}

}  // namespace specd::cli
