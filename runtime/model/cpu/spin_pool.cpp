#include "model/cpu/spin_pool.h"

#include <atomic>
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

class SpinPool {
 public:
  ~SpinPool() {
    {
      std::lock_guard<std::mutex> lock(sleep_mutex_);
      stopping_.store(true, std::memory_order_release);
      epoch_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }

  bool try_run(int threads, int64_t tasks, const std::function<void(int64_t, int64_t, int)>& body) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    while (static_cast<int>(workers_.size()) < threads - 1) {
      const int index = static_cast<int>(workers_.size()) + 1;
      // The worker starts from the current epoch: read here, not in the new thread, which might
      // only run after this loop's epoch is published and then wait for the next one.
      const uint64_t seen = epoch_.load(std::memory_order_acquire);
      workers_.emplace_back([this, index, seen] { work(index, seen); });
    }
    body_ = &body;
    tasks_ = tasks;
    threads_ = threads;
    // Every worker answers every loop, needed or not, so none can lag into the next one.
    remaining_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(sleep_mutex_);  // a worker about to sleep sees the new epoch
      epoch_.fetch_add(1, std::memory_order_release);
    }
    if (sleeping_.load(std::memory_order_acquire) > 0) wake_.notify_all();
    run_share(0);
    while (remaining_.load(std::memory_order_acquire) > 0) cpu_relax();
    return true;
  }

 private:
  void run_share(int index) {
    const int64_t begin = tasks_ * index / threads_, end = tasks_ * (index + 1) / threads_;
    if (begin < end) (*body_)(begin, end, index);
  }

  void work(int index, uint64_t seen) {
    while (true) {
      // ~1 ms of spinning (pause is tens of cycles), then sleep until the next loop.
      for (int spins = 0; epoch_.load(std::memory_order_acquire) == seen; ++spins) {
        if (spins < (1 << 15)) {
          cpu_relax();
          continue;
        }
        std::unique_lock<std::mutex> lock(sleep_mutex_);
        sleeping_.fetch_add(1, std::memory_order_acq_rel);
        wake_.wait(lock, [&] { return epoch_.load(std::memory_order_acquire) != seen; });
        sleeping_.fetch_sub(1, std::memory_order_acq_rel);
      }
      seen = epoch_.load(std::memory_order_acquire);
      if (stopping_.load(std::memory_order_acquire)) return;
      if (index < threads_) run_share(index);
      remaining_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  std::mutex busy_;  // one parallel_for at a time
  std::vector<std::thread> workers_;
  const std::function<void(int64_t, int64_t, int)>* body_ = nullptr;
  int64_t tasks_ = 0;
  int threads_ = 1;
  std::atomic<uint64_t> epoch_{0};
  std::atomic<int> remaining_{0};
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

void parallel_for(int threads, int64_t tasks, const std::function<void(int64_t, int64_t, int)>& body) {
  if (tasks <= 0) return;
  if (threads > tasks) threads = static_cast<int>(tasks);
  if (threads <= 1 || !pool().try_run(threads, tasks, body)) body(0, tasks, 0);
}

}  // namespace specd::cpu
