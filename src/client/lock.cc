// Lock (see keywarden/lock.h) and the reentrant protocol, Redisson's RLock: a hash `name`
// whose field `<client id>:<owner id>` holds the hold count, a PEXPIRE lease, and a `0`
// published on `redisson_lock__channel:{name}` when the last hold goes. The handle logic here
// (holds, deadlines, losses, waiting) is shared by every kind of lock through LockProtocol.
#include "keywarden/lock.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "client/connection.h"
#include "keywarden/client.h"
#include "lock_service.h"

namespace keywarden {

const char* to_string(LockLostReason reason) {
  switch (reason) {
    case LockLostReason::kRenewFailed: return "renew failed";
    case LockLostReason::kNotOwner: return "not owner anymore";
    case LockLostReason::kDeadlinePassed: return "deadline passed";
    case LockLostReason::kForceUnlocked: return "force-unlocked";
  }
  return "unknown";
}

namespace detail {

namespace {

// Acquire: take the lock when nobody holds it or this owner already does (one more hold) and
// (re)arm the lease; otherwise report how long the holder's lease still runs.
// KEYS[1] lock hash; ARGV[1] lease ms; ARGV[2] owner field.
constexpr const char* kAcquire = R"(
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])
)";

// Release one hold. A latch key remembers the answer to this request id, so a retried request
// answers the same. nil: not the owner; 0: holds remain (lease re-armed); 1: released, waiters
// told. KEYS: lock hash, channel, latch; ARGV: message, lease ms, owner, publish command,
// latch ttl ms.
constexpr const char* kRelease = R"(
local done = redis.call('get', KEYS[3])
if done ~= false then
  return tonumber(done)
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local left = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if left > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[3], 0, 'px', ARGV[5])
  return 0
end
redis.call('del', KEYS[1])
redis.call(ARGV[4], KEYS[2], ARGV[1])
redis.call('set', KEYS[3], 1, 'px', ARGV[5])
return 1
)";

// Watchdog batch (see LockProtocol::renew_script).
constexpr const char* kRenew = R"(
local out = {}
for i = 1, #KEYS do
  if redis.call('hexists', KEYS[i], ARGV[i + 1]) == 1 then
    redis.call('pexpire', KEYS[i], ARGV[1])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
)";

// Delete the lock whoever holds it and wake waiters. KEYS: hash, channel; ARGV: message,
// publish command.
constexpr const char* kForce = R"(
if redis.call('del', KEYS[1]) == 1 then
  redis.call(ARGV[2], KEYS[2], ARGV[1])
  return 1
end
return 0
)";

// Drop every hold of one owner at once. KEYS: hash, channel; ARGV: message, owner, publish
// command.
constexpr const char* kReleaseAll = R"(
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('del', KEYS[1])
  redis.call(ARGV[3], KEYS[2], ARGV[1])
  return 1
end
return 0
)";

// A server error saying the command does not exist (the native lock commands on a server
// without them, after a failover to one), or that this user may not run it (an ACL user
// allowed EVALSHA but not lock.*): either way the scripts are the way left.
bool unknown_command_reply(const Reply& reply) {
  return reply.is_error() && (reply.str().starts_with("ERR unknown command") ||
                              reply.str().starts_with("NOPERM this user has no permissions to "
                                                      "run the 'lock."));
}

// LOCK.RELEASE (with ALL: every hold), with a PUBLISH on the Redisson channel in the same round
// trip so that script waiters (Redisson, lock_native_commands = kOff) wake as they would after
// the release script; native waiters are handed the lock by the server itself. nullopt when the
// server lacks the command.
std::optional<Reply> native_release(LockService& service, const LockState& state, bool all) {
  Pipeline pipeline = service.client().pipeline();
  if (all) {
    pipeline.add("LOCK.RELEASE", state.name, state.owner, "ALL");
  } else {
    pipeline.add("LOCK.RELEASE", state.name, state.owner);
  }
  pipeline.add("PUBLISH", state.channel, "0");
  std::vector<Reply> replies = pipeline.exec();
  if (unknown_command_reply(replies.at(0))) {
    service.forget_native_locks();
    return std::nullopt;
  }
  if (replies.at(0).is_error()) throw ServerError(replies.at(0).str());
  return std::move(replies.at(0));
}

class ReentrantProtocol : public LockProtocol {
 public:
  ReentrantProtocol()
      : acquire_(kAcquire), release_(kRelease), renew_(kRenew), force_(kForce),
        release_all_(kReleaseAll) {}

  std::string channel(const std::string& name, const std::string&) const override {
    return "redisson_lock__channel:" + tagged(name);
  }

  std::optional<int64_t> try_acquire(LockService& service, LockState& state,
                                     Milliseconds lease) const override {
    Reply reply =
        service.eval(state, acquire_, {state.name}, {std::to_string(lease.count()), state.owner});
    if (reply.is_null()) return std::nullopt;
    return reply.integer();
  }

  ReleaseOutcome release(LockService& service, const LockState& state, Milliseconds lease,
                         const std::string& request) const override {
    if (native_hold(state)) {
      if (std::optional<Reply> reply = native_release(service, state, false)) {
        if (reply->is_null()) return ReleaseOutcome::kNotHeld;
        return reply->integer() > 0 ? ReleaseOutcome::kStillHeld : ReleaseOutcome::kReleased;
      }
    }
    const std::string latch = "redisson_unlock_latch:" + tagged(state.name) + ":" + request;
    Reply reply = service.eval(state, release_, {state.name, state.channel, latch},
                               {"0", std::to_string(lease.count()), state.owner, "publish",
                                std::to_string(service.request_memory().count())});
    if (reply.is_null()) return ReleaseOutcome::kNotHeld;
    return reply.integer() == 0 ? ReleaseOutcome::kStillHeld : ReleaseOutcome::kReleased;
  }

  void release_all(LockService& service, const LockState& state) const override {
    if (native_hold(state) && native_release(service, state, true)) return;
    service.client().eval_sha(release_all_, {state.name, state.channel},
                              {"0", state.owner, "publish"});
  }

  bool force_unlock(LockService& service, const LockState& state) const override {
    return service.client()
               .eval_sha(force_, {state.name, state.channel}, {"0", "publish"})
               .integer() == 1;
  }

  const Script& renew_script() const override { return renew_; }
  NativeLock native() const override { return NativeLock::kPlain; }

 private:
  static bool native_hold(const LockState& state) {
    std::lock_guard<std::mutex> guard(state.mutex);
    return state.native;
  }

  Script acquire_, release_, renew_, force_, release_all_;
};

}  // namespace

const LockProtocol& reentrant_protocol() {
  static const ReentrantProtocol protocol;
  return protocol;
}

}  // namespace detail

using detail::Clock;

std::shared_ptr<detail::LockService> Client::lock_service() {
  std::call_once(lock_service_once_,
                 [this] { lock_service_ = std::make_shared<detail::LockService>(*this); });
  return lock_service_;
}

Lock Client::get_lock(std::string name) {
  return Lock(lock_service(), std::move(name), detail::reentrant_protocol());
}

Lock::Lock(std::shared_ptr<detail::LockService> service, std::string name,
           const detail::LockProtocol& protocol, std::string owner)
    : service_(std::move(service)), state_(std::make_shared<detail::LockState>()) {
  state_->protocol = &protocol;
  state_->owner = owner.empty() ? service_->next_owner() : std::move(owner);
  state_->channel = protocol.channel(name, state_->owner);
  state_->name = std::move(name);
  state_->durable_replicas = std::max(0, service_->client().options().lock_durable_replicas);
  state_->durable_timeout = service_->client().options().lock_durable_timeout;
}

void Lock::require_replicas(int replicas, Milliseconds timeout) {
  if (replicas < 0 || timeout.count() < 0) {
    throw std::invalid_argument("require_replicas: replicas and timeout must not be negative");
  }
  std::lock_guard<std::mutex> guard(state_->mutex);
  state_->durable_replicas = replicas;
  state_->durable_timeout = timeout;
}

namespace {

// Native waits broken by failovers that start over on the new primary, before giving up.
constexpr int kSwitchRetries = 8;

// How many of the required replicas acknowledged `state`'s latest script: nullopt when enough.
std::optional<std::pair<int64_t, int>> durability_shortfall(const detail::LockState& state) {
  std::lock_guard<std::mutex> guard(state.mutex);
  if (state.durable_replicas <= 0 || state.acked >= state.durable_replicas) return std::nullopt;
  return std::make_pair(state.acked, state.durable_replicas);
}

NotDurableError not_durable(const detail::LockState& state, const char* what,
                            std::pair<int64_t, int> shortfall) {
  return NotDurableError("lock " + state.name + ": " + what + " acknowledged by " +
                             std::to_string(shortfall.first) + " of " +
                             std::to_string(shortfall.second) + " required replicas within " +
                             std::to_string(state.durable_timeout.count()) + " ms",
                         shortfall.first, shortfall.second);
}

}  // namespace

Lock::Lock(Lock&& other) noexcept = default;

Lock& Lock::operator=(Lock&& other) noexcept {
  if (this != &other) {
    release_on_destroy();
    service_ = std::move(other.service_);
    state_ = std::move(other.state_);
  }
  return *this;
}

Lock::~Lock() { release_on_destroy(); }

void Lock::release_on_destroy() noexcept {
  if (!state_ || !service_) return;
  bool held;
  std::shared_ptr<std::function<void(const std::exception&)>> on_error;
  {
    std::lock_guard<std::mutex> guard(state_->mutex);
    held = state_->holds > 0;
    on_error = state_->on_error;
  }
  if (held) {
    try {
      state_->protocol->release_all(*service_, *state_);
    } catch (const std::exception& e) {
      if (on_error && *on_error) {
        try {
          (*on_error)(e);
        } catch (...) {
        }
      }
    }
    {
      std::lock_guard<std::mutex> guard(state_->mutex);
      state_->holds = 0;
      ++state_->epoch;
    }
  }
  service_->drop(state_.get());
}

std::optional<int64_t> Lock::try_once(std::optional<Milliseconds> lease) {
  const Milliseconds effective = lease.value_or(service_->watchdog_timeout());
  const Clock::time_point sent = Clock::now();
  std::optional<int64_t> wait = state_->protocol->try_acquire(*service_, *state_, effective);
  if (wait) return wait;
  if (auto shortfall = durability_shortfall(*state_)) {
    // A grant a failover could take back is no grant: undo it (best effort; its lease bounds
    // it otherwise) and say so.
    try {
      state_->protocol->release(*service_, *state_, effective, service_->next_request());
    } catch (const Error&) {
    }
    throw not_durable(*state_, "the grant was released: it was", *shortfall);
  }
  {
    std::lock_guard<std::mutex> guard(state_->mutex);
    if (state_->holds == 0) {
      ++state_->epoch;
      state_->watchdog = !lease.has_value();
      state_->renew_failed = false;
      state_->lost_pending = false;
    }
    state_->native = false;
    state_->lease = effective;
    ++state_->holds;
    state_->deadline = sent + effective;
  }
  service_->hold(state_);
  return std::nullopt;
}

std::optional<bool> Lock::acquire_native(std::optional<Milliseconds> wait,
                                         std::optional<Milliseconds> lease) {
  const Milliseconds effective = lease.value_or(service_->watchdog_timeout());
  const bool fenced = state_->protocol->native() == detail::NativeLock::kFenced;
  std::vector<std::string> args{"LOCK.ACQUIRE", state_->name, state_->owner,
                                std::to_string(effective.count())};
  // No TIMEOUT: one attempt (try_lock); TIMEOUT 0: no limit (lock()).
  std::optional<Milliseconds> server_wait;
  size_t timeout_at = 0;
  if (!wait) {
    args.insert(args.end(), {"TIMEOUT", "0"});
  } else if (wait->count() > 0) {
    server_wait = *wait;
    timeout_at = args.size() + 1;
    args.insert(args.end(), {"TIMEOUT", std::to_string(wait->count())});
  } else {
    server_wait = Milliseconds(0);
  }
  if (fenced) args.emplace_back("FENCE");
  if (service_->client().options().lock_bind_to_connection) args.emplace_back("BIND");
  const Clock::time_point wait_end =
      server_wait ? Clock::now() + *server_wait : Clock::time_point::max();
  Clock::time_point sent = Clock::now();
  std::vector<Reply> replies;
  // Through Sentinel, a wait in the old primary's queue ends when a new primary is announced
  // (or the demotion unblocks it): the wait goes on in the new primary's queue, for what is
  // left of it. A place in the queue is not carried over.
  for (int attempt = 0;; ++attempt) {
    try {
      // PTTL right after the grant, in the same round trip: the lease left once the wait is over.
      replies = service_->native_acquire(args, {"PTTL", state_->name}, server_wait);
      const Reply& first = replies.at(0);
      const bool unblocked = first.is_error() && first.str().starts_with("UNBLOCKED") &&
                             !service_->client().options().sentinel.addresses.empty();
      if (!unblocked || attempt >= kSwitchRetries) break;
    } catch (const detail::PrimarySwitchedError&) {
      if (attempt >= kSwitchRetries) throw;
    }
    if (timeout_at != 0) {
      const auto left = std::chrono::ceil<Milliseconds>(wait_end - Clock::now());
      if (left.count() <= 0) return false;
      server_wait = left;
      args[timeout_at] = std::to_string(left.count());
    }
    sent = Clock::now();
  }
  const Clock::time_point received = Clock::now();
  const Reply& reply = replies.at(0);
  if (detail::unknown_command_reply(reply)) {
    service_->forget_native_locks();
    return std::nullopt;
  }
  if (reply.is_error()) throw ServerError(reply.str());
  if (reply.is_null()) return false;
  int64_t token = 0;
  if (fenced) token = reply.elements().at(1).integer();
  // The lease began at the grant, between `sent` and `received`. An immediate grant counts it
  // from `sent` (never later than the server's). After a wait, the PTTL read right after the
  // grant, less a millisecond for the reply's way back, is far closer than `sent`.
  Clock::time_point deadline = sent + effective;
  const Reply& left = replies.at(1);
  if (left.is_integer() && left.integer() > 0) {
    deadline = std::max(deadline, received + Milliseconds(left.integer()) - Milliseconds(1));
  }
  {
    std::lock_guard<std::mutex> guard(state_->mutex);
    if (state_->holds == 0) {
      ++state_->epoch;
      state_->watchdog = !lease.has_value();
      state_->renew_failed = false;
      state_->lost_pending = false;
    }
    state_->native = true;
    if (fenced) state_->token = token;
    state_->lease = effective;
    ++state_->holds;
    state_->deadline = std::min(deadline, received + effective);
  }
  service_->hold(state_);
  return true;
}

bool Lock::acquire(std::optional<Milliseconds> wait, std::optional<Milliseconds> lease) {
  if (lease && lease->count() <= 0) throw std::invalid_argument("lock lease must be positive");
  bool durable;
  {
    std::lock_guard<std::mutex> guard(state_->mutex);
    durable = state_->durable_replicas > 0;
  }
  if (!durable && state_->protocol->native() != detail::NativeLock::kNone &&
      service_->native_locks()) {
    if (std::optional<bool> acquired = acquire_native(wait, lease)) return *acquired;
  }
  const Clock::time_point end = !wait ? Clock::time_point::max()
                                : wait->count() <= 0 ? Clock::time_point::min()
                                                     : Clock::now() + *wait;
  bool acquired = false;
  try {
    acquired = detail::wait_for(*service_, state_->channel, end,
                                [&] { return try_once(lease); });
  } catch (...) {
    state_->protocol->cancel_wait(*service_, *state_);
    throw;
  }
  if (!acquired) state_->protocol->cancel_wait(*service_, *state_);
  return acquired;
}

void Lock::lock() { acquire(std::nullopt, std::nullopt); }

void Lock::lock(Milliseconds lease) { acquire(std::nullopt, lease); }

bool Lock::try_lock() { return acquire(Milliseconds(0), std::nullopt); }

void Lock::unlock() {
  Milliseconds lease;
  uint64_t epoch;
  bool held;
  bool lost_pending;
  bool loss_told;
  {
    std::lock_guard<std::mutex> guard(state_->mutex);
    lease = state_->lease.count() > 0 ? state_->lease : service_->watchdog_timeout();
    epoch = state_->epoch;
    held = state_->holds > 0;
    lost_pending = state_->lost_pending;
    loss_told = state_->on_lost && *state_->on_lost;
    if (!held) state_->lost_pending = false;
  }
  auto report = [&](const std::exception& error) {
    std::shared_ptr<std::function<void(const std::exception&)>> on_error;
    {
      std::lock_guard<std::mutex> guard(state_->mutex);
      on_error = state_->on_error;
    }
    if (on_error && *on_error) {
      try {
        (*on_error)(error);
      } catch (...) {
      }
    } else {
      std::fprintf(stderr, "keywarden: unlock of %s: %s\n", state_->name.c_str(), error.what());
    }
  };
  auto lost_error = [&] {
    return NotOwnerError("lock " + state_->name + " was lost before unlock (owner " +
                         state_->owner + ")");
  };
  if (!held) {
    // The hold ended by a loss: on_lost told of it (else on_error does now). Only a handle
    // that holds nothing gets the exception.
    if (lost_pending) {
      if (!loss_told) report(lost_error());
      return;
    }
    throw NotOwnerError("attempt to unlock lock " + state_->name +
                        ", not held by this handle (owner " + state_->owner + ")");
  }
  const Clock::time_point sent = Clock::now();
  detail::ReleaseOutcome outcome;
  try {
    outcome = state_->protocol->release(*service_, *state_, lease, service_->next_request());
  } catch (const Error& error) {
    // The server could not be told. Stop renewing, so the lease runs out there by itself;
    // throwing here would terminate a program whose std::lock_guard is unwinding.
    {
      std::lock_guard<std::mutex> guard(state_->mutex);
      if (state_->epoch == epoch) {
        state_->holds = 0;
        ++state_->epoch;
      }
    }
    service_->drop(state_.get());
    report(error);
    return;
  }
  switch (outcome) {
    case detail::ReleaseOutcome::kNotHeld:
      // Held here but not there: the lease was lost before the watchdog noticed, and that is
      // reported as a loss.
      service_->lose(state_, epoch, LockLostReason::kNotOwner);
      {
        std::lock_guard<std::mutex> guard(state_->mutex);
        state_->lost_pending = false;
      }
      if (!loss_told) report(lost_error());
      return;
    case detail::ReleaseOutcome::kStillHeld: {
      {
        std::lock_guard<std::mutex> guard(state_->mutex);
        if (state_->holds > 1) --state_->holds;
        state_->deadline = sent + lease;
      }
      if (auto shortfall = durability_shortfall(*state_)) {
        report(not_durable(*state_, "a hold was dropped but that was", *shortfall));
      }
      return;
    }
    case detail::ReleaseOutcome::kReleased:
      break;
  }
  {
    std::lock_guard<std::mutex> guard(state_->mutex);
    state_->holds = 0;
    ++state_->epoch;
  }
  service_->drop(state_.get());
  if (auto shortfall = durability_shortfall(*state_)) {
    report(not_durable(*state_, "the release was", *shortfall));
  }
}

bool Lock::force_unlock() {
  // Only the holds taken before the delete are lost: the waiter it wakes may hold anew (often
  // before this returns), and that hold must not be written off.
  detail::LockService::Held before = service_->holders(state_->name);
  bool was_held = state_->protocol->force_unlock(*service_, *state_);
  // Only a deletion ends holds: a read-write lock's force_unlock of the side not holding it
  // deletes nothing, and the other side's holders keep their lock.
  if (was_held) service_->force_unlocked(before);
  return was_held;
}

bool Lock::is_locked() const { return state_->protocol->is_locked(*service_, *state_); }

bool Lock::is_held() const { return hold_count() > 0; }

int64_t Lock::hold_count() const { return state_->protocol->hold_count(*service_, *state_); }

Lock::Milliseconds Lock::remaining_lease() const {
  return Milliseconds(service_->client().command_on_primary("PTTL", state_->name).integer());
}

bool Lock::valid() const {
  std::lock_guard<std::mutex> guard(state_->mutex);
  return state_->holds > 0 && Clock::now() < state_->deadline;
}

std::chrono::steady_clock::duration Lock::remaining() const {
  std::lock_guard<std::mutex> guard(state_->mutex);
  if (state_->holds == 0) return Clock::duration::zero();
  return std::max(Clock::duration::zero(), state_->deadline - Clock::now());
}

void Lock::on_lost(std::function<void(LockLostReason)> callback) {
  std::lock_guard<std::mutex> guard(state_->mutex);
  state_->on_lost = std::make_shared<std::function<void(LockLostReason)>>(std::move(callback));
}

void Lock::on_error(std::function<void(const std::exception&)> callback) {
  std::lock_guard<std::mutex> guard(state_->mutex);
  state_->on_error =
      std::make_shared<std::function<void(const std::exception&)>>(std::move(callback));
}

const std::string& Lock::name() const { return state_->name; }

const std::string& Lock::owner() const { return state_->owner; }

}  // namespace keywarden
