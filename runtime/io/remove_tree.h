#pragma once
// Removes a path and, when it is a directory, everything under it (symlinks are removed, never
// followed), as std::filesystem::remove_all does, but through POSIX nftw. PyTorch's own libtorch
// exports the std::filesystem of the libstdc++ it links statically (pytorch/pytorch#133437); a
// binary linking it binds remove_all to that copy, which calls through a null pointer.
#include <string>
#include <system_error>

namespace specd {

// A path that does not exist is no error. On failure ERROR holds the first errno met.
void remove_tree(const std::string& path, std::error_code& error);

// Throws std::system_error naming PATH.
void remove_tree(const std::string& path);

}  // namespace specd
