#include "io/directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "util/error.h"

namespace specd {
namespace {

int flock_retrying(int fd, int operation) {
  int result;
  do {
    result = ::flock(fd, operation);
  } while (result != 0 && errno == EINTR);
  return result;
}

// The pid the holder wrote, or "unknown" (a reader holds it, or a writer has not written yet).
std::string holder_of(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  std::string pid = n > 0 ? std::string(text, static_cast<size_t>(n)) : "";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? "unknown" : pid;
}

}  // namespace

std::string DirectoryLock::path_for(const std::string& dir) {
  std::filesystem::path path = std::filesystem::path(dir).lexically_normal();
  if (!path.has_filename()) path = path.parent_path();  // "a/b/" -> "a/b"
  return path.string() + ".lock";
}

DirectoryLock::DirectoryLock(const std::string& dir, Mode mode) {
  const std::string path = path_for(dir);
  const bool exclusive = mode == Mode::Exclusive;
  if (exclusive) {
    std::error_code ignored;
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ignored);
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  } else {
    // No lock file (no writer locked DIR yet) or none readable: nothing to hold; reading DIR
    // itself reports what is wrong with it.
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return;
  }
  if (fd_ < 0) input_error(path, std::string("cannot open the lock of ") + dir + ": " + std::strerror(errno));
  const int operation = exclusive ? LOCK_EX : LOCK_SH;
  if (flock_retrying(fd_, operation | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      const int error = errno;
      ::close(fd_);
      input_error(path, std::string("cannot lock: ") + std::strerror(error));
    }
    // Readers only, when a shared lock can be had now; else the writer, who wrote its pid.
    const bool read = exclusive && flock_retrying(fd_, LOCK_SH | LOCK_NB) == 0;
    if (read) std::fprintf(stderr, "%s is being read: waiting\n", dir.c_str());
    else std::fprintf(stderr, "%s is being written by pid %s: waiting\n", dir.c_str(), holder_of(fd_).c_str());
    if (flock_retrying(fd_, operation) != 0) {
      const int error = errno;
      ::close(fd_);
      input_error(path, std::string("cannot lock: ") + std::strerror(error));
    }
  }
  if (exclusive) {
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
      const int error = errno;
      ::close(fd_);
      input_error(path, std::string("cannot write: ") + std::strerror(error));
    }
  }
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace specd
