#pragma once
// Shared by the harnesses. Bad bytes must end in the project's one-line input error (InputError,
// which the CLI maps to exit 2): that outcome is fine. Anything else escaping a harness (another
// exception, a crash, a sanitizer report, a timeout, memory beyond -rss_limit_mb) is a finding.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "io/remove_tree.h"
#include "util/error.h"

namespace specd::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

template <typename Body>
int run_input(Body&& body) {
  try {
    body();
  } catch (const InputError&) {
  }
  return 0;
}

// A file holding exactly the fuzzer's bytes, for readers that open a path (SQLite, HDF5, mmap):
// one private directory per process, removed at exit, the file rewritten for every input.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& name) {
    std::string pattern = (std::filesystem::temp_directory_path() / "specd-fuzz-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) std::abort();
    dir_ = pattern;
    path_ = dir_ + "/" + name;
  }
  ~ScratchFile() {
    std::error_code ignored;
    specd::remove_tree(dir_, ignored);
  }
  const std::string& write(const uint8_t* data, size_t size) {
    // Whatever a previous input left beside the file (SQLite's -wal, -shm, -journal) goes too.
    std::error_code ignored;
    for (const auto& entry : std::filesystem::directory_iterator(dir_, ignored)) specd::remove_tree(entry.path().string(), ignored);
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) std::abort();
    for (size_t done = 0; done < size;) {
      const ssize_t wrote = ::write(fd, data + done, size - done);
      if (wrote <= 0) std::abort();
      done += static_cast<size_t>(wrote);
    }
    ::close(fd);
    return path_;
  }

 private:
  std::string dir_, path_;
};

}  // namespace specd::fuzz
