#include "model/cpu_threads.h"

#include <algorithm>
#include <thread>

namespace specd {

int resolve_thread_count(int threads) {
  return threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace specd
