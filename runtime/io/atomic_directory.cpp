#include "io/atomic_directory.h"

#include <sys/stat.h>

#include <fcntl.h>
#include <stdio.h>  // renameat2 (glibc 2.28+)
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "io/output_path.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace specd {
namespace {

[[noreturn]] void io_error(const std::string& dir, const std::string& action, int error) {
  input_error(dir, "cannot " + action + ": " + std::strerror(error));
}

void fsync_path(const std::string& dir, const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) io_error(dir, "open " + path, errno);
  const int synced = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (synced != 0) io_error(dir, "sync " + path, error);
}

}  // namespace

AtomicDirectoryWriter::AtomicDirectoryWriter(const std::string& dir) : where_(dir), dir_(resolve_output_directory(dir, dir)) {
  const fs::path parent = fs::path(dir_).parent_path();
  std::error_code error;
  if (!parent.empty()) fs::create_directories(parent, error);
  if (error) input_error(where_, "cannot create " + parent.string() + ": " + error.message());
  std::vector<char> name(dir_.begin(), dir_.end());
  const std::string suffix = ".tmp-XXXXXX";
  name.insert(name.end(), suffix.begin(), suffix.end());
  name.push_back('\0');
  if (!::mkdtemp(name.data())) io_error(where_, "create a temporary directory beside it", errno);
  temp_dir_ = name.data();
  // mkdtemp makes it private (0700); the artifact gets the permissions of any new directory.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::chmod(temp_dir_.c_str(), 0777 & ~mask) != 0) io_error(where_, "set the permissions of its temporary directory", errno);
}

AtomicDirectoryWriter::~AtomicDirectoryWriter() {
  if (committed_) return;
  std::error_code ignored;
  fs::remove_all(temp_dir_, ignored);
}

void AtomicDirectoryWriter::commit() {
  for (const fs::directory_entry& entry : fs::directory_iterator(temp_dir_))
    if (entry.is_regular_file()) fsync_path(where_, entry.path().string(), O_RDONLY);
  fsync_path(where_, temp_dir_, O_RDONLY | O_DIRECTORY);
  const bool replacing = fs::exists(fs::symlink_status(dir_));
  if (replacing) {
    // One atomic step: DIR now holds the new contents and the temporary name the old ones.
    if (::renameat2(AT_FDCWD, temp_dir_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) != 0)
      io_error(where_, "swap the new contents into place", errno);
  } else if (std::rename(temp_dir_.c_str(), dir_.c_str()) != 0) {
    io_error(where_, "rename into place", errno);
  }
  committed_ = true;
  if (replacing) {
    std::error_code error;
    fs::remove_all(temp_dir_, error);
    if (error) input_error(where_, "written, but its old contents in " + temp_dir_ + " could not be removed: " + error.message());
  }
  const fs::path parent = fs::path(dir_).parent_path();
  fsync_path(where_, parent.empty() ? "." : parent.string(), O_RDONLY | O_DIRECTORY);
}

}  // namespace specd
