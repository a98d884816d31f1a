#pragma once
// Option groups shared by the subcommands, and parsing with one-line errors.
#include <boost/program_options.hpp>

#include <string>

#include "commands.h"
#include "model/device.h"
#include "sampling/sampler.h"

namespace specd::cli {

namespace po = boost::program_options;

// Adds --device and --threads.
void add_device_options(po::options_description& options, DeviceSpec& device);

// Parses args into `vm`; returns false (after printing usage to stdout) when --help was given.
bool parse(const Args& args, const po::options_description& options, po::variables_map& vm, const char* usage);
// The same, with positional arguments (e.g. `specd artifact verify DIR`).
bool parse(const Args& args, const po::options_description& options, const po::positional_options_description& positional,
           po::variables_map& vm, const char* usage);

// --temperature, --top-k and --top-p: InputError naming the option for a value out of range.
void check_sampling_options(const SamplingParams& params);

// An output directory a long command will write at the end: its parent is created when missing
// and must be writable, checked before the work starts (InputError naming the option's value).
void check_output_directory(const std::string& dir);

// $SPECD_DATA, or the data/ directory of the source tree this binary was built from.
std::string data_dir();
// The demo target model (data/models/demo-target), used when a command names no --model.
std::string default_model_dir();

}  // namespace specd::cli
