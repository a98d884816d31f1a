// remove_tree removes what std::filesystem::remove_all removes, without its libstdc++ code (the
// copy a PyTorch libtorch exports crashes), and never follows a symlink out of the tree.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <system_error>

#include "io/remove_tree.h"
#include "test_helpers.h"
#include "test_skip.h"

using namespace specd;
using namespace specd::test;
namespace fs = std::filesystem;

TEST_CASE("remove_tree removes a nested directory and leaves what its symlinks point to", "[io]") {
  ScopedTempDir tmp("remove-tree");
  const fs::path outside = tmp.path() / "outside";
  fs::create_directories(outside);
  write_text_file((outside / "keep.txt").string(), "kept");
  const fs::path tree = tmp.path() / "tree";
  fs::create_directories(tree / "a" / "b" / "c");
  write_text_file((tree / "top.txt").string(), "x");
  write_text_file((tree / "a" / "b" / "c" / "deep.txt").string(), "y");
  fs::create_directory_symlink(outside, tree / "a" / "link-to-outside");
  fs::create_symlink(tree / "missing", tree / "dangling");

  std::error_code error;
  remove_tree(tree.string(), error);
  CHECK_FALSE(error);
  CHECK_FALSE(fs::exists(fs::symlink_status(tree)));
  CHECK(read_text_file((outside / "keep.txt").string()) == "kept");
}

TEST_CASE("remove_tree: a file, and a path that does not exist", "[io]") {
  ScopedTempDir tmp("remove-tree-cases");
  const std::string file = tmp.file("plain.txt");
  write_text_file(file, "z");
  remove_tree(file);
  CHECK_FALSE(fs::exists(file));

  std::error_code error;
  remove_tree(tmp.file("never-was"), error);
  CHECK_FALSE(error);
  CHECK_NOTHROW(remove_tree(tmp.file("never-was")));
}

// Root ignores permissions, so there the failure cannot be provoked: Skipped.
TEST_CASE("remove_tree stops at an entry it cannot unlink and names the errno", "[io]") {
  if (::geteuid() == 0) SPECD_SKIP("runs as root, which may unlink anything");
  ScopedTempDir tmp("remove-tree-locked");
  const fs::path locked = tmp.path() / "locked";
  fs::create_directories(locked);
  write_text_file((locked / "inside.txt").string(), "w");
  ::chmod(locked.c_str(), 0500);  // no write permission: its entries cannot be unlinked
  std::error_code error;
  remove_tree(locked.string(), error);
  CHECK(error == std::errc::permission_denied);
  CHECK_THROWS_AS(remove_tree(locked.string()), std::system_error);
  CHECK(fs::exists(locked / "inside.txt"));
  ::chmod(locked.c_str(), 0700);
  remove_tree(locked.string());
  CHECK_FALSE(fs::exists(locked));
}
