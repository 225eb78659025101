// Semaphore (see keywarden/semaphore.h): Redisson's RSemaphore layout, a string counter of
// available permits and a `redisson_sc:` channel told the new count on every release.
#include "keywarden/semaphore.h"

#include <stdexcept>

#include "lock_service.h"

namespace keywarden {

namespace {

using detail::Clock;

// Redisson names the channel from the raw name, braces added unless it has one already.
std::string semaphore_channel(const std::string& name) {
  if (name.find('{') != std::string::npos) return "redisson_sc:" + name;
  return "redisson_sc:{" + name + "}";
}

void check_permits(int64_t permits) {
  if (permits < 0) throw std::invalid_argument("permits must not be negative");
}

// KEYS[1] counter; ARGV[1] permits wanted. Takes them only when all are there.
const Script& try_acquire_script() {
  static const Script script(R"lua(
local available = tonumber(redis.call('GET', KEYS[1]) or '0')
if available >= tonumber(ARGV[1]) then
  redis.call('DECRBY', KEYS[1], ARGV[1])
  return 1
end
return 0
)lua");
  return script;
}

// KEYS[1] counter, KEYS[2] channel; ARGV[1] permits returned.
const Script& release_script() {
  static const Script script(R"lua(
local now = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PUBLISH', KEYS[2], now)
return now
)lua");
  return script;
}

// KEYS[1] counter, KEYS[2] channel; ARGV[1] permits. Only a semaphore not set yet.
const Script& try_set_script() {
  static const Script script(R"lua(
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('PUBLISH', KEYS[2], ARGV[1])
return 1
)lua");
  return script;
}

// KEYS[1] counter, KEYS[2] channel; ARGV[1] permits added (may be negative).
const Script& add_script() {
  static const Script script(R"lua(
local total = tonumber(redis.call('GET', KEYS[1]) or '0') + tonumber(ARGV[1])
redis.call('SET', KEYS[1], string.format('%d', total))
redis.call('PUBLISH', KEYS[2], string.format('%d', total))
return total
)lua");
  return script;
}

// KEYS[1] counter. Leaves zero behind and answers what was there.
const Script& drain_script() {
  static const Script script(R"lua(
local available = redis.call('GET', KEYS[1])
if not available then return 0 end
redis.call('SET', KEYS[1], '0')
return tonumber(available)
)lua");
  return script;
}

}  // namespace

Semaphore Client::get_semaphore(std::string name) {
  return Semaphore(lock_service(), std::move(name));
}

Semaphore::Semaphore(std::shared_ptr<detail::LockService> service, std::string name)
    : service_(std::move(service)), name_(std::move(name)), channel_(semaphore_channel(name_)) {}

bool Semaphore::try_set_permits(int64_t permits) {
  check_permits(permits);
  return service_->client()
             .eval_sha(try_set_script(), {name_, channel_}, {std::to_string(permits)})
             .integer() == 1;
}

void Semaphore::add_permits(int64_t permits) {
  service_->client().eval_sha(add_script(), {name_, channel_}, {std::to_string(permits)});
}

bool Semaphore::try_acquire(int64_t permits) {
  check_permits(permits);
  if (permits == 0) return true;
  return service_->client()
             .eval_sha(try_acquire_script(), {name_}, {std::to_string(permits)})
             .integer() == 1;
}

void Semaphore::acquire(int64_t permits) {
  check_permits(permits);
  if (permits == 0) return;
  detail::wait_for(*service_, channel_, Clock::time_point::max(), [&]() -> std::optional<int64_t> {
    if (try_acquire(permits)) return std::nullopt;
    return -1;  // no bound: only a release or new permits can help
  });
}

bool Semaphore::try_acquire(int64_t permits, Milliseconds wait) {
  check_permits(permits);
  if (permits == 0) return true;
  const Clock::time_point end = Clock::now() + std::max(Milliseconds(0), wait);
  return detail::wait_for(*service_, channel_, end, [&]() -> std::optional<int64_t> {
    if (try_acquire(permits)) return std::nullopt;
    return -1;
  });
}

void Semaphore::release(int64_t permits) {
  check_permits(permits);
  if (permits == 0) return;
  service_->client().eval_sha(release_script(), {name_, channel_}, {std::to_string(permits)});
}

int64_t Semaphore::available_permits() {
  Reply reply = service_->client().command_on_primary("GET", name_);
  return reply.is_null() ? 0 : std::stoll(reply.str());
}

int64_t Semaphore::drain_permits() {
  return service_->client().eval_sha(drain_script(), {name_}).integer();
}

}  // namespace keywarden
