#include "server/io_threads.h"

#include <pthread.h>

#include <string>

namespace keywarden {
namespace {
// Rounds of busy-waiting before sleeping in the kernel: a few microseconds, about what a
// futex wake-up costs, so a job that ends quickly does not pay two context switches, and an
// idle worker does not burn a core another thread (or the client) needs.
constexpr int kSpinRounds = 1000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

IoThreads::IoThreads(int threads) : threads_(threads < 1 ? 1 : threads) {
  for (int index = 1; index < threads_; ++index) {
    workers_.emplace_back([this, index] { worker(index); });
  }
}

IoThreads::~IoThreads() {
  stopping_ = true;
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& thread : workers_) thread.join();
}

void IoThreads::run_share(int index) {
  for (size_t item = static_cast<size_t>(index); item < count_; item += threads_) {
    job_(context_, item);
  }
}

void IoThreads::run(size_t count, Job job, void* context) {
  if (workers_.empty() || count <= 1) {
    for (size_t item = 0; item < count; ++item) job(context, item);
    return;
  }
  job_ = job;
  context_ = context;
  count_ = count;
  busy_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  run_share(0);
  int left = busy_.load(std::memory_order_acquire);
  for (int round = 0; left != 0 && round < kSpinRounds; ++round) {
    cpu_relax();
    left = busy_.load(std::memory_order_acquire);
  }
  while (left != 0) {
    busy_.wait(left, std::memory_order_acquire);
    left = busy_.load(std::memory_order_acquire);
  }
}

void IoThreads::worker(int index) {
  // No ThreadMemoryAccount: a job allocates and frees nothing (a plain transport's failure
  // records its errno, not its text), so used_memory needs nothing from these threads.
  // Named as Redis names its I/O threads (top -H, /proc/<pid>/task/*/comm).
  pthread_setname_np(pthread_self(), ("io_thd_" + std::to_string(index)).c_str());
  uint32_t seen = 0;
  for (;;) {
    uint32_t current = generation_.load(std::memory_order_acquire);
    for (int round = 0; current == seen && round < kSpinRounds; ++round) {
      cpu_relax();
      current = generation_.load(std::memory_order_acquire);
    }
    while (current == seen) {
      generation_.wait(seen, std::memory_order_acquire);
      current = generation_.load(std::memory_order_acquire);
    }
    seen = current;
    if (stopping_) return;
    run_share(index);
    if (busy_.fetch_sub(1, std::memory_order_acq_rel) == 1) busy_.notify_one();
  }
}

}  // namespace keywarden
