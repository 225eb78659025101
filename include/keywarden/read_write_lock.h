// keywarden::ReadWriteLock: many readers or one writer, Redisson's RReadWriteLock layout so C++
// and Java clients can share one. The hash `name` has a field `mode` (`read` | `write`); a
// reader's field `<owner>` holds its hold count, and each read hold n has a string key
// `{name}:<owner>:rwlock_timeout:<n>` with its own lease, so the holds of a reader that died
// run out on their own while other readers keep the lock; the hash lives as long as its
// longest hold. The writer's field is `<owner>:write`. Releases publish on
// `redisson_rwlock:{name}` (`0` from a reader, `1` from the writer).
//
// The read and write handles of one ReadWriteLock hold under one owner, as Redisson uses one
// thread id for both: so the writer may take read locks (a downgrade: write, read, then
// unlock the write and keep the read). Both handles are ordinary Locks: reentrant, watchdog-
// or lease-kept, on_lost/valid(), std::lock_guard, release in the destructor. Another party
// (thread, process) that must exclude this one takes its own get_read_write_lock(name).
//
// Where we deliberately differ from Redisson:
// - An upgrade (this owner holds read locks and asks for the write lock) throws
//   LockUpgradeError at once; Redisson waits for itself forever (issue #4796).
// - Each acquire and release re-arms the owner's remaining read holds to last at least the
//   lease, as a reentrant Lock's holds are (Redisson leaves each hold its own), so the
//   handle's local deadline is never later than the server's. The hash's PEXPIRE never drops below
//   a remaining hold's lease (Redisson's watchdog and write reentry may shorten or stretch it).
// - The watchdog renews only this client's own read holds' timeout keys (as Redisson's
//   ReadLockTask does now), and a renewal that finds them gone reports the loss and removes
//   the stale reader instead of re-arming the hash.
// - Releasing a hold that ran out reports a loss (on_lost, or on_error) rather than passing
//   as a successful unlock; a release that finds reader fields whose holds all ran out
//   removes them, so a crashed reader never outlives the lock's last live reader.
// - A writer's release that leaves its own read holds (downgrade) also publishes, so waiting
//   readers come in at once instead of at their wait bound.
// Like Redisson, readers are not fair: a steady stream of readers can keep a writer waiting.
#pragma once

#include <memory>
#include <string>

#include "keywarden/errors.h"
#include "keywarden/lock.h"

namespace keywarden {

namespace detail {
class LockService;
}  // namespace detail

// write_lock() asked by an owner that holds read locks and not the write lock: waiting could
// only deadlock (the writer would wait for its own readers), so every acquiring call (lock,
// try_lock, try_lock_for...) throws it at once rather than wait or answer false. Release the
// read holds first, or take the write lock before the read lock (downgrade).
class LockUpgradeError : public Error {
 public:
  using Error::Error;
};

class ReadWriteLock {
 public:
  // A new handle on the read or write side; every handle of this ReadWriteLock holds as its
  // one owner (holds of one side's handles add up, as one reentrant party's).
  Lock read_lock();
  Lock write_lock();

  const std::string& name() const { return name_; }
  // The owner both sides hold under: "<client id>:<owner id>".
  const std::string& owner() const { return owner_; }

 private:
  friend class Client;
  ReadWriteLock(std::shared_ptr<detail::LockService> service, std::string name);

  std::shared_ptr<detail::LockService> service_;
  std::string name_;
  std::string owner_;
};

}  // namespace keywarden
