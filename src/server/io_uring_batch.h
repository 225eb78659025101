// The io_uring batch engine (io-uring yes): the socket syscalls of many connections made in
// one system call. Where the I/O threads (server/io_threads.h) split a list of reads or sends
// over threads, this engine queues one recv or send per connection in an io_uring submission
// queue and enters the kernel once for the whole list, then hands each result back to the
// command thread. It runs only on the command thread (the ring may be set up for a single
// issuer) and never waits for a socket: the sockets are non-blocking, so an operation that
// cannot proceed completes at once with -EAGAIN, exactly as the plain call would have.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

struct io_uring;

namespace keywarden {

class UringBatch {
 public:
  enum class Kind : uint8_t { kRecv, kSend };
  struct Operation {
    Kind kind = Kind::kRecv;
    int fd = -1;
    char* data = nullptr;  // where a recv stores, what a send sends
    size_t size = 0;
  };
  // Fills `operation` for item `index` of the list.
  using Prepare = void (*)(void* context, size_t index, Operation& operation);
  // The result of item `index`: a byte count, or -errno (as io_uring reports it).
  using Complete = void (*)(void* context, size_t index, int result);

  // A ring for batches of up to `entries` operations per system call (bigger lists take
  // several). `flags` are IORING_SETUP_* bits (by default kPreferredFlags); those the kernel
  // refuses are dropped one by one, the highest bit (the newest flag) first. Null (and `*reason`)
  // when no ring can be made at all.
  static std::unique_ptr<UringBatch> create(unsigned entries, std::string* reason,
                                            std::optional<unsigned> flags = {});
  // A single issuer (the command thread) whose completions run only when it asks for them,
  // and a submission that goes on past an operation the kernel refuses (COOP_TASKRUN,
  // SUBMIT_ALL: Linux 5.18/5.19; SINGLE_ISSUER 6.0; DEFER_TASKRUN 6.1). Every operation here
  // completes inside the submitting call, so the task-run flags change little (measured in
  // docs/benchmarks.md).
  static const unsigned kPreferredFlags;
  ~UringBatch();
  UringBatch(const UringBatch&) = delete;
  UringBatch& operator=(const UringBatch&) = delete;

  // The IORING_SETUP_* flags the ring was made with.
  unsigned setup_flags() const { return setup_flags_; }
  // Runs the `count` operations prepare() describes and reports each to complete() before
  // returning.
  void run(size_t count, Prepare prepare, Complete complete, void* context);

  template <typename PrepareFunction, typename CompleteFunction>
  void for_each(size_t count, PrepareFunction& prepare, CompleteFunction& complete) {
    struct Both {
      PrepareFunction& prepare;
      CompleteFunction& complete;
    } both{prepare, complete};
    run(
        count,
        [](void* context, size_t index, Operation& operation) {
          static_cast<Both*>(context)->prepare(index, operation);
        },
        [](void* context, size_t index, int result) {
          static_cast<Both*>(context)->complete(index, result);
        },
        &both);
  }

 private:
  UringBatch() = default;
  // Submits the `wanted` queued operations (and waits for their completions).
  void submit_all(unsigned wanted);
  [[noreturn]] static void fatal(const char* what, int result);

  std::unique_ptr<io_uring> ring_;
  unsigned entries_ = 0;
  unsigned setup_flags_ = 0;
};

// Text for the setup flags a ring was made with ("single-issuer defer-taskrun", "none").
std::string describe_uring_flags(unsigned flags);

}  // namespace keywarden
