#include "aten_handoff.h"

#include <unistd.h>

#include <climits>
#include <cstring>
#include <string>

#include "model/model_backend.h"

namespace specd::cli {
namespace {

bool asks_for_aten(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--aten") return true;
    if (arg == "--device" && i + 1 < argc && std::strcmp(argv[i + 1], "cpu") != 0) return true;
    if (arg.rfind("--device=", 0) == 0 && arg != "--device=cpu") return true;
  }
  return false;
}

}  // namespace

void hand_off_to_aten(int argc, char** argv) {
  if (aten_backend_loader() || !asks_for_aten(argc, argv)) return;
  char self[PATH_MAX];
  const ssize_t length = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) return;
  std::string path(self, static_cast<size_t>(length));
  path = path.substr(0, path.rfind('/') + 1) + "specd-aten";
  if (::access(path.c_str(), X_OK) != 0) return;
  ::execv(path.c_str(), argv);
}

}  // namespace specd::cli
