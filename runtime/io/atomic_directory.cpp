#include "io/atomic_directory.h"

#include <sys/stat.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>  // renameat2 (glibc 2.28+)
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "io/output_path.h"
#include "io/remove_tree.h"
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

// "host-pid": who owns a temporary directory, in its name, so a later writer can tell a dead
// writer's leftovers (same host, no such process) from a live one's, here or on another host
// sharing the file system.
std::string owner_tag() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "unknown");
  for (char* c = host; *c; ++c)
    if (*c == '/' || *c == '-') *c = '_';
  return std::string(host) + "-" + std::to_string(::getpid());
}

// Removes DIR.tmp-HOST-PID-* left by writers of DIR on this host whose process is gone (killed
// while writing or swapping); a live writer's and another host's are left alone.
void remove_dead_writers_leftovers(const std::string& dir, const std::string& own) {
  const fs::path target(dir);
  const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const std::string host = own.substr(0, own.rfind('-'));
  const std::string prefix = target.filename().string() + ".tmp-" + host + "-";
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(parent, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const size_t dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos || rest.find_first_not_of("0123456789") != dash) continue;
    const pid_t pid = static_cast<pid_t>(std::stoll(rest.substr(0, dash)));
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code ignored;
    remove_tree(entry.path().string(), ignored);
  }
}

}  // namespace

AtomicDirectoryWriter::AtomicDirectoryWriter(const std::string& dir) : where_(dir), dir_(resolve_output_directory(dir, dir)) {
  const fs::path parent = fs::path(dir_).parent_path();
  std::error_code error;
  if (!parent.empty()) fs::create_directories(parent, error);
  if (error) input_error(where_, "cannot create " + parent.string() + ": " + error.message());
  const std::string owner = owner_tag();
  remove_dead_writers_leftovers(dir_, owner);
  std::vector<char> name(dir_.begin(), dir_.end());
  const std::string suffix = ".tmp-" + owner + "-XXXXXX";
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
  remove_tree(temp_dir_, ignored);
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
    remove_tree(temp_dir_, error);
    if (error) input_error(where_, "written, but its old contents in " + temp_dir_ + " could not be removed: " + error.message());
  }
  const fs::path parent = fs::path(dir_).parent_path();
  fsync_path(where_, parent.empty() ? "." : parent.string(), O_RDONLY | O_DIRECTORY);
}

}  // namespace specd
