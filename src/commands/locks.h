// What the server knows of the locks it grants natively (LOCK.ACQUIRE, lock_commands.cc).
//
// A lock is nothing but a Redisson lock hash (owner id -> hold count, the lease as the key's
// TTL), so the data itself needs no extra state: it lives in the keyspace and reaches the RDB,
// the AOF and the replicas as an ordinary hash. The waiters queue in the BlockingRegistry,
// oldest first, under the lock's name. What is kept here is only bookkeeping around them:
//   - the names granted natively that may still be held (INFO locks_held, and counting a lease
//     that ran out while held); a name leaves when the server sees its key go, or when a later
//     look finds it gone (the key may be deleted by a script or a DEL, which need not tell us);
//   - the names that had waiters (INFO lock_waiters walks them, pruning those without);
//   - the lease deadlines of locks that have native waiters, so that the server's loop wakes
//     at the deadline and runs the queue's head again (which finds the key expired and takes
//     the lock) instead of waiting for active expiry to find the key, which may take long when
//     many keys have TTLs;
//   - the counters INFO shows.
// The grants bound to a connection (BIND) are listed in that client's session (LockGrant).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace keywarden {

// A grant that ends with the connection that asked for it (LOCK.ACQUIRE … BIND).
struct LockGrant {
  int db = 0;
  std::string name;
  std::string owner;
};

struct LockStats {
  uint64_t grants = 0;              // every grant, immediate, reentrant or handed off
  uint64_t handoffs = 0;            // grants to a client that was queued
  uint64_t expired_while_held = 0;  // natively granted locks whose lease ran out
};

class LockTable {
 public:
  using Name = std::pair<int, std::string>;

  LockStats& stats() { return stats_; }
  const LockStats& stats() const { return stats_; }

  void granted(int db, std::string_view name) { held_.emplace(db, std::string(name)); }
  void released(int db, std::string_view name) { held_.erase(Name(db, std::string(name))); }
  // The key of a lock left the keyspace by expiry (counted when it was a native grant).
  void expired(int db, std::string_view name) {
    if (held_.erase(Name(db, std::string(name))) > 0) ++stats_.expired_while_held;
  }
  void queued(int db, std::string_view name) { contended_.emplace(db, std::string(name)); }

  // A lock with native waiters is held until `deadline_ms`: at that instant its waiters must run
  // again. Stale entries (the lock released or renewed since) only cost a spurious retry.
  void watch_lease(int64_t deadline_ms, int db, std::string_view name) {
    lease_deadlines_.emplace(deadline_ms, db, std::string(name));
  }
  // The earliest watched lease deadline, or 0 when none.
  int64_t earliest_lease_ms() const {
    return lease_deadlines_.empty() ? 0 : std::get<0>(*lease_deadlines_.begin());
  }
  // The locks whose watched lease ended before `now_ms`; they are no longer watched.
  std::vector<Name> take_ended_leases(int64_t now_ms) {
    std::vector<Name> ended;
    while (!lease_deadlines_.empty() && std::get<0>(*lease_deadlines_.begin()) < now_ms) {
      auto first = lease_deadlines_.begin();
      ended.emplace_back(std::get<1>(*first), std::get<2>(*first));
      lease_deadlines_.erase(first);
    }
    return ended;
  }

  // Mutable so that INFO may prune names whose key has gone since.
  std::set<Name>& held() { return held_; }
  std::set<Name>& contended() { return contended_; }
  // Whether the sets have grown enough since the last pruning to be pruned again (amortised
  // O(1) per grant, whatever deleted the keys). The caller prunes, then calls pruned().
  bool prune_due() const { return held_.size() + contended_.size() >= prune_at_; }
  void pruned() {
    prune_at_ = std::max<size_t>(kMinPruneAt, 2 * (held_.size() + contended_.size()));
  }

 private:
  static constexpr size_t kMinPruneAt = 1024;
  size_t prune_at_ = kMinPruneAt;
  std::set<Name> held_;
  std::set<Name> contended_;
  std::set<std::tuple<int64_t, int, std::string>> lease_deadlines_;
  LockStats stats_;
};

class Dispatcher;
struct ClientSession;

// Releases every grant bound to `session` (LOCK.ACQUIRE … BIND) that its owner still holds, as
// LOCK.RELEASE name owner ALL run in the session, and flushes the effects (DEL, HDEL) to the
// AOF and the replicas. The freed keys are signalled: the caller serves the waiters after.
// For a connection that closes.
void release_bound_locks(Dispatcher& dispatcher, ClientSession& session, int64_t now_ms);

}  // namespace keywarden
