#pragma once
// Errors a user can fix (bad files, bad arguments) are InputError: the CLI prints the message as
// one line and exits with code 2. Everything else is a bug and keeps its own exception type.
#include <stdexcept>
#include <string>

namespace specd {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

// "where: what", e.g. input_error("model/config.json", "missing field hidden_size").
[[noreturn]] inline void input_error(const std::string& where, const std::string& what) {
  throw InputError(where + ": " + what);
}

}  // namespace specd
