#pragma once
// The worker threads of the CPU kernels. A decoding step runs ~30 short parallel loops (each
// matmul and attention) with a little serial work between them and between steps; libgomp's
// default wait policy puts its workers to sleep in those gaps on this kind of machine, and waking
// them cost ~25% of a small model's step (OMP_WAIT_POLICY=ACTIVE recovers it, but only as an
// environment variable read before main). These workers wait for about a millisecond after each
// loop (spinning briefly, then yielding the core), so the next loop of the same step (or the next
// step) finds them awake, then sleep, so an idle process does not hold the cores.
// A loop is split into a few chunks per thread that the caller and the workers claim as they come:
// on a busy machine, where a worker may be descheduled for a whole time slice, the threads that
// run take its share instead of waiting for it, so N threads are never much slower than one.
#include <cstdint>
#include <functional>

namespace specd::cpu {

using Body = std::function<void(int64_t, int64_t, int)>;

// Runs body(begin, end, thread) over [0, tasks) in contiguous chunks, each once, on the calling
// thread (thread 0) and up to threads - 1 workers (thread: the index of the one running it, for
// per-thread scratch; a thread may run several chunks); returns when all are done. Which thread
// runs which chunk varies, so a body's result must not depend on it. With threads <= 1, or when
// another thread is already using the pool, the caller runs everything itself.
void parallel_for(int threads, int64_t tasks, const Body& body);

// body(thread) on each of `threads` threads at once, each index on its own thread, the caller
// waiting for all (measuring what the machine's threads do together: bench/machine_limits).
void on_every_thread(int threads, const std::function<void(int)>& body);

// body(first, last) over rows [0, rows) of row-wise work (norms, activations, rounding): on the
// workers for a prefill's many rows, on this thread for a decoding step's few, where waking the
// workers would cost more than the work.
template <typename Body>
void parallel_rows(int64_t rows, int threads, const Body& body) {
  constexpr int64_t kRowsWorthSharing = 16;
  if (rows < kRowsWorthSharing || threads <= 1) return body(int64_t{0}, rows);
  parallel_for(threads, rows, [&](int64_t first, int64_t last, int) { body(first, last); });
}

}  // namespace specd::cpu
