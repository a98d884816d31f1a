#pragma once
// Option groups shared by the subcommands, and parsing with one-line errors.
#include <boost/program_options.hpp>

#include <string>
#include <vector>

#include "commands.h"
#include "model/device.h"
#include "sampling/sampler.h"

namespace specd::cli {

namespace po = boost::program_options;

// Adds --device, --threads (at most one per CPU), --max-memory (the KV caches' limit), --aten and
// --fp32-activations.
void add_device_options(po::options_description& options, DeviceSpec& device);

// Parses args into `vm`; returns false (after printing usage to stdout) when --help was given.
bool parse(const Args& args, const po::options_description& options, po::variables_map& vm, const char* usage);
// The same, with positional arguments (e.g. `specd artifact verify DIR`).
bool parse(const Args& args, const po::options_description& options, const po::positional_options_description& positional,
           po::variables_map& vm, const char* usage);

// --temperature, --top-k and --top-p: InputError naming the option for a value out of range
// (NaN, infinities and subnormal numbers included; a positive temperature is at least 1e-6).
void check_sampling_options(const SamplingParams& params);
// A probability-like option in (0, 1]: finite and not subnormal, or InputError naming it.
void check_fraction_option(const std::string& option, double value);

// An output a command writes (usually at the end of a long run): checked before the work starts,
// so that a bad one fails at once with one line naming the option. Kind File: the path is a
// regular file or does not exist yet; Directory: a directory or not there yet. Either way the
// nearest existing ancestor must be a writable directory. Symlinks are followed (outputs are
// written through to their targets).
struct Output {
  enum Kind { File, Directory };
  std::string option;  // "--json"
  std::string path;    // "" when the option was not given (skipped)
  Kind kind = File;
};
// Checks every output, and that no two name the same file (also through symlinks, hard links or
// different spellings). InputError naming the option.
void check_outputs(const std::vector<Output>& outputs);

// $SPECD_DATA, or the data/ directory of the source tree this binary was built from, relative to
// the working directory.
std::string data_dir();
// The target a command uses when it names none: data/models/demo-large-target, the demo pair's
// target whose decoding reads its weights from memory (docs/models.md).
std::string default_model_dir();
// The draft model for target_dir: draft_arg when --draft was given, else the draft of the demo
// pair whose target this is (demo-large-target: demo-large-draft; demo-target: demo-draft); any other
// target needs --draft (InputError naming it).
std::string draft_dir_for(const std::string& draft_arg, const std::string& target_dir);

}  // namespace specd::cli
