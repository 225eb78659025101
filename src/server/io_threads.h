// The I/O threads (io-threads N): N-1 worker threads that, with the command thread, split a
// list of connections and do only their socket syscalls — the write of a reply buffer, or
// with io-threads-do-reads the read into a query buffer. They never execute a command and
// never touch shared data: the command thread prepares everything a job needs, hands the
// list over, takes its own share, waits for all workers, and then does every piece of
// bookkeeping itself. While a job runs the command thread runs nothing else, so each
// connection is touched by exactly one thread at a time. A job must not allocate or free:
// the workers hold no memory::ThreadMemoryAccount, so used_memory would not see it.
//
// Hand-over is a generation counter the workers wait on (spin briefly, then sleep in the
// kernel via std::atomic::wait, which is a futex for 32-bit atomics), and a count of workers
// still busy that the command thread waits on the same way. The release/acquire pairs on those
// two atomics order the preparation before the workers' syscalls and the workers' results
// before the bookkeeping.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace keywarden {

class IoThreads {
 public:
  // One job: called with each index of the list exactly once, from some thread.
  using Job = void (*)(void* context, size_t index);

  // `threads` counts the command thread: threads - 1 workers start (none for 1).
  explicit IoThreads(int threads);
  ~IoThreads();
  IoThreads(const IoThreads&) = delete;
  IoThreads& operator=(const IoThreads&) = delete;

  int threads() const { return threads_; }
  // Runs job(context, i) for every i < count: item i goes to thread i % threads (0 is the
  // caller). Returns once every item is done.
  void run(size_t count, Job job, void* context);

  template <typename Function>
  void for_each(size_t count, Function& function) {
    run(count, [](void* context, size_t index) { (*static_cast<Function*>(context))(index); },
        &function);
  }

 private:
  void worker(int index);
  void run_share(int index);

  const int threads_;
  std::vector<std::thread> workers_;
  std::atomic<uint32_t> generation_{0};
  std::atomic<int> busy_{0};
  bool stopping_ = false;  // written before a generation bump, read after it
  // The current job: written by the command thread before the bump, read by workers after.
  Job job_ = nullptr;
  void* context_ = nullptr;
  size_t count_ = 0;
};

}  // namespace keywarden
