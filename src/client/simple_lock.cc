// SimpleLock (see keywarden/simple_lock.h): a token in one string key, released and renewed
// by compare-and-delete / compare-and-expire, natively where the server has Redis 8.4's
// conditional writes and by script elsewhere.
#include "keywarden/simple_lock.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <thread>

#include "keywarden/client.h"

namespace keywarden {

namespace {

using Clock = std::chrono::steady_clock;

// 128 random bits as 32 hex digits: unique enough that two handles never share a token.
std::string make_token() {
  thread_local std::mt19937_64 rng([] {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device() ^
           static_cast<uint64_t>(Clock::now().time_since_epoch().count());
  }());
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return text;
}

// KEYS[1] lock; ARGV[1] token. 1 deleted, 0 not the holder's.
const Script& release_script() {
  static const Script script(R"(
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
)");
  return script;
}

// KEYS[1] lock; ARGV[1] token, ARGV[2] lease ms. 1 renewed, 0 not the holder's.
const Script& extend_script() {
  static const Script script(R"(
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
)");
  return script;
}

// A server without the conditional writes answers DELEX with "unknown command" and SET … IFEQ
// with "syntax error" (Redis before 8.4).
bool lacks_conditional_writes(const ServerError& error) {
  return error.code() == "ERR" && (error.message().starts_with("unknown command") ||
                                   error.message() == "syntax error");
}

}  // namespace

bool Client::has_conditional_writes() {
  int known = conditional_writes_.load();
  if (known == kUnknown) {
    // COMMAND INFO answers [nil] for a command the server does not have.
    const Reply reply = command("COMMAND", "INFO", "DELEX");
    known = reply.is_aggregate() && reply.size() == 1 && !reply.elements()[0].is_null()
                ? kPresent
                : kAbsent;
    conditional_writes_.store(known);
  }
  return known == kPresent;
}

SimpleLock Client::get_simple_lock(std::string name) { return SimpleLock(*this, std::move(name)); }

SimpleLock::SimpleLock(Client& client, std::string name)
    : client_(&client), name_(std::move(name)), token_(make_token()) {}

bool SimpleLock::try_lock(Milliseconds lease) {
  return !client_->command("SET", name_, token_, "NX", "PX", lease.count()).is_null();
}

bool SimpleLock::try_lock_for(Milliseconds wait, Milliseconds lease) {
  constexpr Milliseconds kMaxSleep{50};
  const Clock::time_point until = Clock::now() + wait;
  while (true) {
    if (try_lock(lease)) return true;
    const Clock::time_point now = Clock::now();
    if (now >= until) return false;
    // The holder's lease bounds the sleep: the lock is free by then at the latest.
    const int64_t left = client_->command_on_primary("PTTL", name_).integer();
    Milliseconds sleep = kMaxSleep;
    if (left >= 0) sleep = std::min(sleep, Milliseconds(std::max<int64_t>(left, 1)));
    std::this_thread::sleep_for(std::min<Clock::duration>(sleep, until - now));
  }
}

void SimpleLock::unlock() {
  int64_t deleted = 0;
  bool scripted = !client_->has_conditional_writes();
  if (!scripted) {
    try {
      deleted = client_->command("DELEX", name_, "IFEQ", token_).integer();
    } catch (const ServerError& error) {
      if (!lacks_conditional_writes(error)) throw;
      client_->forget_conditional_writes();
      scripted = true;
    }
  }
  if (scripted) deleted = client_->eval_sha(release_script(), {name_}, {token_}).integer();
  if (deleted == 0) throw NotOwnerError("lock '" + name_ + "' is not held by this handle");
}

bool SimpleLock::extend(Milliseconds lease) {
  if (client_->has_conditional_writes()) {
    try {
      return !client_->command("SET", name_, token_, "IFEQ", token_, "PX", lease.count())
                  .is_null();
    } catch (const ServerError& error) {
      if (!lacks_conditional_writes(error)) throw;
      client_->forget_conditional_writes();
    }
  }
  return client_->eval_sha(extend_script(), {name_}, {token_, std::to_string(lease.count())})
             .integer() == 1;
}

bool SimpleLock::is_held() const {
  const Reply value = client_->command_on_primary("GET", name_);
  return value.is_string() && value.str() == token_;
}

}  // namespace keywarden
