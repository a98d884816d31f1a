#include "io/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.h"

namespace specd {

OpenedFile open_regular_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) input_error(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    input_error(path, "not a regular file");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return {fd, static_cast<uint64_t>(info.st_size)};
}

void require_regular_file(const std::string& path) { ::close(open_regular_file(path).fd); }

std::string read_whole_file(const std::string& path, uint64_t max_bytes) {
  const auto [fd, size] = open_regular_file(path);
  const auto too_large = [&, fd = fd] {
    ::close(fd);
    input_error(path, "is larger than the limit of " + std::to_string(max_bytes) + " bytes");
  };
  if (size > max_bytes) too_large();
  std::string text;
  text.reserve(static_cast<size_t>(size));
  char chunk[65536];
  for (;;) {
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      input_error(path, std::string("cannot read: ") + std::strerror(error));
    }
    if (got == 0) break;
    // The size fstat gave is no bound: the file may grow while we read (or be a /proc file).
    if (text.size() + static_cast<size_t>(got) > max_bytes) too_large();
    text.append(chunk, static_cast<size_t>(got));
  }
  ::close(fd);
  return text;
}

}  // namespace specd
