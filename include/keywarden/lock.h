// keywarden::Lock: a reentrant distributed lock with Redisson's key layout, so C++ and Java
// clients can share one: a hash `name` whose field `<client id>:<owner id>` holds the hold
// count, a PEXPIRE lease, and a `0` published on `redisson_lock__channel:{name}` on release.
// Ownership belongs to the handle, not to a thread. Waiters sleep until a release message or
// the holder's lease end, never polling. Without an explicit lease the client's watchdog
// renews the lease; a lease that is lost (renewal finds another owner, renewal fails until the
// local deadline, the lease runs out, force_unlock) is reported through on_lost().
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "keywarden/errors.h"

namespace keywarden {

// unlock() of a lock this handle does not hold (never held, already released, or lost).
class NotOwnerError : public Error {
 public:
  using Error::Error;
};

// Fewer replicas than a handle requires (Lock::require_replicas) acknowledged a grant or a
// release within the timeout. From an acquiring call the grant has already been undone; from
// unlock() (through on_error) the release took place on the primary but may not survive a
// failover.
class NotDurableError : public Error {
 public:
  NotDurableError(const std::string& what, int64_t acknowledged, int required)
      : Error(what), acknowledged_(acknowledged), required_(required) {}
  int64_t acknowledged() const { return acknowledged_; }
  int required() const { return required_; }

 private:
  int64_t acknowledged_;
  int required_;
};

enum class LockLostReason {
  kRenewFailed,     // the watchdog could not reach the server before the local deadline
  kNotOwner,        // a renewal found the lock held by someone else, or gone
  kDeadlinePassed,  // an explicit lease ran out while the lock was still held
  kForceUnlocked,   // force_unlock() through a handle of the same client
};

const char* to_string(LockLostReason reason);

namespace detail {
class LockService;
class LockProtocol;
struct LockState;
}  // namespace detail

// The timed half of the standard TimedLockable requirements, shared by every lock kind and
// written in terms of the kind's acquire(wait, lease) (nullopt wait: no limit, nullopt lease:
// watchdog-kept), which the kind makes reachable by befriending this class.
template <typename Derived>
class TimedLockable {
 public:
  using Milliseconds = std::chrono::milliseconds;

  template <typename Rep, typename Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    return self().acquire(std::chrono::ceil<Milliseconds>(wait), std::nullopt);
  }
  template <typename Clock, typename Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& until) {
    return try_lock_for(until - Clock::now());
  }
  bool try_lock(Milliseconds wait, Milliseconds lease) { return self().acquire(wait, lease); }

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
};

class Lock : public TimedLockable<Lock> {
 public:
  using Milliseconds = std::chrono::milliseconds;
  using TimedLockable::try_lock;

  Lock(Lock&& other) noexcept;
  Lock& operator=(Lock&& other) noexcept;
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;
  // Releases a lock this handle still holds (all holds); never throws: errors go to the
  // on_error callback.
  ~Lock();

  // Waits as long as it takes. Without a lease the watchdog keeps the lock; with one, the
  // lock expires after it unless unlocked first (a reentrant hold resets the lease).
  void lock();
  void lock(Milliseconds lease);
  // One attempt, no waiting.
  bool try_lock();

  // Drops one hold; the last one deletes the hash and wakes waiters. Throws NotOwnerError when
  // this handle holds nothing. It never throws for a hold it had, so std::lock_guard is safe:
  // a hold found lost (here or earlier) is reported through on_lost (through on_error when no
  // on_lost is set), and a failure to reach the server goes to on_error while the handle stops
  // renewing, so the server lets the lease run out.
  void unlock();
  // Deletes the lock whoever holds it; true when it was held. Handles of this client holding
  // it are told through on_lost(kForceUnlocked).
  bool force_unlock();

  bool is_locked() const;            // held by anyone (EXISTS)
  bool is_held() const;              // held by this handle, per the server
  int64_t hold_count() const;        // this handle's holds, per the server
  Milliseconds remaining_lease() const;  // PTTL: -2 when not locked, -1 without a lease

  // Local view, no round trip: held and the lease not yet over, counting from when the
  // acquire or last successful renew was sent (so the server's expiry is never earlier).
  bool valid() const;
  std::chrono::steady_clock::duration remaining() const;

  // Durable grants: every grant, renewal and release of this handle is followed by
  // `WAIT replicas timeout` on the same connection, and counts only when at least `replicas`
  // replicas acknowledged it. A grant short of that is released and the acquiring call throws
  // NotDurableError; an unacknowledged renewal counts as a failed one (the local deadline does
  // not move, and the hold is lost when it passes); a release short of it goes to on_error.
  // 0 turns it off. The default comes from ClientOptions::lock_durable_replicas.
  void require_replicas(int replicas, Milliseconds timeout);

  // Called (on the client's watchdog thread) when this handle loses a lock it held.
  void on_lost(std::function<void(LockLostReason)> callback);
  // Receives what the destructor and unlock() do not throw (default: a line on stderr).
  void on_error(std::function<void(const std::exception&)> callback);

  const std::string& name() const;
  // The hash field this handle owns: "<client id>:<owner id>".
  const std::string& owner() const;

 protected:
  friend class Client;
  friend class ReadWriteLock;
  friend class TimedLockable<Lock>;
  // An empty `owner` gets a fresh "<client id>:<owner id>"; handles given the same owner
  // hold as one (a read-write lock's read and write handles).
  Lock(std::shared_ptr<detail::LockService> service, std::string name,
       const detail::LockProtocol& protocol, std::string owner = {});
  // Waits up to `wait` (nullopt: no limit); nullopt lease: watchdog-kept.
  bool acquire(std::optional<Milliseconds> wait, std::optional<Milliseconds> lease);

  std::shared_ptr<detail::LockService> service_;
  std::shared_ptr<detail::LockState> state_;

 private:
  // nullopt when acquired, else how long to sleep at most before trying again.
  std::optional<int64_t> try_once(std::optional<Milliseconds> lease);
  // acquire() with keywarden-server's LOCK.ACQUIRE, waiting in the server's queue; nullopt when
  // the server turned out not to have it (the caller falls back to the scripts).
  std::optional<bool> acquire_native(std::optional<Milliseconds> wait,
                                     std::optional<Milliseconds> lease);
  void release_on_destroy() noexcept;
};

}  // namespace keywarden
