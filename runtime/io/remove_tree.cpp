#include "io/remove_tree.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace specd {
namespace {

// With FTW_DEPTH a directory is visited after its contents (FTW_DP; FTW_DNR when unreadable, and
// then rmdir fails with the reason). A non-zero return stops the walk and becomes nftw's result.
int remove_entry(const char* path, const struct stat*, int type, struct FTW*) {
  const int rc = (type == FTW_DP || type == FTW_DNR) ? ::rmdir(path) : ::unlink(path);
  return rc == 0 || errno == ENOENT ? 0 : errno;
}

}  // namespace

void remove_tree(const std::string& path, std::error_code& error) {
  error.clear();
  // FTW_PHYS: a symlink is an entry to unlink, not a directory to enter. A missing PATH fails the
  // walk with ENOENT, which is no error here.
  const int rc = ::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  if (rc == -1) {
    if (errno != ENOENT) error.assign(errno, std::generic_category());
  } else if (rc != 0) {
    error.assign(rc, std::generic_category());
  }
}

void remove_tree(const std::string& path) {
  std::error_code error;
  remove_tree(path, error);
  if (error) throw std::system_error(error, "cannot remove " + path);
}

}  // namespace specd
