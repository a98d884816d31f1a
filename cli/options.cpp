#include "options.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "util/error.h"

namespace specd::cli {

void add_device_options(po::options_description& options, DeviceSpec& device) {
  options.add_options()
      ("device", po::value(&device.name)->default_value("cpu"), "cpu, cuda or cuda:N")
      ("threads", po::value(&device.threads)->default_value(0), "CPU math threads (0: one per core)")
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
  if (!(params.temperature >= 0.0) || !std::isfinite(params.temperature)) input_error("--temperature", "must be a finite number >= 0");
  if (params.top_k < 0) input_error("--top-k", "must be >= 0 (0 turns it off)");
  if (!(params.top_p > 0.0 && params.top_p <= 1.0)) input_error("--top-p", "must be in (0, 1]");
  validate(params);
}

void check_output_directory(const std::string& dir) {
  namespace fs = std::filesystem;
  if (dir.empty()) input_error("output directory", "is empty");
  fs::path parent = fs::absolute(dir).parent_path();
  std::error_code error;
  fs::create_directories(parent, error);
  if (error) input_error(dir, "cannot create its parent directory: " + error.message());
  if (::access(parent.c_str(), W_OK | X_OK) != 0) input_error(dir, "its parent directory " + parent.string() + " is not writable");
  if (fs::exists(dir) && !fs::is_directory(dir)) input_error(dir, "exists and is not a directory");
}

std::string data_dir() {
  const char* overridden = std::getenv("SPECD_DATA");
  return overridden && *overridden ? overridden : SPECD_DATA_DIR;
}

std::string default_model_dir() { return data_dir() + "/models/demo-target"; }

}  // namespace specd::cli
