// The kernels' worker pool: every task runs exactly once, on the thread index it is given, across
// many back-to-back loops (the decoding pattern), changing thread counts, and after the workers
// have gone to sleep, and with several threads calling it at once. Torch-free, so that
// tests/sanitizers/thread builds it under ThreadSanitizer.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "model/cpu/spin_pool.h"

TEST_CASE("parallel_for runs each task once, in contiguous ranges, on every thread count") {
  for (int threads : {1, 2, 3, 4}) {
    for (int64_t tasks : {1, 2, 3, 7, 64, 1000}) {
      CAPTURE(threads, tasks);
      std::vector<std::atomic<int>> runs(static_cast<size_t>(tasks));
      std::atomic<int> max_thread{0};
      specd::cpu::parallel_for(threads, tasks, [&](int64_t begin, int64_t end, int thread) {
        for (int64_t t = begin; t < end; ++t) runs[t].fetch_add(1);
        int seen = max_thread.load();
        while (thread > seen && !max_thread.compare_exchange_weak(seen, thread)) {
        }
      });
      for (int64_t t = 0; t < tasks; ++t) CHECK(runs[t].load() == 1);
      CHECK(max_thread.load() < std::min<int64_t>(threads, tasks));
    }
  }
}

TEST_CASE("parallel_for survives many short loops and wakes sleeping workers") {
  std::atomic<int64_t> total{0};
  for (int i = 0; i < 20000; ++i)
    specd::cpu::parallel_for(2, 8, [&](int64_t begin, int64_t end, int) { total.fetch_add(end - begin); });
  CHECK(total.load() == 20000 * 8);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // long enough for the workers to sleep
  for (int i = 0; i < 100; ++i)
    specd::cpu::parallel_for(2, 8, [&](int64_t begin, int64_t end, int) { total.fetch_add(end - begin); });
  CHECK(total.load() == 20100 * 8);
}

TEST_CASE("parallel_for called from several threads at once runs every task once") {
  // One caller gets the pool; the others find it busy and run their loops themselves. Each
  // caller's tasks must still run exactly once, whoever runs them.
  constexpr int kCallers = 3, kLoops = 300;
  constexpr int64_t kTasks = 16;
  std::vector<std::vector<int>> counts(kCallers, std::vector<int>(kTasks, 0));
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&counts, c] {
      for (int i = 0; i < kLoops; ++i)
        specd::cpu::parallel_for(3, kTasks, [&](int64_t begin, int64_t end, int) {
          for (int64_t t = begin; t < end; ++t) ++counts[c][t];  // plain ints: ranges are disjoint
        });
    });
  for (auto& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c)
    for (int64_t t = 0; t < kTasks; ++t) CHECK(counts[c][t] == kLoops);
}

TEST_CASE("on_every_thread runs each index once, each on its own thread, all at the same time") {
  for (int threads : {1, 2, 3}) {
    CAPTURE(threads);
    std::vector<std::thread::id> ids(static_cast<size_t>(threads));
    std::atomic<int> arrived{0};
    std::atomic<bool> together{true};
    specd::cpu::on_every_thread(threads, [&](int thread) {
      ids[static_cast<size_t>(thread)] = std::this_thread::get_id();
      arrived.fetch_add(1);
      // A barrier: every index must be running at once (a serial run would wait here for good).
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (arrived.load() < threads)
        if (std::chrono::steady_clock::now() > give_up) {
          together = false;
          break;
        }
    });
    CHECK(together.load());
    for (int a = 0; a < threads; ++a)
      for (int b = a + 1; b < threads; ++b) CHECK(ids[static_cast<size_t>(a)] != ids[static_cast<size_t>(b)]);
  }
}

TEST_CASE("parallel_for gives a thread several chunks when another is slow, each task still once") {
  // The chunk holding task 0 is slow: the other thread claims the chunks left as they come, so
  // it runs several of them; no task runs twice or is lost.
  std::vector<std::atomic<int>> runs(64);
  std::atomic<int> slow_thread{-1};
  std::vector<std::atomic<int>> calls(2);
  specd::cpu::parallel_for(2, 64, [&](int64_t begin, int64_t end, int thread) {
    calls[static_cast<size_t>(thread)].fetch_add(1);
    if (begin == 0) {
      slow_thread = thread;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (int64_t t = begin; t < end; ++t) runs[static_cast<size_t>(t)].fetch_add(1);
  });
  for (auto& r : runs) CHECK(r.load() == 1);
  REQUIRE(slow_thread.load() >= 0);
  CHECK(calls[static_cast<size_t>(1 - slow_thread.load())].load() >= 2);
}

TEST_CASE("parallel_for and on_every_thread back to back, with thread and chunk counts changing every loop, run each task once") {
  // The race this catches: a worker that read one loop's chunk count while the caller had already
  // written the next loop's claimed a chunk of a finished loop and ran it with the next loop's
  // body (a task run twice, or a body used after it was gone). Thousands of short loops of every
  // shape give the interleavings a chance; each checks its own tasks.
  // ThreadSanitizer sees the race itself on far fewer loops, each many times slower there.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SPECD_UNDER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(SPECD_UNDER_TSAN)
  constexpr int kLoops = 20000;
#else
  constexpr int kLoops = 300000;
#endif
  int64_t bad = 0;
  for (int it = 0; it < kLoops; ++it) {
    const int threads = 1 + it % 4;
    const int64_t tasks = 1 + (int64_t{it} * 7919) % 37;
    if (it % 97 == 0) {
      std::vector<std::atomic<int>> ran(3);
      specd::cpu::on_every_thread(1 + it % 3, [&](int thread) { ran[static_cast<size_t>(thread)].fetch_add(1); });
      for (int t = 0; t < 1 + it % 3; ++t) bad += ran[static_cast<size_t>(t)].load() != 1;
      continue;
    }
    std::vector<std::atomic<int>> runs(static_cast<size_t>(tasks));
    std::atomic<int64_t> out_of_range{0};
    specd::cpu::parallel_for(threads, tasks, [&](int64_t begin, int64_t end, int thread) {
      if (begin < 0 || end > tasks || begin >= end || thread < 0 || thread >= threads) out_of_range.fetch_add(1);
      else
        for (int64_t t = begin; t < end; ++t) runs[static_cast<size_t>(t)].fetch_add(1);
    });
    bad += out_of_range.load();
    for (auto& r : runs) bad += r.load() != 1;
  }
  CHECK(bad == 0);
}
