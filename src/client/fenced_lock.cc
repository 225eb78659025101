// FencedLock (see keywarden/fenced_lock.h): the reentrant protocol with its own acquire script,
// which takes the next token from `redisson_lock_token:{name}` when a hold begins and reads the
// current one on re-entry. Everything else delegates to detail::reentrant_protocol().
#include "keywarden/fenced_lock.h"

#include "keywarden/client.h"
#include "lock_service.h"

namespace keywarden {

namespace detail {

namespace {

// Acquire: a new hold increments the counter, a re-entry reads it; either way reply {token}.
// Held by someone else: reply the PTTL (how long the waiter may sleep).
// KEYS: lock hash, token counter; ARGV: lease ms, owner field.
constexpr const char* kFencedAcquire = R"(
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

class FencedProtocol : public LockProtocol {
 public:
  FencedProtocol() : acquire_(kFencedAcquire) {}

  std::string channel(const std::string& name, const std::string& owner) const override {
    return base().channel(name, owner);
  }

  std::optional<int64_t> try_acquire(LockService& service, LockState& state,
                                     Milliseconds lease) const override {
    Reply reply = service.client().eval_sha(acquire_, {state.name, token_key(state.name)},
                                            {std::to_string(lease.count()), state.owner});
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

  static std::string token_key(const std::string& name) {
    return "redisson_lock_token:" + tagged(name);
  }

 private:
  static const LockProtocol& base() { return reentrant_protocol(); }

  Script acquire_;
};

const FencedProtocol& fenced_protocol() {
  static const FencedProtocol protocol;
  return protocol;
}

}  // namespace

}  // namespace detail

FencedLock Client::get_fenced_lock(std::string name) {
  return FencedLock(lock_service(), std::move(name));
}

FencedLock::FencedLock(std::shared_ptr<detail::LockService> service, std::string name)
    : Lock(std::move(service), std::move(name), detail::fenced_protocol()) {}

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
  Reply reply = service_->client().command("GET", detail::FencedProtocol::token_key(state_->name));
  return reply.is_null() ? 0 : std::stoll(reply.str());
}

}  // namespace keywarden
