#include "model/cpu/spin_pool.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "util/simd.h"

namespace specd::cpu {
namespace {

inline void cpu_relax() {
#ifdef SPECD_HAVE_AVX2
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// A wait that spins briefly (a loop's share takes microseconds), then yields the core: a thread
// that waits on another must not keep that other one, or another process, off the core it needs.
class Backoff {
 public:
  void pause() {
    if (++spins_ < kSpins) cpu_relax();
    else std::this_thread::yield();
  }

 private:
  static constexpr int kSpins = 1 << 10;
  int spins_ = 0;
};

// A loop's chunks are claimed from one atomic word holding the loop's epoch (high half) and the
// next chunk (low half): a worker that lags behind (descheduled by a busy machine) claims nothing
// once the epoch has moved on, so the caller never waits for a worker it has not heard from, only
// for chunks that a worker has claimed and is running.
constexpr uint64_t kChunkMask = 0xffffffffull;
constexpr int kChunksPerThread = 4;  // so that the threads that run finish the share of one that does not

class SpinPool {
 public:
  ~SpinPool() {
    {
      std::lock_guard<std::mutex> lock(sleep_mutex_);
      stopping_.store(true, std::memory_order_release);
      state_.fetch_add(uint64_t{1} << 32, std::memory_order_release);
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }

  bool try_run(int threads, int64_t tasks, const Body& body, bool every_thread) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    while (static_cast<int>(workers_.size()) < threads - 1) {
      const int index = static_cast<int>(workers_.size()) + 1;
      // The worker starts from the current epoch: read here, not in the new thread, which might
      // only run after this loop's epoch is published and then wait for the next one.
      const uint64_t seen = state_.load(std::memory_order_acquire) >> 32;
      workers_.emplace_back([this, index, seen] { work(index, seen); });
    }
    body_ = &body;
    tasks_ = tasks;
    threads_.store(threads, std::memory_order_relaxed);
    // every_thread: one chunk per thread, each run by its own thread (the caller waits for all).
    const int64_t chunks = every_thread ? threads : std::min<int64_t>(tasks, int64_t{threads} * kChunksPerThread);
    chunks_.store(chunks, std::memory_order_relaxed);
    every_thread_.store(every_thread, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    const uint64_t epoch = ((state_.load(std::memory_order_relaxed) >> 32) + 1) & kChunkMask;  // wraps with the word
    {
      std::lock_guard<std::mutex> lock(sleep_mutex_);  // a worker about to sleep sees the new epoch
      state_.store(epoch << 32, std::memory_order_release);
    }
    if (sleeping_.load(std::memory_order_acquire) > 0) wake_.notify_all();
    if (every_thread) run_chunk(0, 0);
    else
      for (int64_t chunk; (chunk = claim(epoch)) >= 0;) run_chunk(chunk, 0);
    Backoff backoff;
    while (done_.load(std::memory_order_acquire) < chunks) backoff.pause();
    return true;
  }

 private:
  // The next chunk of loop `epoch`, or -1 when it has none left or another loop has begun.
  int64_t claim(uint64_t epoch) {
    uint64_t state = state_.load(std::memory_order_acquire);
    while (true) {
      if ((state >> 32) != epoch) return -1;
      // chunks_ belongs to this epoch: the caller rewrites it only after every chunk is done, and
      // a claim below chunks_ keeps the loop from being done.
      const int64_t chunk = static_cast<int64_t>(state & kChunkMask);
      if (chunk >= chunks_.load(std::memory_order_relaxed)) return -1;
      if (state_.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel, std::memory_order_acquire)) return chunk;
    }
  }

  void run_chunk(int64_t chunk, int thread) {
    const int64_t chunks = chunks_.load(std::memory_order_relaxed);
    const int64_t begin = tasks_ * chunk / chunks, end = tasks_ * (chunk + 1) / chunks;
    if (begin < end) (*body_)(begin, end, thread);
    done_.fetch_add(1, std::memory_order_acq_rel);
  }

  void work(int index, uint64_t seen) {
    while (true) {
      // About a millisecond of waiting for the next loop (pauses, then yields), then sleep.
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
      Backoff backoff;
      for (int polls = 0; (state_.load(std::memory_order_acquire) >> 32) == seen; ++polls) {
        if ((polls & 255) != 255 || std::chrono::steady_clock::now() < give_up) {
          backoff.pause();
          continue;
        }
        std::unique_lock<std::mutex> lock(sleep_mutex_);
        sleeping_.fetch_add(1, std::memory_order_acq_rel);
        wake_.wait(lock, [&] { return (state_.load(std::memory_order_acquire) >> 32) != seen; });
        sleeping_.fetch_sub(1, std::memory_order_acq_rel);
      }
      seen = state_.load(std::memory_order_acquire) >> 32;
      if (stopping_.load(std::memory_order_acquire)) return;
      if (every_thread_.load(std::memory_order_acquire)) {
        // Its own chunk, by index: the caller waits for it, so the loop stays this epoch's.
        if (index < threads_.load(std::memory_order_acquire) && (state_.load(std::memory_order_acquire) >> 32) == seen)
          run_chunk(index, index);
        continue;
      }
      // A worker beyond this loop's threads claims nothing: its index has no scratch in the loop.
      // (threads_ read after the epoch is this loop's or a later one's; a later one only once
      // this loop is done, when claims fail anyway.)
      if (index >= threads_.load(std::memory_order_acquire)) continue;
      for (int64_t chunk; (chunk = claim(seen)) >= 0;) run_chunk(chunk, index);
    }
  }

  std::mutex busy_;  // one parallel_for at a time
  std::vector<std::thread> workers_;
  // The loop's: written before its epoch is published; body_ and tasks_ are read only by a thread
  // running one of its chunks (the loop cannot end, so they cannot change, meanwhile).
  const Body* body_ = nullptr;
  int64_t tasks_ = 0;
  std::atomic<int64_t> chunks_{0};
  std::atomic<int> threads_{1};
  std::atomic<bool> every_thread_{false};
  std::atomic<uint64_t> state_{0};  // epoch << 32 | next chunk
  std::atomic<int64_t> done_{0};    // chunks finished in this loop
  std::atomic<int> sleeping_{0};
  std::mutex sleep_mutex_;
  std::condition_variable wake_;
  std::atomic<bool> stopping_{false};
};

SpinPool& pool() {
  static SpinPool instance;
  return instance;
}

}  // namespace

void parallel_for(int threads, int64_t tasks, const Body& body) {
  if (tasks <= 0) return;
  if (threads > tasks) threads = static_cast<int>(tasks);
  if (threads <= 1 || !pool().try_run(threads, tasks, body, /*every_thread=*/false)) body(0, tasks, 0);
}

void on_every_thread(int threads, const std::function<void(int)>& body) {
  const Body each = [&](int64_t, int64_t, int thread) { body(thread); };
  if (threads <= 1 || !pool().try_run(threads, threads, each, /*every_thread=*/true))
    for (int t = 0; t < std::max(threads, 1); ++t) body(t);
}

}  // namespace specd::cpu
