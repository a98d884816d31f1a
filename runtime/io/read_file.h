#pragma once
// A user's file read whole; unreadable paths (missing, not a regular file, read error, too large)
// throw an InputError naming the path. Symlinks are followed, then the target must be a regular
// file: a FIFO, a device (/dev/zero) or a directory is refused before anything is read, so a
// reader never blocks on a pipe or grows without bound.
#include <cstdint>
#include <string>

namespace specd {

// The largest file read_whole_file reads (256 MiB): the largest published tokenizer.json files
// hold about 35 MB, workloads and configs far less.
constexpr uint64_t kMaxWholeFileBytes = uint64_t{256} << 20;

std::string read_whole_file(const std::string& path, uint64_t max_bytes = kMaxWholeFileBytes);

// A regular file opened read-only (the caller closes fd); InputError naming the path otherwise.
// The open does not block on a FIFO (O_NONBLOCK until the type is known).
struct OpenedFile {
  int fd;
  uint64_t size;
};
OpenedFile open_regular_file(const std::string& path);

// For readers that hand a path to a library (SQLite, HDF5): InputError unless PATH is, after
// following symlinks, a readable regular file.
void require_regular_file(const std::string& path);

}  // namespace specd
