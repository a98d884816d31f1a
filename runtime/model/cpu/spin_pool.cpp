#include "model/cpu/spin_pool.h"

#include <algorithm>
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

// A loop is described by one atomic word, published by the caller once the loop's body and task
// count are in place: its epoch, whether every thread runs its own index (on_every_thread), its
// thread count, its chunk count and the next chunk to claim. Everything a worker decides from
// comes from one load of that word, never from fields beside it, which the caller rewrites for
// the next loop before it publishes the next epoch. A worker that lags behind (descheduled by a
// busy machine) claims nothing once the epoch has moved on, so the caller never waits for a
// worker it has not heard from, only for chunks that a worker has claimed and is running; and a
// claimed chunk keeps its loop from ending, so the body and task count stay put while it runs.
struct Word {
  static constexpr int kEpochBits = 24, kFieldBits = 13;
  static constexpr uint64_t kFieldMask = (uint64_t{1} << kFieldBits) - 1, kEpochMask = (uint64_t{1} << kEpochBits) - 1;
  static constexpr int kMaxThreads = 1024;  // threads * kChunksPerThread must fit a field

  uint64_t epoch = 0;
  bool every_thread = false;
  int64_t threads = 0, chunks = 0, next = 0;

  static Word of(uint64_t bits) {
    return {bits >> 40, ((bits >> 39) & 1) != 0, static_cast<int64_t>((bits >> 26) & kFieldMask),
            static_cast<int64_t>((bits >> 13) & kFieldMask), static_cast<int64_t>(bits & kFieldMask)};
  }
  uint64_t bits() const {
    return (epoch & kEpochMask) << 40 | uint64_t{every_thread} << 39 | static_cast<uint64_t>(threads) << 26 |
           static_cast<uint64_t>(chunks) << 13 | static_cast<uint64_t>(next);
  }
};
constexpr int kChunksPerThread = 4;  // so that the threads that run finish the share of one that does not

class SpinPool {
 public:
  ~SpinPool() {
    {
      std::lock_guard<std::mutex> lock(sleep_mutex_);
      stopping_.store(true, std::memory_order_release);
      publish(Word{Word::of(state_.load(std::memory_order_relaxed)).epoch + 1});
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
      const uint64_t seen = Word::of(state_.load(std::memory_order_acquire)).epoch;
      workers_.emplace_back([this, index, seen] { work(index, seen); });
    }
    body_ = &body;
    tasks_ = tasks;
    done_.store(0, std::memory_order_relaxed);
    Word loop;
    loop.epoch = (Word::of(state_.load(std::memory_order_relaxed)).epoch + 1) & Word::kEpochMask;
    loop.every_thread = every_thread;
    loop.threads = threads;
    // every_thread: one chunk per thread, each run by its own thread (the caller waits for all).
    loop.chunks = every_thread ? threads : std::min<int64_t>(tasks, int64_t{threads} * kChunksPerThread);
    {
      std::lock_guard<std::mutex> lock(sleep_mutex_);  // a worker about to sleep sees the new epoch
      publish(loop);
    }
    if (sleeping_.load(std::memory_order_acquire) > 0) wake_.notify_all();
    if (every_thread) run_chunk(0, loop.chunks, 0);
    else
      for (int64_t chunk; (chunk = claim(loop.epoch)) >= 0;) run_chunk(chunk, loop.chunks, 0);
    Backoff backoff;
    while (done_.load(std::memory_order_acquire) < loop.chunks) backoff.pause();
    return true;
  }

 private:
  void publish(const Word& loop) { state_.store(loop.bits(), std::memory_order_release); }

  // The next chunk of loop `epoch`, or -1 when it has none left or another loop has begun.
  int64_t claim(uint64_t epoch) {
    uint64_t bits = state_.load(std::memory_order_acquire);
    while (true) {
      const Word word = Word::of(bits);
      if (word.epoch != epoch || word.next >= word.chunks) return -1;
      if (state_.compare_exchange_weak(bits, bits + 1, std::memory_order_acq_rel, std::memory_order_acquire)) return word.next;
    }
  }

  void run_chunk(int64_t chunk, int64_t chunks, int thread) {
    const int64_t begin = tasks_ * chunk / chunks, end = tasks_ * (chunk + 1) / chunks;
    if (begin < end) (*body_)(begin, end, thread);
    done_.fetch_add(1, std::memory_order_acq_rel);
  }

  void work(int index, uint64_t seen) {
    while (true) {
      // About a millisecond of waiting for the next loop (pauses, then yields), then sleep.
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
      Backoff backoff;
      for (int polls = 0; Word::of(state_.load(std::memory_order_acquire)).epoch == seen; ++polls) {
        if ((polls & 255) != 255 || std::chrono::steady_clock::now() < give_up) {
          backoff.pause();
          continue;
        }
        std::unique_lock<std::mutex> lock(sleep_mutex_);
        sleeping_.fetch_add(1, std::memory_order_acq_rel);
        wake_.wait(lock, [&] { return Word::of(state_.load(std::memory_order_acquire)).epoch != seen; });
        sleeping_.fetch_sub(1, std::memory_order_acq_rel);
      }
      const Word loop = Word::of(state_.load(std::memory_order_acquire));
      seen = loop.epoch;
      if (stopping_.load(std::memory_order_acquire)) return;
      // A worker beyond the loop's threads takes no part: its index has no scratch in the loop.
      if (index >= loop.threads) continue;
      if (loop.every_thread) run_chunk(index, loop.chunks, index);  // its own: the loop waits for it
      else
        for (int64_t chunk; (chunk = claim(seen)) >= 0;) run_chunk(chunk, loop.chunks, index);
    }
  }

  std::mutex busy_;  // one parallel_for at a time
  std::vector<std::thread> workers_;
  // The loop's body and task count: written before its word is published, read only by a thread
  // running one of its chunks (the loop cannot end meanwhile, so they cannot change).
  const Body* body_ = nullptr;
  int64_t tasks_ = 0;
  std::atomic<uint64_t> state_{0};  // Word::bits()
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
  threads = std::min(threads, Word::kMaxThreads);
  if (threads <= 1 || !pool().try_run(threads, tasks, body, /*every_thread=*/false)) body(0, tasks, 0);
}

void on_every_thread(int threads, const std::function<void(int)>& body) {
  threads = std::min(threads, Word::kMaxThreads);
  const Body each = [&](int64_t, int64_t, int thread) { body(thread); };
  if (threads <= 1 || !pool().try_run(threads, threads, each, /*every_thread=*/true))
    for (int t = 0; t < std::max(threads, 1); ++t) body(t);
}

}  // namespace specd::cpu
