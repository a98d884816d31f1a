#pragma once
// Helpers shared by the tests: temporary folders, whole files, the message of an InputError.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include "io/remove_tree.h"
#include "util/error.h"

namespace specd::test {

// A fresh, empty directory under the build tree (SPECD_BINARY_DIR/test-tmp), removed with its
// contents when the object goes out of scope. `name` only makes leftovers easy to recognize.
class ScopedTempDir {
 public:
  explicit ScopedTempDir(const std::string& name) {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::path(SPECD_BINARY_DIR) / "test-tmp" /
            (name + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    specd::remove_tree(path_.string());
    std::filesystem::create_directories(path_);
  }
  ~ScopedTempDir() {
    std::error_code ignored;
    specd::remove_tree(path_.string(), ignored);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_text_file(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
}

inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The message of the InputError that `action` throws ("" if it throws none).
inline std::string input_error_message(const std::function<void()>& action) {
  try {
    action();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace specd::test
