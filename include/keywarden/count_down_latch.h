// keywarden::CountDownLatch: a distributed latch with Redisson's layout (RCountDownLatch), so
// C++ and Java clients can share one. The string `name` holds the count; count_down() deletes
// the key when the count reaches zero and then publishes `0` on
// `redisson_countdownlatch__channel__{name}` (braces always added, as Redisson does);
// try_set_count() and delete_latch() publish `1` there. A missing key reads as count 0, so
// await() on a latch never set (or deleted) returns at once.
//
// await() never polls: it reads the count, then sleeps until any message on the channel and
// reads again. Unlike Redisson's own waiters, ours re-read the count on a `1` too, so a latch
// deleted under them opens them (its count reads 0). Handles are cheap to copy and must not
// outlive their Client.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace keywarden {

class Client;

namespace detail {
class LockService;
}  // namespace detail

class CountDownLatch {
 public:
  using Milliseconds = std::chrono::milliseconds;

  // Sets the count when the latch does not exist (count 0); false when it does. A negative
  // count throws std::invalid_argument.
  bool try_set_count(int64_t count);
  // One step down; the step to zero deletes the latch and opens every waiter.
  void count_down();
  int64_t get_count();

  // Waits until the count is zero.
  void await();
  // Waits up to `timeout`; false when the count was still above zero then.
  bool await(Milliseconds timeout);

  // Deletes the latch (its count reads 0 afterwards); true when it existed.
  bool delete_latch();

  const std::string& name() const { return name_; }
  const std::string& channel() const { return channel_; }

 private:
  friend class Client;
  CountDownLatch(std::shared_ptr<detail::LockService> service, std::string name);

  std::shared_ptr<detail::LockService> service_;
  std::string name_;
  std::string channel_;
};

}  // namespace keywarden
