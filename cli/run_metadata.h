#pragma once
// What a command records of its own invocation in the files it writes (traces, artifacts): the
// command line as typed and every option's value, defaults included.
#include <boost/program_options/variables_map.hpp>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "model/device.h"

namespace specd::cli {

// "specd COMMAND ARG ..." with each argument shell-quoted where needed, so the line can be
// pasted back into a shell.
std::string command_line(const std::string& command, const Args& args);

// Every option of `vm` (given or defaulted) as {"name": value}, except those in `exclude`.
// std::logic_error for an option type this function does not know (a test parses every
// command's options through it).
nlohmann::json options_json(const boost::program_options::variables_map& vm, const std::set<std::string>& exclude = {});

// The machine this command's timings come from (util/machine.h): this CPU, the threads `device`
// resolves to, and what runs the model ("cpu", "cpu (ATen)" with --aten, or the libtorch device).
nlohmann::json this_machine(const DeviceSpec& device);

}  // namespace specd::cli
