#include "io/output_path.h"

#include <algorithm>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "util/error.h"

namespace fs = std::filesystem;

namespace specd {
namespace {

// Linux's own limit on symlinks followed in one lookup (MAXSYMLINKS).
constexpr int kMaxSymlinks = 40;

fs::path follow_symlinks(const std::string& path, const std::string& where) {
  if (path.empty()) input_error(where, "is an empty path");
  fs::path p(path);
  for (int hops = 0;; ++hops) {
    std::error_code error;
    const fs::file_status status = fs::symlink_status(p, error);
    if (error && error != std::errc::no_such_file_or_directory && error != std::errc::not_a_directory)
      input_error(where, "cannot be examined: " + error.message());
    if (status.type() != fs::file_type::symlink) return p;
    if (hops == kMaxSymlinks) input_error(where, "too many levels of symbolic links");
    const fs::path target = fs::read_symlink(p, error);
    if (error) input_error(where, "cannot read the symbolic link: " + error.message());
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
}

const char* type_name(fs::file_type type) {
  switch (type) {
    case fs::file_type::directory: return "a directory";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    default: return "not a regular file";
  }
}

// The type of what p names, not_found also when an ancestor is a file (check_writable_ancestor
// then names that ancestor).
fs::file_type type_of(const fs::path& p, const std::string& where) {
  std::error_code error;
  const fs::file_status status = fs::status(p, error);
  if (error == std::errc::not_a_directory) return fs::file_type::not_found;
  if (error && error != std::errc::no_such_file_or_directory) input_error(where, "cannot be examined: " + error.message());
  return status.type();
}

std::string resolved_message(const std::string& path, const fs::path& resolved) {
  return resolved.string() == path ? "" : " (the symbolic link's target " + resolved.string() + ")";
}

void check_writable_ancestor(const fs::path& resolved, const std::string& where) {
  fs::path dir = fs::absolute(resolved).parent_path();
  while (type_of(dir, where) == fs::file_type::not_found && dir.has_relative_path()) dir = dir.parent_path();
  const fs::file_type type = type_of(dir, where);
  if (type != fs::file_type::directory) input_error(where, "cannot be created: " + dir.string() + " is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    input_error(where, "cannot be written: directory " + dir.string() + ": " + std::strerror(errno));
}

}  // namespace

std::string resolve_output_file(const std::string& path, const std::string& where) {
  const fs::path resolved = follow_symlinks(path, where);
  const fs::file_type type = type_of(resolved, where);
  if (type != fs::file_type::not_found && type != fs::file_type::regular)
    input_error(where, std::string("is ") + type_name(type) + resolved_message(path, resolved) + ", not a regular file");
  return resolved.string();
}

std::string resolve_output_directory(const std::string& path, const std::string& where) {
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  const fs::path resolved = follow_symlinks(trimmed, where);
  const fs::file_type type = type_of(resolved, where);
  if (type != fs::file_type::not_found && type != fs::file_type::directory)
    input_error(where, std::string("is ") + (type == fs::file_type::regular ? "a file" : type_name(type)) +
                           resolved_message(trimmed, resolved) + ", not a directory");
  return resolved.string();
}

std::string check_output_file_writable(const std::string& path, const std::string& where) {
  const std::string resolved = resolve_output_file(path, where);
  check_writable_ancestor(resolved, where);
  return resolved;
}

std::string check_output_directory_writable(const std::string& path, const std::string& where) {
  const std::string resolved = resolve_output_directory(path, where);
  check_writable_ancestor(resolved, where);
  return resolved;
}

void check_replaceable_directory(const std::string& path, const std::vector<std::string>& own, bool force, const std::string& what,
                                 const std::string& where) {
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  std::error_code error;
  if (fs::is_symlink(fs::symlink_status(trimmed, error)))
    input_error(where, trimmed + " is a symlink: replacing it would replace what it points to; give the directory itself");
  if (!fs::is_directory(fs::status(trimmed, error)) || force) return;  // absent, or not a directory (refused where it is resolved)
  fs::directory_iterator entries(trimmed, error);
  if (error) input_error(where, trimmed + ": cannot be listed (" + error.message() + ")");
  for (const fs::directory_entry& entry : entries) {
    const std::string name = entry.path().filename().string();
    if (std::find(own.begin(), own.end(), name) == own.end())
      input_error(where, trimmed + " holds '" + name + "', which is not part of " + what +
                             ": choose another directory, or pass --force to replace it whole");
  }
}

std::string output_identity(const std::string& resolved_path) {
  struct stat st {};
  if (::stat(resolved_path.c_str(), &st) == 0) return "inode:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  std::error_code error;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(resolved_path), error);
  return "path:" + (error ? fs::absolute(resolved_path).lexically_normal().string() : canonical.string());
}

std::string portable_path(const std::string& path) {
  const fs::path p(path);
  if (!p.is_absolute()) return path;
  std::error_code error;
  const fs::path cwd = fs::current_path(error);
  return error ? path : p.lexically_proximate(cwd).string();
}

}  // namespace specd
