#pragma once
// A user's file read whole; unreadable paths (missing, not a regular file, read error) throw an
// InputError naming the path.
#include <cstdint>
#include <string>

namespace specd {

std::string read_whole_file(const std::string& path);

// A regular file opened read-only (the caller closes fd); InputError naming the path otherwise.
struct OpenedFile {
  int fd;
  uint64_t size;
};
OpenedFile open_regular_file(const std::string& path);

}  // namespace specd
