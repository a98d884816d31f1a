#include "io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "io/output_path.h"
#include "util/error.h"

namespace specd {
namespace {

std::string random_suffix() {
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device device;
  std::string suffix;
  for (int i = 0; i < 6; ++i) suffix += kChars[device() % (sizeof kChars - 1)];
  return suffix;
}

[[noreturn]] void io_error(const std::string& path, const char* action, int error) {
  input_error(path, std::string("cannot ") + action + ": " + std::strerror(error));
}

// Gives the file open as `fd` a fresh name "TARGET.tmp-XXXXXX" (O_EXCL-like: an existing name is
// never replaced) and returns it. Through /proc/self/fd: linkat's AT_EMPTY_PATH needs a privilege.
std::string link_fresh_name(int fd, const std::string& target, const std::string& path) {
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = target + ".tmp-" + random_suffix();
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return name;
    if (errno != EEXIST) io_error(path, "name the written file", errno);
  }
  io_error(path, "name the written file", EEXIST);
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)), target_(resolve_output_file(path_, path_)) {
  const size_t slash = target_.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target_.substr(0, slash);
  fd_ = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (fd_ >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) {
    if (fd_ < 0) io_error(path_, "create file", errno);
    return;
  }
  // O_EXCL with a fresh random name instead of mkstemp, so the file gets the usual 0666 & ~umask.
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    temp_path_ = target_ + ".tmp-" + random_suffix();
    fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST) io_error(path_, "create file", errno);
  }
  if (fd_ < 0) io_error(path_, "create a temporary file", EEXIST);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (!committed_) discard();
}

void AtomicFileWriter::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
}

void AtomicFileWriter::write(const void* data, size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = ::write(fd_, bytes, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      io_error(path_, "write", errno);
    }
    bytes += written;
    size -= static_cast<size_t>(written);
  }
}

void AtomicFileWriter::commit() {
  if (::fsync(fd_) != 0) io_error(path_, "write", errno);
  if (temp_path_.empty()) temp_path_ = link_fresh_name(fd_, target_, path_);
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) io_error(path_, "write", errno);
  if (std::rename(temp_path_.c_str(), target_.c_str()) != 0) io_error(path_, "rename into place", errno);
  committed_ = true;
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  AtomicFileWriter writer(path);
  writer.write(contents);
  writer.commit();
}

}  // namespace specd
