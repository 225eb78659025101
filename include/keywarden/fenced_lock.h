// keywarden::FencedLock: the reentrant Lock plus a fencing token. The lock hash `name` and its
// channel are Lock's; every new acquisition of the name takes the next value of a counter in
// the same script that grants the lock. So the token strictly increases with every new holder,
// across handles, clients and processes, and also across leases that ran out: a holder that
// paused past its lease has a smaller token than whoever took the lock after it, and a
// resource that remembers the largest token it has seen can refuse the stale holder's writes
// (the check is the resource's job; see docs/locks.md).
//
// The counter is shared by every name in the name's cluster slot (`keywarden:fence:{<tag>}`;
// the hold's token is kept in the lock hash), so distinct names leave at most 16384 counters
// behind, where Redisson's RFencedLock leaves one `redisson_lock_token:{name}` per name ever
// locked. ClientOptions::fencing_counter_per_name selects Redisson's layout, for names that
// Redisson clients lock too. Counters have no TTL: they must outlive every hold for tokens
// never to go backwards.
//
// Differences from Redisson, on purpose: a reentrant acquisition returns the hold's current
// token instead of incrementing the counter (Redisson increments it on re-entry too, so the
// outer hold's token becomes stale against the resource while still held), and
// lock_and_get_token(lease) honours its lease. Release, renewal and force_unlock are the
// reentrant lock's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "keywarden/lock.h"

namespace keywarden {

class FencedLock : public Lock {
 public:
  // Wait as long as it takes; the token of the hold (the current one when re-entering).
  int64_t lock_and_get_token();
  int64_t lock_and_get_token(Milliseconds lease);
  // nullopt when the lock was not acquired (at once, or within `wait`).
  std::optional<int64_t> try_lock_and_get_token();
  std::optional<int64_t> try_lock_and_get_token(Milliseconds wait);
  std::optional<int64_t> try_lock_and_get_token(Milliseconds wait, Milliseconds lease);

  // The largest token handed out so far from this name's counter (by this name, or by another
  // name sharing the counter): the name's next acquisition gets a larger one. 0 before any.
  int64_t token() const;

 private:
  friend class Client;
  FencedLock(std::shared_ptr<detail::LockService> service, std::string name);
  // The token of this handle's current hold (set by the acquire script).
  int64_t held_token() const;
};

}  // namespace keywarden
