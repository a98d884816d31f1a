#include "model/cpu_threads.h"

#include <dlfcn.h>

#include <ATen/Parallel.h>
#include <thread>

namespace specd {
namespace {

// OpenBLAS is reached through the libblas.so.3 alternative, so look its controls up at run time
// rather than linking against it: with another BLAS they are simply absent.
template <typename Fn>
Fn blas_symbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

int resolve_thread_count(int threads) {
  return threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void configure_cpu_threads(int threads) {
  threads = resolve_thread_count(threads);
  at::set_num_threads(1);
  if (auto set = blas_symbol<void (*)(int)>("openblas_set_num_threads")) set(threads);
}

int blas_threads() {
  if (auto get = blas_symbol<int (*)()>("openblas_get_num_threads")) return get();
  return 1;
}

}  // namespace specd
