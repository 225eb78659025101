// PermitExpirableSemaphore (see keywarden/semaphore.h): Redisson's RPermitExpirableSemaphore
// layout, a counter of available permits plus a sorted set of the permits taken scored by
// their lease's end. Every script first returns the expired permits to the counter, so the
// state is exact whoever touches it first, and a waiter is told the earliest lease end so it
// can sleep exactly until a crashed holder's permit comes back.
#include <random>
#include <stdexcept>

#include "keywarden/semaphore.h"
#include "lock_service.h"

namespace keywarden {

namespace {

using detail::Clock;

// What every script runs first: `now` from the server's clock (ms), and the permits whose
// lease ended go back to the counter, waiters told. KEYS are counter, timeout set, channel.
// 922337203685477 is Redisson's score for a permit without a lease.
constexpr const char* kReclaim = R"lua(
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local never = 922337203685477
local expired = redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('%d', now))
if expired > 0 then
  local available = redis.call('INCRBY', KEYS[1], expired)
  if available > 0 then redis.call('PUBLISH', KEYS[3], available) end
end
)lua";

// Replies of the acquire script besides a bound in ms.
constexpr int64_t kAcquired = -2;
constexpr int64_t kNoBound = -1;

// ARGV[1] lease in ms (-1: none), ARGV[2] the new permit's id. kAcquired, else how long until
// the earliest lease ends (kNoBound when every permit taken is lease-less).
const Script& acquire_script() {
  static const Script script(std::string(kReclaim) + R"lua(
if tonumber(redis.call('GET', KEYS[1]) or '0') >= 1 then
  redis.call('DECR', KEYS[1])
  local lease = tonumber(ARGV[1])
  local ends = never
  if lease >= 0 then ends = now + lease end
  redis.call('ZADD', KEYS[2], string.format('%d', ends), ARGV[2])
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
  return -2
end
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if first[2] and tonumber(first[2]) < never then return tonumber(first[2]) - now end
return -1
)lua");
  return script;
}

// ARGV[1] the permit's id. 1 when it was held (now returned), else 0.
const Script& release_script() {
  static const Script script(std::string(kReclaim) + R"lua(
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('PUBLISH', KEYS[3], redis.call('INCR', KEYS[1]))
return 1
)lua");
  return script;
}

// ARGV[1] the permit's id, ARGV[2] the new lease in ms. 1 when it was held, else 0.
const Script& update_lease_script() {
  static const Script script(std::string(kReclaim) + R"lua(
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[2], string.format('%d', now + tonumber(ARGV[2])), ARGV[1])
return 1
)lua");
  return script;
}

const Script& available_script() {
  static const Script script(std::string(kReclaim) + R"lua(
return tonumber(redis.call('GET', KEYS[1]) or '0')
)lua");
  return script;
}

// ARGV[1] permits. Only a semaphore not set yet.
const Script& try_set_script() {
  static const Script script(R"lua(
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('PUBLISH', KEYS[3], ARGV[1])
return 1
)lua");
  return script;
}

// ARGV[1] permits added (may be negative); waiters hear only of a gain.
const Script& add_script() {
  static const Script script(R"lua(
local total = tonumber(redis.call('GET', KEYS[1]) or '0') + tonumber(ARGV[1])
redis.call('SET', KEYS[1], string.format('%d', total))
if tonumber(ARGV[1]) > 0 then redis.call('PUBLISH', KEYS[3], ARGV[1]) end
return total
)lua");
  return script;
}

std::string hex_encode(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xf]);
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The id's bytes as the sorted set holds them; nullopt for text that is not an id.
std::optional<std::string> hex_decode(const std::string& hex) {
  if (hex.empty() || hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int high = hex_value(hex[i]), low = hex_value(hex[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out.push_back(static_cast<char>(high << 4 | low));
  }
  return out;
}

// 16 random bytes, as Redisson's permit ids.
std::string new_permit_id() {
  thread_local std::mt19937_64 rng([] {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device() ^
           static_cast<uint64_t>(Clock::now().time_since_epoch().count());
  }());
  std::string bytes(16, '\0');
  for (size_t i = 0; i < bytes.size(); i += 8) {
    uint64_t word = rng();
    for (size_t j = 0; j < 8; ++j) bytes[i + j] = static_cast<char>(word >> (8 * j));
  }
  return bytes;
}

void check_permits(int64_t permits) {
  if (permits < 0) throw std::invalid_argument("permits must not be negative");
}

void check_lease(std::chrono::milliseconds lease) {
  if (lease.count() <= 0) throw std::invalid_argument("a permit's lease must be positive");
}

}  // namespace

PermitExpirableSemaphore Client::get_permit_expirable_semaphore(std::string name) {
  return PermitExpirableSemaphore(lock_service(), std::move(name));
}

PermitExpirableSemaphore::PermitExpirableSemaphore(std::shared_ptr<detail::LockService> service,
                                                   std::string name)
    : service_(std::move(service)), name_(std::move(name)) {
  // Redisson's suffixName/prefixName: braces added unless the name has one already.
  bool tagged = name_.find('{') != std::string::npos;
  timeout_key_ = tagged ? name_ + ":timeout" : "{" + name_ + "}:timeout";
  channel_ = tagged ? "redisson_sc:" + name_ : "redisson_sc:{" + name_ + "}";
}

bool PermitExpirableSemaphore::try_set_permits(int64_t permits) {
  check_permits(permits);
  return service_->client()
             .eval_sha(try_set_script(), {name_, timeout_key_, channel_}, {std::to_string(permits)})
             .integer() == 1;
}

void PermitExpirableSemaphore::add_permits(int64_t permits) {
  service_->client().eval_sha(add_script(), {name_, timeout_key_, channel_},
                              {std::to_string(permits)});
}

std::optional<std::string> PermitExpirableSemaphore::acquire_for(
    std::optional<Milliseconds> wait, std::optional<Milliseconds> lease) {
  if (lease) check_lease(*lease);
  const std::string lease_arg = lease ? std::to_string(lease->count()) : "-1";
  std::optional<std::string> acquired;
  auto attempt = [&]() -> std::optional<int64_t> {
    std::string id = new_permit_id();
    int64_t result;
    try {
      result = service_->client()
                   .eval_sha(acquire_script(), {name_, timeout_key_, channel_}, {lease_arg, id})
                   .integer();
    } catch (const TimeoutError&) {
      // The script may have run and taken a permit nobody will ever hear of (a lease-less
      // one would never come back): give it back if it did.
      try {
        service_->client().eval_sha(release_script(), {name_, timeout_key_, channel_}, {id});
      } catch (const Error&) {
        // Unreachable server: the permit stays taken (its lease, if any, still ends).
      }
      throw;
    }
    if (result == kAcquired) {
      acquired = hex_encode(id);
      return std::nullopt;
    }
    return result == kNoBound ? kNoBound : std::max<int64_t>(1, result);
  };
  if (wait && wait->count() <= 0) {
    attempt();
    return acquired;
  }
  Clock::time_point end = wait ? Clock::now() + *wait : Clock::time_point::max();
  detail::wait_for(*service_, channel_, end, attempt);
  return acquired;
}

std::string PermitExpirableSemaphore::acquire() { return *acquire_for(std::nullopt, std::nullopt); }

std::string PermitExpirableSemaphore::acquire(Milliseconds lease) {
  return *acquire_for(std::nullopt, lease);
}

std::optional<std::string> PermitExpirableSemaphore::try_acquire() {
  return acquire_for(Milliseconds(0), std::nullopt);
}

std::optional<std::string> PermitExpirableSemaphore::try_acquire(Milliseconds wait) {
  return acquire_for(std::max(Milliseconds(0), wait), std::nullopt);
}

std::optional<std::string> PermitExpirableSemaphore::try_acquire(Milliseconds wait,
                                                                 Milliseconds lease) {
  return acquire_for(std::max(Milliseconds(0), wait), lease);
}

bool PermitExpirableSemaphore::try_release(const std::string& id) {
  std::optional<std::string> bytes = hex_decode(id);
  if (!bytes) return false;
  return service_->client()
             .eval_sha(release_script(), {name_, timeout_key_, channel_}, {*bytes})
             .integer() == 1;
}

void PermitExpirableSemaphore::release(const std::string& id) {
  if (!try_release(id)) {
    throw UnknownPermitError("permit " + id + " of semaphore " + name_ +
                             " is not held: never handed out, released already, or its lease "
                             "ended");
  }
}

int64_t PermitExpirableSemaphore::available_permits() {
  return service_->client().eval_sha(available_script(), {name_, timeout_key_, channel_}).integer();
}

bool PermitExpirableSemaphore::update_lease_time(const std::string& id, Milliseconds lease) {
  check_lease(lease);
  std::optional<std::string> bytes = hex_decode(id);
  if (!bytes) return false;
  return service_->client()
             .eval_sha(update_lease_script(), {name_, timeout_key_, channel_},
                       {*bytes, std::to_string(lease.count())})
             .integer() == 1;
}

}  // namespace keywarden
