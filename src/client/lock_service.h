// Internal to the client layer: what every lock handle of one Client shares. LockService owns
// the client id, one Subscriber whose channel subscriptions are refcounted per channel, and
// the watchdog thread that renews watchdog-kept leases in batches and reports lost leases.
// LockProtocol is what differs between kinds of lock (reentrant, fair, read, write, fenced):
// the scripts, the keys they touch and the channel a waiter listens on. A handle's LockState
// carries an epoch bumped whenever a hold begins or ends, so a renewal reply that raced with
// unlock() is recognised and ignored.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "keywarden/client.h"
#include "keywarden/lock.h"
#include "keywarden/subscriber.h"
#include "connection.h"

namespace keywarden::detail {

using Clock = std::chrono::steady_clock;
using Milliseconds = std::chrono::milliseconds;

// Redisson's naming: `{name}`, unless the name already carries a hash tag, so every key of
// one lock lands in one cluster slot.
std::string tagged(const std::string& name);

class LockProtocol;

struct LockState {
  mutable std::mutex mutex;  // guards the fields below name/owner/channel
  const LockProtocol* protocol = nullptr;
  std::string name;
  std::string owner;    // "<client id>:<owner id>", the identity this handle holds under
  std::string channel;  // where this handle waits for a release
  int64_t holds = 0;
  bool watchdog = false;
  bool renew_failed = false;
  Milliseconds lease{0};
  Clock::time_point deadline{};
  uint64_t epoch = 0;
  // A hold ended by loss, not by unlock(): the next unlock() acknowledges it instead of
  // throwing, so a std::lock_guard around a lost lock does not terminate the program.
  bool lost_pending = false;
  // The fencing token of the current hold (FencedLock only).
  int64_t token = 0;
  // The current hold was granted by LOCK.ACQUIRE (and is released by LOCK.RELEASE).
  bool native = false;
  // Durable grants (Lock::require_replicas): replicas that must acknowledge, and how long to
  // wait; `acked` is what the WAIT after this handle's latest script answered (-1: none asked).
  int durable_replicas = 0;
  Milliseconds durable_timeout{0};
  mutable int64_t acked = -1;
  std::shared_ptr<std::function<void(LockLostReason)>> on_lost;
  std::shared_ptr<std::function<void(const std::exception&)>> on_error;
};

enum class ReleaseOutcome {
  kNotHeld,    // the server does not know this owner: the hold was lost
  kStillHeld,  // one hold dropped, others remain (lease re-armed)
  kReleased,   // the last hold dropped, waiters told
};

class LockService;

// Which native command form a kind of lock acquires with on keywarden-server, if any.
enum class NativeLock {
  kNone,    // scripts only (fair, read-write, Redisson-layout fenced locks)
  kPlain,   // LOCK.ACQUIRE
  kFenced,  // LOCK.ACQUIRE … FENCE, the token in the reply
};

// One kind of lock. Implementations are stateless singletons; every call gets the handle's
// state (read its name/owner/channel; try_acquire may also set `token`).
class LockProtocol {
 public:
  virtual ~LockProtocol() = default;

  // The channel a waiter of `name` listens on for releases.
  virtual std::string channel(const std::string& name, const std::string& owner) const = 0;
  // One attempt: nullopt when this owner now holds one more hold with `lease`; otherwise how
  // long in ms the waiter may sleep before trying again when no message comes (-1: no bound).
  virtual std::optional<int64_t> try_acquire(LockService& service, LockState& state,
                                             Milliseconds lease) const = 0;
  // A waiter stopped waiting without the lock (gave up, or failed): undo what try_acquire
  // left behind for it, such as a place in a queue. Best effort; must not throw.
  virtual void cancel_wait(LockService& service, const LockState& state) const noexcept;
  // Drops one hold; `request` makes a retried request answer the same.
  virtual ReleaseOutcome release(LockService& service, const LockState& state, Milliseconds lease,
                                 const std::string& request) const = 0;
  // Drops every hold of this owner at once (a handle destroyed while holding). May throw.
  virtual void release_all(LockService& service, const LockState& state) const = 0;
  // Deletes the lock whoever holds it and wakes waiters; true when it was held.
  virtual bool force_unlock(LockService& service, const LockState& state) const = 0;
  // The watchdog's batch renewal script: KEYS are lock names, ARGV[1] the lease in ms,
  // ARGV[i + 1] the owner of KEYS[i]; returns per key 1 when still held (lease re-armed)
  // else 0.
  virtual const Script& renew_script() const = 0;
  // Queries behind Lock::is_locked / is_held / hold_count.
  virtual bool is_locked(LockService& service, const LockState& state) const;
  virtual int64_t hold_count(LockService& service, const LockState& state) const;
  // Whether the kind may acquire with LOCK.ACQUIRE (its hash layout is a plain Redisson lock).
  virtual NativeLock native() const { return NativeLock::kNone; }
};

// The reentrant lock, Redisson's RLock: also the base of the fenced lock.
const LockProtocol& reentrant_protocol();

// A refcounted subscription's wake-up signal: every message bumps the generation.
struct ChannelEntry {
  std::mutex mutex;
  std::condition_variable cv;
  uint64_t generation = 0;
  int users = 0;

  void bump() {
    {
      std::lock_guard<std::mutex> guard(mutex);
      ++generation;
    }
    cv.notify_all();
  }
  uint64_t current() {
    std::lock_guard<std::mutex> guard(mutex);
    return generation;
  }
  // Sleeps until a message after `seen` arrives or `until` passes (time_point::max(): no bound).
  void wait(uint64_t seen, Clock::time_point until) {
    std::unique_lock<std::mutex> lock(mutex);
    auto woken = [&] { return generation != seen; };
    if (until == Clock::time_point::max()) cv.wait(lock, woken);
    else cv.wait_until(lock, until, woken);
  }
};

// Holds a channel subscription for one wait; leaving it on scope exit never throws.
class ChannelWait {
 public:
  ChannelWait(LockService& service, std::string channel);
  ~ChannelWait();
  ChannelWait(const ChannelWait&) = delete;
  ChannelWait& operator=(const ChannelWait&) = delete;
  ChannelEntry& entry() { return *entry_; }

 private:
  LockService& service_;
  std::string channel_;
  std::shared_ptr<ChannelEntry> entry_;
};

// Calls `attempt` until it succeeds (returns nullopt) or `end` passes, false then. Between
// attempts it sleeps until a message on `channel` or for the bound in ms the failed attempt
// returned (-1: none), never polling. The first attempt is made before subscribing; later
// ones after, so a release between them is not missed.
bool wait_for(LockService& service, const std::string& channel, Clock::time_point end,
              const std::function<std::optional<int64_t>()>& attempt);

class LockService {
 public:
  explicit LockService(Client& client);
  ~LockService();

  Client& client() { return client_; }
  // Runs a script on behalf of `state`: when the handle requires durable grants, WAIT follows
  // it in the same round trip and its answer lands in state.acked.
  Reply eval(const LockState& state, const Script& script, const std::vector<std::string>& keys,
             const std::vector<std::string>& args);
  Milliseconds watchdog_timeout() const { return watchdog_timeout_; }
  const std::string& client_id() const { return client_id_; }

  std::string next_owner() { return client_id_ + ":" + std::to_string(++owner_counter_); }
  // A fresh id for one release request, and how long the server remembers its answer.
  std::string next_request() { return client_id_ + ":r" + std::to_string(++request_counter_); }
  Milliseconds request_memory() const;

  // A hold began: the watchdog watches its deadline (and renews it when watchdog-kept).
  void hold(const std::shared_ptr<LockState>& state);
  void drop(LockState* state);
  // Ends the hold `state` had at `epoch` (if it still has it) and tells its on_lost.
  void lose(const std::shared_ptr<LockState>& state, uint64_t epoch, LockLostReason reason);
  // The holds (handle, epoch) this client's handles have on `name` now.
  using Held = std::vector<std::pair<std::shared_ptr<LockState>, uint64_t>>;
  Held holders(const std::string& name);
  // Those holds were lost to force_unlock() (a hold begun since, by a waiter the force woke,
  // is left alone).
  void force_unlocked(const Held& holds);

  // Whether the server has the native lock commands and the options allow them: asked once,
  // forgotten when a command turns out to be unknown (a failover to a server without them).
  bool native_locks();
  void forget_native_locks() { native_.store(kNativeAbsent); }
  // Runs a LOCK.ACQUIRE (`args`) that the server may hold for up to `wait` (nullopt: without
  // limit) on one of the service's own connections, idle between uses, so that a waiting
  // thread holds no pooled connection. A second command (`then`, may be empty) follows it in
  // the same round trip; returns both replies.
  std::vector<Reply> native_acquire(const std::vector<std::string>& args,
                                    const std::vector<std::string>& then,
                                    std::optional<Milliseconds> wait);

  // Subscribes (once per channel, refcounted) and returns once the server confirmed.
  std::shared_ptr<ChannelEntry> join_channel(const std::string& channel);
  void leave_channel(const std::string& channel);

 private:
  Subscriber& subscriber();
  Held snapshot();
  void renew(const Held& held);
  void renew_batch(const LockProtocol& protocol, const Held& batch);
  void run();

  Client& client_;
  const std::string client_id_;
  Milliseconds watchdog_timeout_;
  std::atomic<uint64_t> owner_counter_{0};
  std::atomic<uint64_t> request_counter_{0};

  std::mutex mutex_;  // held_, stop_, changed_
  std::condition_variable cv_;
  bool stop_ = false;
  bool changed_ = false;
  std::map<LockState*, std::shared_ptr<LockState>> held_;
  std::thread thread_;

  static constexpr int kNativeUnknown = 0, kNativePresent = 1, kNativeAbsent = 2;
  std::atomic<int> native_{kNativeUnknown};
  // The connections native acquires wait on. Each has its own options (its own round-trip
  // limit, set per wait) since a Connection keeps a reference to them.
  struct WaitConnection {
    explicit WaitConnection(const ClientOptions& base) : options(base), connection(options) {}
    ClientOptions options;
    Connection connection;
  };
  std::mutex wait_connections_mutex_;
  std::vector<std::unique_ptr<WaitConnection>> idle_wait_connections_;

  std::mutex subscribe_mutex_;  // serialises join/leave and guards subscriber_
  std::unique_ptr<Subscriber> subscriber_;
  std::mutex channels_mutex_;
  std::map<std::string, std::shared_ptr<ChannelEntry>> channels_;
};

}  // namespace keywarden::detail
