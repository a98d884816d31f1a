#pragma once

namespace specd {

// On a small CPU libtorch's OpenMP threads and OpenBLAS's threads spin against each other
// (2-5x slower on 2 cores). We keep ATen's intra-op pool at one thread and give the cores to
// BLAS, where the time of a small model goes. threads = 0 means one per core.
void configure_cpu_threads(int threads);

// threads, or one per core when threads <= 0.
int resolve_thread_count(int threads);

// The BLAS thread count in effect (1 when the BLAS cannot say).
int blas_threads();

}  // namespace specd
