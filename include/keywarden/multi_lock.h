// keywarden::MultiLock and keywarden::RedLock: locks made of several Locks.
//
// MultiLock is all-or-nothing over several Locks (any kinds, from one Client or several): it
// holds all of them or none. As Redisson's RedissonMultiLock it takes the members in order;
// where Redisson then waits for a busy member while keeping the ones it took, we release
// them first and wait (on the member's release channel, never polling) for that member alone,
// then try the others again. So a MultiLock never waits while holding anything, and two
// MultiLocks over overlapping names in different orders cannot deadlock.
// With an explicit lease each member's lease counts from its own grant (Redisson re-PEXPIREs
// every member at the end, which would leave the members' local deadlines wrong): remaining()
// is the smallest of the members', and an acquisition slower than the lease starts over.
//
// RedLock is the Redlock algorithm over N independent servers (one Client each), using one
// reentrant Lock per server with Redisson's key layout and the same lease everywhere. An
// attempt sends the acquire to every node at once; it succeeds when a quorum N/2+1 granted
// and the validity lease - elapsed - drift (drift = lease/100 + 2 ms) is still positive,
// elapsed counted from when the attempt was sent. Otherwise it releases on every node,
// including those whose reply was lost, and tries again within the wait after a release
// message from any node or the shortest remaining lease of the holders (plus a little jitter
// so competing RedLocks do not retry in lockstep). The per-node timeout is each node
// Client's command_timeout: give node Clients a short one (the spec suggests 5-50 ms for a
// 10 s lease). Without a lease the watchdog of each node's Client keeps it, and on_lost fires
// as soon as fewer than a quorum of nodes still hold it.
//
// Differences from Redisson, on purpose: Redisson's MultiLock waits for a busy member while
// keeping the others (two MultiLocks can then block each other until their waits run out) and
// its lock() retries in cycles of N x 1.5 s; ours never waits while holding. Redisson's RedLock
// (deprecated there) is a MultiLock trying nodes one after another with a wait of
// remaining/N each and no validity check; ours asks all nodes at once and checks the validity
// as the Redlock spec says. A RedLock already held by this handle counts a further
// acquisition locally (no round trip, no lease reset). The keys and channels are those of
// each member Lock (Redisson's), so Java and C++ clients exclude each other member by member.
//
// Known limits (see docs/locks.md; Kleppmann, "How to do distributed locking", and antirez,
// "Is Redlock safe?"): Redlock's safety assumes bounded network delay, bounded process pauses
// and bounded clock drift on the servers; a GC pause or SIGSTOP after the validity check, a
// server's wall clock jumping, or a node restarting without persistence within a lease can let
// two holders in. It gives no fencing token: where correctness matters, check a FencedLock's
// token at the resource. Redisson deprecated its RedissonRedLock for these reasons; we keep it
// for deployments that want a quorum over independent servers, with the limits stated.
#pragma once

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "keywarden/errors.h"
#include "keywarden/lock.h"

namespace keywarden {

class Client;

// Called when a held MultiLock or RedLock loses a member: `which` is the member lock's name
// (MultiLock) or the node's "host:port" (RedLock).
using MemberLostCallback = std::function<void(const std::string& which, LockLostReason reason)>;

class MultiLock : public TimedLockable<MultiLock> {
 public:
  using Milliseconds = std::chrono::milliseconds;
  using TimedLockable::try_lock;

  // Throws std::invalid_argument when `locks` is empty.
  explicit MultiLock(std::vector<Lock> locks);
  MultiLock(MultiLock&&) noexcept;
  MultiLock& operator=(MultiLock&&) noexcept;
  MultiLock(const MultiLock&) = delete;
  MultiLock& operator=(const MultiLock&) = delete;
  // Releases what is still held (each member's destructor, never throwing).
  ~MultiLock();

  void lock();
  void lock(Milliseconds lease);
  bool try_lock();

  // Releases one hold of every member. Throws NotOwnerError only when this MultiLock holds
  // nothing; errors on members it held go to on_error (a lost member to on_lost).
  void unlock();

  // Held, and every member's local lease not yet over.
  bool valid() const;
  // The smallest remaining local lease among the members (zero when not held).
  std::chrono::steady_clock::duration remaining() const;

  // Replace the members' own callbacks: a member's loss is reported with its name.
  void on_lost(MemberLostCallback callback);
  void on_error(std::function<void(const std::exception&)> callback);

  const std::vector<Lock>& locks() const { return locks_; }

 private:
  friend class TimedLockable<MultiLock>;
  bool acquire(std::optional<Milliseconds> wait, std::optional<Milliseconds> lease);
  void release_taken(const std::vector<size_t>& taken) noexcept;
  void report(const std::exception& error) noexcept;

  std::vector<Lock> locks_;
  // Moves with the handle, so callbacks already given to the members stay valid.
  struct Shared {
    std::mutex mutex;
    int64_t holds = 0;
    std::function<void(const std::exception&)> on_error;
  };
  std::unique_ptr<Shared> shared_;
};

// A RedLock attempt that could not reach a quorum because nodes failed: which and why.
class RedLockError : public Error {
 public:
  struct NodeFailure {
    std::string node;    // "host:port" (or the Unix socket path)
    std::string reason;  // the error's text, or "held by another owner"
  };
  RedLockError(const std::string& name, size_t quorum, std::vector<NodeFailure> failures);
  const std::vector<NodeFailure>& failures() const { return failures_; }

 private:
  std::vector<NodeFailure> failures_;
};

class RedLock : public TimedLockable<RedLock> {
 public:
  using Milliseconds = std::chrono::milliseconds;
  using TimedLockable::try_lock;

  // One Lock named `name` on each Client's server; the Clients must outlive the RedLock.
  // Throws std::invalid_argument when `clients` is empty or holds a null.
  RedLock(const std::vector<Client*>& clients, std::string name);
  RedLock(RedLock&&) noexcept;
  RedLock& operator=(RedLock&&) noexcept;
  RedLock(const RedLock&) = delete;
  RedLock& operator=(const RedLock&) = delete;
  ~RedLock();

  // Each throws RedLockError when fewer than a quorum of nodes could be reached; contention
  // alone is waited out (lock) or reported as false (try_*).
  void lock();
  void lock(Milliseconds lease);
  bool try_lock();

  // Releases on every node. Throws NotOwnerError only when this RedLock holds nothing; other
  // errors go to on_error.
  void unlock();

  // Validity left: lease - elapsed since the acquire was sent - drift (watchdog-kept: the
  // quorum-th longest of the nodes' remaining leases, minus drift). Zero when not held.
  std::chrono::steady_clock::duration validity() const;
  bool valid() const;

  size_t quorum() const { return nodes_.size() / 2 + 1; }
  const std::string& name() const { return name_; }
  // "host:port" of each node, in the order of the Clients given.
  std::vector<std::string> nodes() const;

  // Fires once per hold, when fewer than a quorum of nodes still hold it; `which` is the node
  // whose loss broke the quorum.
  void on_lost(MemberLostCallback callback);
  void on_error(std::function<void(const std::exception&)> callback);

 private:
  struct Node;
  struct Shared;
  friend class TimedLockable<RedLock>;
  bool acquire(std::optional<Milliseconds> wait, std::optional<Milliseconds> lease);

  std::string name_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace keywarden
