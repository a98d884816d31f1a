#include "run_metadata.h"

#include <boost/any.hpp>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "io/output_path.h"
#include "model/cpu_threads.h"
#include "speculative/method_params.h"
#include "util/machine.h"

namespace specd::cli {

namespace {

std::string shell_quoted(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./,:@%") == std::string::npos)
    return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

template <typename T>
bool put(const boost::any& value, nlohmann::json& out) {
  if (const T* v = boost::any_cast<T>(&value)) {
    out = *v;
    return true;
  }
  return false;
}

}  // namespace

std::string command_line(const std::string& command, const Args& args) {
  std::string line = "specd " + command;
  // Absolute paths relative to the working directory: the line is replayed from there, and what
  // records it (artifacts, traces, reports) must not carry this machine's layout.
  for (const auto& a : args) line += " " + shell_quoted(portable_path(a));
  return line;
}

nlohmann::json options_json(const boost::program_options::variables_map& vm, const std::set<std::string>& exclude) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, variable] : vm) {
    if (exclude.count(name) || variable.empty()) continue;
    const boost::any& value = variable.value();
    nlohmann::json& slot = out[name];
    if (const auto* text = boost::any_cast<std::string>(&value)) {
      // A method parameter is typed as text (it may be a named choice); a number is recorded as one.
      const MethodParam* param = find_flag(name);
      if (param && param->choices.empty()) {
        const double number = parse_param_value(*param, *text, "--" + name);
        slot = param->integer ? nlohmann::json(static_cast<int64_t>(number)) : nlohmann::json(number);
        continue;
      }
      slot = portable_path(*text);
      continue;
    }
    if (!(put<bool>(value, slot) || put<int32_t>(value, slot) || put<int64_t>(value, slot) ||
          put<uint64_t>(value, slot) || put<uint32_t>(value, slot) || put<double>(value, slot) || put<float>(value, slot) ||
          put<std::vector<std::string>>(value, slot) || put<std::vector<int64_t>>(value, slot) ||
          put<std::vector<int32_t>>(value, slot)))
      throw std::logic_error("options_json: option --" + name + " has a type this function does not record");
  }
  return out;
}

nlohmann::json this_machine(const DeviceSpec& device) {
  const std::string runs_on = device.name == "cpu" ? (device.aten_on_cpu ? "cpu (ATen)" : "cpu") : device.name;
  return machine_json(read_cpuinfo(), resolve_thread_count(device.threads), runs_on);
}

}  // namespace specd::cli
