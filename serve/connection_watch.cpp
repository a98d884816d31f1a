#include "serve/connection_watch.h"

#include <dirent.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <memory>

// ThreadSanitizer models a descriptor as memory that socket() and close() write, so the scan
// below, reading every descriptor while other threads open and close theirs, reads as a race to
// it (and building that report for a descriptor of a finished thread can crash TSan itself). The
// scan is not one: each call is atomic in the kernel, a descriptor that changes under it just
// fails to match both ends, and the matched one is held open by the waiting handler. So TSan is
// told to ignore the scan's reads, with its dynamic-annotation calls, and only in a TSan build.
#if defined(__SANITIZE_THREAD__)
#define SPECD_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SPECD_THREAD_SANITIZER 1
#endif
#endif
#ifdef SPECD_THREAD_SANITIZER
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
#endif

namespace specd::serve {
namespace {

struct IgnoredByThreadSanitizer {
#ifdef SPECD_THREAD_SANITIZER
  IgnoredByThreadSanitizer() { AnnotateIgnoreReadsBegin(__FILE__, __LINE__); }
  ~IgnoredByThreadSanitizer() { AnnotateIgnoreReadsEnd(__FILE__, __LINE__); }
#endif
};

// Host and port of one end, written as cpp-httplib writes them (getnameinfo, numeric host).
bool end_of(int fd, bool peer, std::string& host, int& port) {
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  auto* raw = reinterpret_cast<sockaddr*>(&address);
  if ((peer ? getpeername(fd, raw, &size) : getsockname(fd, raw, &size)) != 0) return false;
  char name[NI_MAXHOST], service[NI_MAXSERV];
  if (getnameinfo(raw, size, name, sizeof name, service, sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) != 0) return false;
  host = name;
  port = std::atoi(service);
  return true;
}

}  // namespace

int find_connection_socket(const ConnectionEnds& ends) {
  [[maybe_unused]] const IgnoredByThreadSanitizer scan;  // empty outside TSan builds
  std::unique_ptr<DIR, int (*)(DIR*)> fds(opendir("/proc/self/fd"), closedir);
  if (!fds) return -1;
  while (const dirent* entry = readdir(fds.get())) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == dirfd(fds.get())) continue;
    struct stat info{};
    if (fstat(static_cast<int>(fd), &info) != 0 || !S_ISSOCK(info.st_mode)) continue;
    std::string host;
    int port = -1;
    if (!end_of(static_cast<int>(fd), true, host, port) || port != ends.remote_port || host != ends.remote_addr) continue;
    if (!end_of(static_cast<int>(fd), false, host, port) || port != ends.local_port || host != ends.local_addr) continue;
    return static_cast<int>(fd);
  }
  return -1;
}

ConnectionWatch::ConnectionWatch(const ConnectionEnds& ends) : fd_(find_connection_socket(ends)) {}

bool ConnectionWatch::peer_gone() {
  if (fd_ < 0) return false;
  pollfd watched{fd_, POLLIN | POLLRDHUP, 0};
  if (poll(&watched, 1, 0) <= 0) return false;
  if (watched.revents & (POLLERR | POLLHUP | POLLRDHUP)) return true;
  // Readable: the end of the stream (0), a reset (an error), or the client's next request (data).
  char byte;
  const ssize_t got = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

}  // namespace specd::serve
