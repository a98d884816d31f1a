#pragma once
// A lock for a directory that is replaced whole (an artifact, io/atomic_directory.h): the file
// DIR.lock beside it, held with flock(2), so the OS releases it when its holder dies however it
// dies. A writer holds it exclusively for its whole read-modify-write, so no other writer's change
// is lost; a reader holds it shared, so it reads one version whole. DIR.lock stays after use.
#include <string>

namespace specd {

class DirectoryLock {
 public:
  enum class Mode { Shared, Exclusive };
  // Waits for the lock, saying once on stderr whom it waits for ("DIR is being written by pid N:
  // waiting"). Exclusive creates DIR.lock (and DIR's parents) when missing and writes this pid
  // into it; shared holds nothing when DIR.lock does not exist (no writer has locked DIR yet) or
  // cannot be opened, so that reading needs no write access. I/O failures of an exclusive lock
  // throw InputError naming DIR.lock.
  DirectoryLock(const std::string& dir, Mode mode);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

  // "DIR.lock" for DIR, whatever trailing slashes DIR was given with.
  static std::string path_for(const std::string& dir);

 private:
  int fd_ = -1;
};

}  // namespace specd
