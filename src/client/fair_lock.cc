// FairLock (see keywarden/fair_lock.h): the fair protocol's scripts over the lock hash, the
// queue list and the timeout sorted set. Each script first reads the server's TIME and drops
// the waiters whose kept place ran out, so no script trusts a client clock and no dead waiter
// outlives its queue timeout by more than the next script call. Renewal and the hold queries
// are the reentrant lock's (same hash).
#include "keywarden/fair_lock.h"

#include <map>
#include <mutex>
#include <stdexcept>

#include "keywarden/client.h"
#include "lock_service.h"

namespace keywarden {

namespace detail {

namespace {

// Shared opening of every script. KEYS[1] lock hash, KEYS[2] queue, KEYS[3] timeouts.
// `now` is the server's clock in ms; wake_head(prefix) publishes on the head waiter's channel.
constexpr const char* kPrelude = R"(
local clock = redis.call('time')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local expired = redis.call('zrangebyscore', KEYS[3], '-inf', now)
for _, owner in ipairs(expired) do
  redis.call('zrem', KEYS[3], owner)
  redis.call('lrem', KEYS[2], 0, owner)
end
local function wake_head(prefix)
  local head = redis.call('lindex', KEYS[2], 0)
  if head then
    redis.call('publish', prefix .. ':' .. head, 0)
  end
end
)";

// Acquire. A re-entry adds a hold. A free lock goes to this owner when nobody is queued or it
// is the head (it leaves the queue). Otherwise the owner joins the tail or, already queued,
// refreshes its deadline to now + queue timeout; the reply is how long it may sleep: at most a
// third of the queue timeout (the heartbeat that keeps a live waiter's place), less when the
// head's wait has a nearer end (the holder's lease, or a dead head's place running out).
// ARGV: lease ms, owner, queue timeout ms.
constexpr const char* kAcquire = R"(
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
local head = redis.call('lindex', KEYS[2], 0)
if redis.call('exists', KEYS[1]) == 0 and (head == false or head == ARGV[2]) then
  if head then
    redis.call('lpop', KEYS[2])
  end
  redis.call('zrem', KEYS[3], ARGV[2])
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
local timeout = tonumber(ARGV[3])
if redis.call('zadd', KEYS[3], now + timeout, ARGV[2]) == 1 then
  redis.call('rpush', KEYS[2], ARGV[2])
end
local bound = math.max(1, math.floor(timeout / 3))
head = redis.call('lindex', KEYS[2], 0)
local ttl = redis.call('pttl', KEYS[1])
if ttl >= 0 then
  if head == ARGV[2] then
    bound = math.min(bound, math.max(1, ttl))
  end
elseif ttl == -2 and head then
  local kept = redis.call('zscore', KEYS[3], head)
  if kept then
    bound = math.min(bound, math.max(1, tonumber(kept) - now + 1))
  end
end
return bound
)";

// Release one hold; the last one deletes the hash and wakes the head waiter. A latch key
// remembers the answer to this request id, so a retried request answers the same.
// nil: not the owner (the head is woken if the lock is gone); 0: holds remain; 1: released.
// KEYS[4] latch; ARGV: lease ms, owner, channel prefix, latch ttl ms.
constexpr const char* kRelease = R"(
local done = redis.call('get', KEYS[4])
if done then
  return tonumber(done)
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  if redis.call('exists', KEYS[1]) == 0 then
    wake_head(ARGV[3])
  end
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[2], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  redis.call('set', KEYS[4], 0, 'px', ARGV[4])
  return 0
end
redis.call('del', KEYS[1])
wake_head(ARGV[3])
redis.call('set', KEYS[4], 1, 'px', ARGV[4])
return 1
)";

// Drop every hold of one owner. ARGV: owner, channel prefix.
constexpr const char* kReleaseAll = R"(
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  redis.call('del', KEYS[1])
  wake_head(ARGV[2])
  return 1
end
return 0
)";

// Delete the lock whoever holds it and wake the head waiter. ARGV: channel prefix.
constexpr const char* kForce = R"(
if redis.call('del', KEYS[1]) == 1 then
  wake_head(ARGV[1])
  return 1
end
return 0
)";

// A waiter gives up: it leaves the queue, and if the lock is free the (new) head is woken, so
// a turn handed to a waiter that was just leaving is passed on. ARGV: owner, channel prefix.
constexpr const char* kCancel = R"(
redis.call('zrem', KEYS[3], ARGV[1])
redis.call('lrem', KEYS[2], 0, ARGV[1])
if redis.call('exists', KEYS[1]) == 0 then
  wake_head(ARGV[2])
end
return 1
)";

struct FairScripts {
  Script acquire{std::string(kPrelude) + kAcquire};
  Script release{std::string(kPrelude) + kRelease};
  Script release_all{std::string(kPrelude) + kReleaseAll};
  Script force{std::string(kPrelude) + kForce};
  Script cancel{std::string(kPrelude) + kCancel};
};

const FairScripts& scripts() {
  static const FairScripts all;
  return all;
}

std::vector<std::string> fair_keys(const std::string& name) {
  const std::string tag = tagged(name);
  return {name, "redisson_lock_queue:" + tag, "redisson_lock_timeout:" + tag};
}

std::string channel_prefix(const std::string& name) {
  return "redisson_lock__channel:" + tagged(name);
}

// One instance per queue timeout in use (the protocol is shared by every handle with that
// timeout, and the watchdog batches renewals per protocol).
class FairProtocol : public LockProtocol {
 public:
  explicit FairProtocol(Milliseconds queue_timeout) : queue_timeout_(queue_timeout) {}

  std::string channel(const std::string& name, const std::string& owner) const override {
    return channel_prefix(name) + ":" + owner;
  }

  std::optional<int64_t> try_acquire(LockService& service, LockState& state,
                                     Milliseconds lease) const override {
    Reply reply = service.eval(
        state, scripts().acquire, fair_keys(state.name),
        {std::to_string(lease.count()), state.owner, std::to_string(queue_timeout_.count())});
    if (reply.is_null()) return std::nullopt;
    return reply.integer();
  }

  void cancel_wait(LockService& service, const LockState& state) const noexcept override {
    try {
      service.client().eval_sha(scripts().cancel, fair_keys(state.name),
                                {state.owner, channel_prefix(state.name)});
    } catch (...) {
      // The server drops this waiter anyway once its queue timeout passes.
    }
  }

  ReleaseOutcome release(LockService& service, const LockState& state, Milliseconds lease,
                         const std::string& request) const override {
    std::vector<std::string> keys = fair_keys(state.name);
    keys.push_back("redisson_unlock_latch:" + tagged(state.name) + ":" + request);
    Reply reply =
        service.eval(state, scripts().release, keys,
                     {std::to_string(lease.count()), state.owner, channel_prefix(state.name),
                      std::to_string(service.request_memory().count())});
    if (reply.is_null()) return ReleaseOutcome::kNotHeld;
    return reply.integer() == 0 ? ReleaseOutcome::kStillHeld : ReleaseOutcome::kReleased;
  }

  void release_all(LockService& service, const LockState& state) const override {
    service.client().eval_sha(scripts().release_all, fair_keys(state.name),
                              {state.owner, channel_prefix(state.name)});
  }

  bool force_unlock(LockService& service, const LockState& state) const override {
    return service.client()
               .eval_sha(scripts().force, fair_keys(state.name), {channel_prefix(state.name)})
               .integer() == 1;
  }

  const Script& renew_script() const override { return reentrant_protocol().renew_script(); }

 private:
  Milliseconds queue_timeout_;
};

// Protocols live for the whole program: a handle's state (and the watchdog) points at one.
const LockProtocol& fair_protocol(Milliseconds queue_timeout) {
  static std::mutex mutex;
  static std::map<int64_t, std::unique_ptr<FairProtocol>> protocols;
  std::lock_guard<std::mutex> guard(mutex);
  auto& slot = protocols[queue_timeout.count()];
  if (!slot) slot = std::make_unique<FairProtocol>(queue_timeout);
  return *slot;
}

}  // namespace

}  // namespace detail

FairLock Client::get_fair_lock(std::string name) {
  return FairLock(lock_service(), std::move(name));
}

FairLock::FairLock(std::shared_ptr<detail::LockService> service, std::string name)
    : Lock(std::move(service), std::move(name), detail::fair_protocol(kDefaultQueueTimeout)) {}

void FairLock::set_queue_timeout(Milliseconds timeout) {
  if (timeout.count() <= 0) throw std::invalid_argument("fair lock queue timeout must be positive");
  std::lock_guard<std::mutex> guard(state_->mutex);
  state_->protocol = &detail::fair_protocol(timeout);
  queue_timeout_ = timeout;
}

}  // namespace keywarden
