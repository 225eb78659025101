// ReadWriteLock (see keywarden/read_write_lock.h): the read and write LockProtocols over
// Redisson's RReadWriteLock layout, and the handles that share one owner. Every script keeps
// three facts true: `mode` says who holds the hash; each live read hold n of owner o has
// `{name}:o:rwlock_timeout:n`; and the hash outlives every live hold it records.
#include "keywarden/read_write_lock.h"

#include <mutex>
#include <string>

#include "keywarden/client.h"
#include "lock_service.h"

namespace keywarden {

namespace detail {

namespace {

// Shared by the scripts that may leave a read-mode hash: the longest remaining lease among
// its readers, removing on the way the readers whose holds all ran out (a crashed reader),
// so such a reader never keeps the lock once the live ones are gone. `tag` is `{name}`.
constexpr const char* kLongestRead = R"(
local function longest_read(hash, tag)
  local longest = 0
  local fields = redis.call('hgetall', hash)
  for i = 1, #fields, 2 do
    local field = fields[i]
    if field ~= 'mode' and string.sub(field, -6) ~= ':write' then
      local best = 0
      for n = 1, tonumber(fields[i + 1]) do
        best = math.max(best, redis.call('pttl', tag .. ':' .. field .. ':rwlock_timeout:' .. n))
      end
      if best > 0 then
        longest = math.max(longest, best)
      else
        redis.call('hdel', hash, field)
      end
    end
  end
  return longest
end
)";

// Read acquire. In read mode, with no mode, or while this owner holds the write lock (a
// downgrade), add one hold: its timeout key, and the owner's other holds re-armed to last at
// least as long (never shortened: another handle of this owner may hold with a longer
// lease); so does the hash. Else reply the hash's PTTL.
// KEYS: hash, this owner's timeout prefix; ARGV: lease ms, owner, owner's write field.
constexpr const char* kReadAcquire = R"(
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return redis.call('pttl', KEYS[1])
end
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'read')
end
local count = tonumber(redis.call('hget', KEYS[1], ARGV[2]) or '0')
if count > 0 and redis.call('exists', KEYS[2] .. ':' .. count) == 0 then
  -- Holds of ours whose lease ran out are not holds any more.
  for n = 1, count do
    redis.call('del', KEYS[2] .. ':' .. n)
  end
  count = 0
end
count = count + 1
redis.call('hset', KEYS[1], ARGV[2], count)
redis.call('set', KEYS[2] .. ':' .. count, 1, 'px', ARGV[1])
for n = 1, count - 1 do
  if redis.call('pttl', KEYS[2] .. ':' .. n) < tonumber(ARGV[1]) then
    redis.call('pexpire', KEYS[2] .. ':' .. n, ARGV[1])
  end
end
if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('pexpire', KEYS[1], ARGV[1])
end
return nil
)";

// Read release: drop ARGV[6] holds of this owner (its remaining holds re-armed to at least the
// lease, as a reentrant Lock's release does), then in read mode shrink the hash's life to its
// longest live hold, or delete it and publish when none is left. nil: this owner had no live hold;
// else 1 when the handle has no hold left (ARGV[7] is its count after this release), 0 when it has.
// A latch answers a retried request the same. KEYS: hash, channel, this owner's timeout prefix,
// `{name}`, latch; ARGV: message, lease ms, owner, publish command, latch ttl ms, holds to drop,
// handle's holds after.
constexpr const char* kReadRelease = R"(
local done = redis.call('get', KEYS[5])
if done ~= false then
  return tonumber(done)
end
local count = tonumber(redis.call('hget', KEYS[1], ARGV[3]) or '0')
local live = count > 0 and redis.call('exists', KEYS[3] .. ':' .. count) == 1
local left = 0
if live then
  left = math.max(0, count - tonumber(ARGV[6]))
end
for n = left + 1, count do
  redis.call('del', KEYS[3] .. ':' .. n)
end
if left > 0 then
  redis.call('hset', KEYS[1], ARGV[3], left)
  for n = 1, left do
    if redis.call('pttl', KEYS[3] .. ':' .. n) < tonumber(ARGV[2]) then
      redis.call('pexpire', KEYS[3] .. ':' .. n, ARGV[2])
    end
  end
elseif count > 0 then
  redis.call('hdel', KEYS[1], ARGV[3])
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == 'read' then
  local longest = longest_read(KEYS[1], KEYS[4])
  if longest > 0 then
    redis.call('pexpire', KEYS[1], longest)
  else
    redis.call('del', KEYS[1])
    redis.call(ARGV[4], KEYS[2], ARGV[1])
  end
elseif mode == 'write' and left > 0 and redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('pexpire', KEYS[1], ARGV[2])
end
if not live then
  return nil
end
local result = 0
if ARGV[7] == '0' then
  result = 1
end
redis.call('set', KEYS[5], result, 'px', ARGV[5])
return result
)";

// Write acquire: with no mode take it; when this owner holds it add a hold (the hash lives at
// least the lease). An owner holding live read locks gets 'upgrade'; anyone else the PTTL.
// KEYS: hash, this owner's timeout prefix; ARGV: lease ms, owner's write field, owner.
constexpr const char* kWriteAcquire = R"(
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
    redis.call('pexpire', KEYS[1], ARGV[1])
  end
  return nil
end
if mode == 'read' then
  local count = redis.call('hget', KEYS[1], ARGV[3])
  if count ~= false and redis.call('exists', KEYS[2] .. ':' .. count) == 1 then
    return 'upgrade'
  end
end
return redis.call('pttl', KEYS[1])
)";

// Write release: drop ARGV[6] holds. At the last one the hash is deleted, or, when this
// owner's read holds remain (a downgrade), turns to read mode living as long as they do; either
// way waiters are told. Replies as kReadRelease.
// KEYS: hash, channel, `{name}`, latch; ARGV: message, lease ms, owner's write field, publish
// command, latch ttl ms, holds to drop, handle's holds after.
constexpr const char* kWriteRelease = R"(
local done = redis.call('get', KEYS[4])
if done ~= false then
  return tonumber(done)
end
if redis.call('hget', KEYS[1], 'mode') ~= 'write' then
  return nil
end
local count = tonumber(redis.call('hget', KEYS[1], ARGV[3]) or '0')
if count == 0 then
  return nil
end
local left = math.max(0, count - tonumber(ARGV[6]))
if left > 0 then
  redis.call('hset', KEYS[1], ARGV[3], left)
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then
    redis.call('pexpire', KEYS[1], ARGV[2])
  end
else
  redis.call('hdel', KEYS[1], ARGV[3])
  redis.call('hset', KEYS[1], 'mode', 'read')
  local longest = longest_read(KEYS[1], KEYS[3])
  if longest > 0 then
    redis.call('pexpire', KEYS[1], longest)
  else
    redis.call('del', KEYS[1])
  end
  redis.call(ARGV[4], KEYS[2], ARGV[1])
end
local result = 0
if ARGV[7] == '0' then
  result = 1
end
redis.call('set', KEYS[4], result, 'px', ARGV[5])
return result
)";

// The watchdog's renewals (see LockProtocol::renew_script). The timeout keys and the channel
// are named from the lock name here, the way tagged() does in C++, since the batch passes only
// names. A reader whose timeout keys are gone has lost its holds: they are removed (and the
// waiters told when no live reader remains) and the reply is 0.
constexpr const char* kReadRenew = R"(
local function tagged(name)
  local open = string.find(name, '{', 1, true)
  if open then
    local close = string.find(name, '}', open + 1, true)
    if close and close > open + 1 then
      return name
    end
  end
  return '{' .. name .. '}'
end
local out = {}
for i = 1, #KEYS do
  out[i] = 0
  local count = tonumber(redis.call('hget', KEYS[i], ARGV[i + 1]) or '0')
  if count > 0 then
    local prefix = tagged(KEYS[i]) .. ':' .. ARGV[i + 1] .. ':rwlock_timeout:'
    local alive = true
    for n = 1, count do
      local ttl = redis.call('pttl', prefix .. n)
      if ttl == -2 then
        alive = false
      elseif ttl < tonumber(ARGV[1]) then
        redis.call('pexpire', prefix .. n, ARGV[1])
      end
    end
    if alive then
      if redis.call('pttl', KEYS[i]) < tonumber(ARGV[1]) then
        redis.call('pexpire', KEYS[i], ARGV[1])
      end
      out[i] = 1
    else
      -- Our holds ran out: they stop counting now, not when the hash expires, and when no
      -- live reader is left the waiters are told.
      for n = 1, count do
        redis.call('del', prefix .. n)
      end
      redis.call('hdel', KEYS[i], ARGV[i + 1])
      if redis.call('hget', KEYS[i], 'mode') == 'read' then
        local longest = longest_read(KEYS[i], tagged(KEYS[i]))
        if longest > 0 then
          redis.call('pexpire', KEYS[i], longest)
        else
          redis.call('del', KEYS[i])
          redis.call('publish', 'redisson_rwlock:' .. tagged(KEYS[i]), '0')
        end
      end
    end
  end
end
return out
)";

constexpr const char* kWriteRenew = R"(
local out = {}
for i = 1, #KEYS do
  if redis.call('hexists', KEYS[i], ARGV[i + 1] .. ':write') == 1 then
    if redis.call('pttl', KEYS[i]) < tonumber(ARGV[1]) then
      redis.call('pexpire', KEYS[i], ARGV[1])
    end
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
)";

// Delete the lock if it is in mode ARGV[1], with every reader's timeout keys, and wake
// waiters. KEYS: hash, channel, `{name}`; ARGV: mode, message, publish command.
constexpr const char* kForce = R"(
if redis.call('hget', KEYS[1], 'mode') ~= ARGV[1] then
  return 0
end
local fields = redis.call('hgetall', KEYS[1])
for i = 1, #fields, 2 do
  local field = fields[i]
  if field ~= 'mode' and string.sub(field, -6) ~= ':write' then
    for n = 1, tonumber(fields[i + 1]) do
      redis.call('del', KEYS[3] .. ':' .. field .. ':rwlock_timeout:' .. n)
    end
  end
end
redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], ARGV[2])
return 1
)";

// Redisson's answer for a read lock: readers hold it, or the writer also holds read locks.
constexpr const char* kReadIsLocked = R"(
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == 'read' or (mode == 'write' and redis.call('hlen', KEYS[1]) > 2) then
  return 1
end
return 0
)";

// Redisson's message values: a reader's release wakes one waiter per process, the writer's
// every waiter (here any message wakes every local waiter of the channel).
constexpr const char* kReadMessage = "0";
constexpr const char* kWriteMessage = "1";

std::string timeout_prefix(const LockState& state) {
  return tagged(state.name) + ":" + state.owner + ":rwlock_timeout";
}

std::string write_field(const LockState& state) { return state.owner + ":write"; }

// The handle's holds: the owner's count on the server is the sum over its handles.
int64_t local_holds(const LockState& state) {
  std::lock_guard<std::mutex> guard(state.mutex);
  return state.holds;
}

ReleaseOutcome outcome_of(const Reply& reply) {
  if (reply.is_null()) return ReleaseOutcome::kNotHeld;
  return reply.integer() == 0 ? ReleaseOutcome::kStillHeld : ReleaseOutcome::kReleased;
}

class ReadWriteProtocol : public LockProtocol {
 public:
  ReadWriteProtocol() : force_(kForce) {}

  std::string channel(const std::string& name, const std::string&) const override {
    return "redisson_rwlock:" + tagged(name);
  }

  ReleaseOutcome release(LockService& service, const LockState& state, Milliseconds lease,
                         const std::string& request) const override {
    return outcome_of(drop(service, state, lease, request, 1, local_holds(state) - 1));
  }

  void release_all(LockService& service, const LockState& state) const override {
    drop(service, state, service.watchdog_timeout(), service.next_request(), local_holds(state), 0);
  }

 protected:
  // Drops `count` of this handle's holds, `after` of them staying; the release script's reply.
  virtual Reply drop(LockService& service, const LockState& state, Milliseconds lease,
                     const std::string& request, int64_t count, int64_t after) const = 0;

  bool force(LockService& service, const LockState& state, const char* mode,
             const char* message) const {
    return service.client()
               .eval_sha(force_, {state.name, state.channel, tagged(state.name)},
                         {mode, message, "publish"})
               .integer() == 1;
  }

 private:
  Script force_;
};

class ReadProtocol : public ReadWriteProtocol {
 public:
  ReadProtocol()
      : acquire_(kReadAcquire),
        release_(std::string(kLongestRead) + kReadRelease),
        renew_(std::string(kLongestRead) + kReadRenew),
        is_locked_(kReadIsLocked) {}

  std::optional<int64_t> try_acquire(LockService& service, LockState& state,
                                     Milliseconds lease) const override {
    Reply reply = service.eval(state, acquire_, {state.name, timeout_prefix(state)},
                               {std::to_string(lease.count()), state.owner, write_field(state)});
    if (reply.is_null()) return std::nullopt;
    return reply.integer();
  }

  bool force_unlock(LockService& service, const LockState& state) const override {
    return force(service, state, "read", kReadMessage);
  }

  const Script& renew_script() const override { return renew_; }

  bool is_locked(LockService& service, const LockState& state) const override {
    return service.client().eval_sha(is_locked_, {state.name}).integer() == 1;
  }

 private:
  Reply drop(LockService& service, const LockState& state, Milliseconds lease,
             const std::string& request, int64_t count, int64_t after) const override {
    const std::string latch = "redisson_unlock_latch:" + tagged(state.name) + ":" + request;
    return service.eval(
        state, release_,
        {state.name, state.channel, timeout_prefix(state), tagged(state.name), latch},
        {kReadMessage, std::to_string(lease.count()), state.owner, "publish",
         std::to_string(service.request_memory().count()), std::to_string(count),
         std::to_string(after)});
  }

  Script acquire_, release_, renew_, is_locked_;
};

class WriteProtocol : public ReadWriteProtocol {
 public:
  WriteProtocol()
      : acquire_(kWriteAcquire),
        release_(std::string(kLongestRead) + kWriteRelease),
        renew_(kWriteRenew) {}

  std::optional<int64_t> try_acquire(LockService& service, LockState& state,
                                     Milliseconds lease) const override {
    Reply reply = service.eval(state, acquire_, {state.name, timeout_prefix(state)},
                               {std::to_string(lease.count()), write_field(state), state.owner});
    if (reply.is_null()) return std::nullopt;
    if (reply.is_string()) {
      throw LockUpgradeError("write lock on " + state.name + " asked by owner " + state.owner +
                             ", which holds read locks on it: an upgrade would wait for "
                             "itself; release the read locks first");
    }
    return reply.integer();
  }

  bool force_unlock(LockService& service, const LockState& state) const override {
    return force(service, state, "write", kWriteMessage);
  }

  const Script& renew_script() const override { return renew_; }

  bool is_locked(LockService& service, const LockState& state) const override {
    Reply mode = service.client().command_on_primary("HGET", state.name, "mode");
    return !mode.is_null() && mode.str() == "write";
  }

  int64_t hold_count(LockService& service, const LockState& state) const override {
    Reply reply = service.client().command_on_primary("HGET", state.name, write_field(state));
    if (reply.is_null()) return 0;
    return std::stoll(reply.str());
  }

 private:
  Reply drop(LockService& service, const LockState& state, Milliseconds lease,
             const std::string& request, int64_t count, int64_t after) const override {
    const std::string latch = "redisson_unlock_latch:" + tagged(state.name) + ":" + request;
    return service.eval(state, release_, {state.name, state.channel, tagged(state.name), latch},
                        {kWriteMessage, std::to_string(lease.count()), write_field(state),
                         "publish", std::to_string(service.request_memory().count()),
                         std::to_string(count), std::to_string(after)});
  }

  Script acquire_, release_, renew_;
};

const LockProtocol& read_protocol() {
  static const ReadProtocol protocol;
  return protocol;
}

const LockProtocol& write_protocol() {
  static const WriteProtocol protocol;
  return protocol;
}

}  // namespace

}  // namespace detail

ReadWriteLock Client::get_read_write_lock(std::string name) {
  return ReadWriteLock(lock_service(), std::move(name));
}

ReadWriteLock::ReadWriteLock(std::shared_ptr<detail::LockService> service, std::string name)
    : service_(std::move(service)), name_(std::move(name)), owner_(service_->next_owner()) {}

Lock ReadWriteLock::read_lock() { return Lock(service_, name_, detail::read_protocol(), owner_); }

Lock ReadWriteLock::write_lock() { return Lock(service_, name_, detail::write_protocol(), owner_); }

}  // namespace keywarden
