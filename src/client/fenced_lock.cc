// FencedLock (see keywarden/fenced_lock.h): the reentrant protocol with its own acquire script,
// which takes the next token when a hold begins and reads the hold's token on re-entry.
// Everything else delegates to detail::reentrant_protocol(). Two layouts of the counter:
// - shared (the default): one counter per cluster slot, `keywarden:fence:{<tag>}`
//   (common/fence_keys.h, the same counters LOCK.ACQUIRE … FENCE draws from). Every name in a
//   slot draws from it, so at most 16384 counters exist however many names were ever locked;
//   the hold's token is kept in the lock hash under kFencingTokenField.
// - per name (ClientOptions::fencing_counter_per_name): Redisson's `redisson_lock_token:{name}`,
//   one counter per name ever locked, for sharing names with Redisson's RFencedLock.
#include "keywarden/fenced_lock.h"

#include <algorithm>
#include <vector>

#include "common/fence_keys.h"
#include "keywarden/client.h"
#include "lock_service.h"

namespace keywarden {

namespace detail {

namespace {

// The lock-hash field holding the current hold's token in the shared layout (common/fence_keys.h).
constexpr std::string_view kTokenField = kFencingTokenField;

// Shared layout. A new hold increments the slot's counter — first raised past a Redisson-layout
// counter of the same name, if one is left from before, so tokens never go backwards across
// the change of layout — and records the token in the hash; a re-entry reads it back.
// Held by someone else: reply the PTTL (how long the waiter may sleep).
// KEYS: lock hash, slot counter, per-name counter; ARGV: lease ms, owner field, token field.
constexpr const char* kSharedCounterAcquire = R"(
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {tonumber(redis.call('hget', KEYS[1], ARGV[3]) or '0')}
end
if redis.call('exists', KEYS[1]) == 0 then
  local token = redis.call('incr', KEYS[2])
  local legacy = tonumber(redis.call('get', KEYS[3]) or '0')
  if legacy >= token then
    token = legacy + 1
    redis.call('set', KEYS[2], token)
  end
  redis.call('hset', KEYS[1], ARGV[2], 1, ARGV[3], token)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {token}
end
return redis.call('pttl', KEYS[1])
)";

// Per-name layout, as Redisson's RFencedLock: a new hold increments the name's counter, a
// re-entry reads it (Redisson increments on re-entry too; see fenced_lock.h).
// KEYS: lock hash, token counter; ARGV: lease ms, owner field.
constexpr const char* kPerNameAcquire = R"(
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {tonumber(redis.call('get', KEYS[2]) or '0')}
end
if redis.call('exists', KEYS[1]) == 0 then
  local token = redis.call('incr', KEYS[2])
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {token}
end
return redis.call('pttl', KEYS[1])
)";

std::string per_name_counter(const std::string& name) { return legacy_fence_counter_key(name); }

std::string shared_counter(const std::string& name) { return fence_counter_key(name); }

class FencedProtocol : public LockProtocol {
 public:
  explicit FencedProtocol(bool per_name)
      : per_name_(per_name), acquire_(per_name ? kPerNameAcquire : kSharedCounterAcquire) {}

  std::string channel(const std::string& name, const std::string& owner) const override {
    return base().channel(name, owner);
  }

  std::optional<int64_t> try_acquire(LockService& service, LockState& state,
                                     Milliseconds lease) const override {
    std::vector<std::string> keys{state.name};
    std::vector<std::string> args{std::to_string(lease.count()), state.owner};
    if (!per_name_) {
      keys.push_back(shared_counter(state.name));
      args.emplace_back(kTokenField);
    }
    keys.push_back(per_name_counter(state.name));
    Reply reply = service.eval(state, acquire_, keys, args);
    if (!reply.is_aggregate()) return reply.integer();
    std::lock_guard<std::mutex> guard(state.mutex);
    state.token = reply.elements().at(0).integer();
    return std::nullopt;
  }

  ReleaseOutcome release(LockService& service, const LockState& state, Milliseconds lease,
                         const std::string& request) const override {
    return base().release(service, state, lease, request);
  }
  void release_all(LockService& service, const LockState& state) const override {
    base().release_all(service, state);
  }
  bool force_unlock(LockService& service, const LockState& state) const override {
    return base().force_unlock(service, state);
  }
  const Script& renew_script() const override { return base().renew_script(); }
  // The shared layout is what LOCK.ACQUIRE … FENCE keeps; Redisson's per-name one is not.
  NativeLock native() const override { return per_name_ ? NativeLock::kNone : NativeLock::kFenced; }

  // The largest token handed out so far that the name's next hold must exceed.
  int64_t latest_token(Client& client, const std::string& name) const {
    if (per_name_) {
      Reply reply = client.command_on_primary("GET", per_name_counter(name));
      return reply.is_null() ? 0 : std::stoll(reply.str());
    }
    int64_t latest = 0;
    Reply counters =
        client.command_on_primary("MGET", shared_counter(name), per_name_counter(name));
    for (const Reply& counter : counters.elements()) {
      if (!counter.is_null()) latest = std::max<int64_t>(latest, std::stoll(counter.str()));
    }
    return latest;
  }

 private:
  static const LockProtocol& base() { return reentrant_protocol(); }

  bool per_name_;
  Script acquire_;
};

const FencedProtocol& fenced_protocol(bool per_name) {
  static const FencedProtocol shared(false);
  static const FencedProtocol named(true);
  return per_name ? named : shared;
}

}  // namespace

}  // namespace detail

FencedLock Client::get_fenced_lock(std::string name) {
  return FencedLock(lock_service(), std::move(name));
}

FencedLock::FencedLock(std::shared_ptr<detail::LockService> service, std::string name)
    : Lock(service, std::move(name),
           detail::fenced_protocol(service->client().options().fencing_counter_per_name)) {}

int64_t FencedLock::held_token() const {
  std::lock_guard<std::mutex> guard(state_->mutex);
  return state_->token;
}

int64_t FencedLock::lock_and_get_token() {
  acquire(std::nullopt, std::nullopt);
  return held_token();
}

int64_t FencedLock::lock_and_get_token(Milliseconds lease) {
  acquire(std::nullopt, lease);
  return held_token();
}

std::optional<int64_t> FencedLock::try_lock_and_get_token() {
  if (!acquire(Milliseconds(0), std::nullopt)) return std::nullopt;
  return held_token();
}

std::optional<int64_t> FencedLock::try_lock_and_get_token(Milliseconds wait) {
  if (!acquire(wait, std::nullopt)) return std::nullopt;
  return held_token();
}

std::optional<int64_t> FencedLock::try_lock_and_get_token(Milliseconds wait, Milliseconds lease) {
  if (!acquire(wait, lease)) return std::nullopt;
  return held_token();
}

int64_t FencedLock::token() const {
  const auto& protocol = static_cast<const detail::FencedProtocol&>(*state_->protocol);
  return protocol.latest_token(service_->client(), state_->name);
}

}  // namespace keywarden
