// keywarden::FairLock: a reentrant lock granted in arrival order, with Redisson's
// RedissonFairLock layout so C++ and Java clients can share one: the lock hash `name` as Lock,
// the queue list `redisson_lock_queue:{name}` of waiting owners, the sorted set
// `redisson_lock_timeout:{name}` (owner -> the server time in ms until which its place is
// kept), and one channel per waiter, `redisson_lock__channel:{name}:<owner>`. A release (or
// force_unlock, or the head giving up while the lock is free) publishes only on the channel of
// the waiter at the head of the queue: exactly the one whose turn it is wakes, no herd. The
// lock is free for a newcomer only when nobody is queued; otherwise it joins the tail.
//
// Queue timeout and heartbeat. A waiter's place is kept until `now + queue_timeout` (5 s by
// default, Redisson's documented thread wait time), `now` being the server's TIME read inside
// every script, never a client clock. Every attempt of a waiter refreshes its own deadline,
// and the bound an attempt returns is at most a third of the queue timeout, so a live waiter
// re-runs its attempt (one script call) at least three times per queue timeout however long
// the holder keeps the lock: a bounded heartbeat, not a polling loop; hand-offs still come
// by message. A waiter that dies stops refreshing and every script drops it once its deadline
// passes (pruned anywhere in the queue, not only at the head), so the next one gets the lock
// at most a queue timeout later. A waiter that gives up (try_lock_for timed out, or an error
// while waiting) leaves the queue at once. A waiter whose process stalls for longer than its
// queue timeout is dropped too; its next attempt joins again at the tail.
//
// Differences from Redisson, on purpose: deadlines come from the server's TIME and are
// refreshed by the waiter itself (Redisson's are client wall-clock sums over the queue,
// shifted on every grant), expired waiters are pruned anywhere in the queue, and a waiter
// giving up while it is at the head of a free lock passes the turn on. A Java waiter sharing
// the queue subtracts its own wait time from every deadline when it is granted the lock, which
// can make a C++ waiter look expired: that waiter then rejoins at the tail on its next
// heartbeat (order between mixed clients is best effort; exclusion is never affected).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "keywarden/lock.h"

namespace keywarden {

class FairLock : public Lock {
 public:
  static constexpr Milliseconds kDefaultQueueTimeout{5000};

  // How long the queue keeps this handle's place without hearing from it; set it while the
  // handle is not waiting (not concurrently with lock()). Shorter: a dead waiter is skipped
  // sooner, at the cost of more frequent refreshes (three per timeout) while queued. Throws
  // std::invalid_argument unless positive.
  void set_queue_timeout(Milliseconds timeout);
  Milliseconds queue_timeout() const { return queue_timeout_; }

 private:
  friend class Client;
  FairLock(std::shared_ptr<detail::LockService> service, std::string name);

  Milliseconds queue_timeout_ = kDefaultQueueTimeout;
};

}  // namespace keywarden
