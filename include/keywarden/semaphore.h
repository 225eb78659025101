// keywarden::Semaphore and keywarden::PermitExpirableSemaphore: counting semaphores with
// Redisson's key layout (RSemaphore, RPermitExpirableSemaphore), so C++ and Java clients can
// share one.
//
// Semaphore: the string `name` holds the number of available permits; a release publishes the
// new count on `redisson_sc:{name}` (`redisson_sc:name` when the name has a `{`). Permits have
// no owner: any handle may release, and a holder that crashes keeps its permits forever (use
// PermitExpirableSemaphore when that matters).
//
// PermitExpirableSemaphore: `name` holds the available permits and the sorted set
// `{name}:timeout` (`name:timeout` when the name has a `{`) the permits taken: member = the
// permit id's 16 bytes (the id handed out is their 32 lowercase hex digits), score = the
// lease's end in Unix ms, or 922337203685477 for a permit without a lease. Every operation
// first returns expired permits to the pool and publishes the new count on the same
// `redisson_sc:` channel.
// Deliberate difference from Redisson: lease ends are computed from the server's TIME, not
// from the client's clock, so a client with a wrong clock cannot hand out permits that have
// already expired or never will (a Java client sharing the semaphore still writes its own
// clock's time; both are Unix ms).
//
// Waiters never poll: they sleep until a message on the channel (a release, new permits) or,
// for expirable permits, until the earliest lease end the server reported, so a crashed
// holder's permit reaches a waiter when its lease ends without anybody releasing it. A waiter
// that needs more permits than a message offers tries once per message and sleeps again. A
// PermitExpirableSemaphore acquire whose reply times out gives back the permit it may have
// taken before throwing.
//
// Counts below zero throw std::invalid_argument (Redisson's IllegalArgumentException); zero
// permits are acquired and released at once without a round trip, as in Redisson. Handles are
// cheap to copy and must not outlive their Client.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "keywarden/errors.h"

namespace keywarden {

class Client;

namespace detail {
class LockService;
}  // namespace detail

class Semaphore {
 public:
  using Milliseconds = std::chrono::milliseconds;

  // Sets the number of permits when the semaphore does not exist yet; false when it does.
  bool try_set_permits(int64_t permits);
  // Adds to the available permits (a negative count takes away), creating the semaphore.
  void add_permits(int64_t permits);

  // Waits as long as it takes for `permits` permits.
  void acquire(int64_t permits = 1);
  // One attempt, no waiting.
  bool try_acquire(int64_t permits = 1);
  // Waits up to `wait`.
  bool try_acquire(int64_t permits, Milliseconds wait);
  bool try_acquire(Milliseconds wait) { return try_acquire(1, wait); }

  // Returns permits (whoever took them) and wakes waiters.
  void release(int64_t permits = 1);

  int64_t available_permits();
  // Takes every available permit; returns how many that was.
  int64_t drain_permits();

  const std::string& name() const { return name_; }
  const std::string& channel() const { return channel_; }

 private:
  friend class Client;
  Semaphore(std::shared_ptr<detail::LockService> service, std::string name);

  std::shared_ptr<detail::LockService> service_;
  std::string name_;
  std::string channel_;
};

// release() of a permit id the semaphore does not know: never handed out, already released,
// or its lease ended (the permit went back to the pool).
class UnknownPermitError : public Error {
 public:
  using Error::Error;
};

class PermitExpirableSemaphore {
 public:
  using Milliseconds = std::chrono::milliseconds;

  bool try_set_permits(int64_t permits);
  void add_permits(int64_t permits);

  // Waits as long as it takes; returns the permit's id. Without a lease the permit is held
  // until released; with one, it returns to the pool when the lease ends.
  std::string acquire();
  std::string acquire(Milliseconds lease);
  // nullopt when no permit was free (within `wait`).
  std::optional<std::string> try_acquire();
  std::optional<std::string> try_acquire(Milliseconds wait);
  std::optional<std::string> try_acquire(Milliseconds wait, Milliseconds lease);

  // Returns the permit and wakes waiters; throws UnknownPermitError when the id is not held
  // (never handed out, released already, or expired).
  void release(const std::string& id);
  // As release(), false instead of throwing.
  bool try_release(const std::string& id);

  int64_t available_permits();
  // Gives a held permit a new lease counted from now; false when the id is not held.
  bool update_lease_time(const std::string& id, Milliseconds lease);

  const std::string& name() const { return name_; }
  const std::string& timeout_key() const { return timeout_key_; }
  const std::string& channel() const { return channel_; }

 private:
  friend class Client;
  PermitExpirableSemaphore(std::shared_ptr<detail::LockService> service, std::string name);
  // Waits up to `wait` (nullopt: no limit) with `lease` (nullopt: none).
  std::optional<std::string> acquire_for(std::optional<Milliseconds> wait,
                                         std::optional<Milliseconds> lease);

  std::shared_ptr<detail::LockService> service_;
  std::string name_;
  std::string timeout_key_;
  std::string channel_;
};

}  // namespace keywarden
