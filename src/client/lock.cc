// Lock and its per-client LockService (see keywarden/lock.h). The service owns what handles
// of one Client share: the client id, one Subscriber whose channel subscriptions are
// refcounted per lock name, and the watchdog thread that renews watchdog-kept leases in
// batches and reports lost leases. A handle's state carries an epoch bumped whenever a hold
// begins or ends, so a renewal reply that raced with unlock() is recognised and ignored.
#include "keywarden/lock.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "keywarden/client.h"
#include "keywarden/subscriber.h"

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

using Clock = std::chrono::steady_clock;
using Milliseconds = std::chrono::milliseconds;

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

// Watchdog batch: KEYS are lock hashes, ARGV[1] the lease, ARGV[i + 1] the owner of KEYS[i].
// Per key, 1 when the owner still holds it (lease re-armed), else 0.
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

// Drop every hold of one owner at once (a handle destroyed while holding). KEYS: hash,
// channel; ARGV: message, owner, publish command.
constexpr const char* kReleaseAll = R"(
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('del', KEYS[1])
  redis.call(ARGV[3], KEYS[2], ARGV[1])
  return 1
end
return 0
)";

constexpr size_t kRenewBatch = 100;

// Redisson's naming: `prefix:{name}`, unless the name already carries a hash tag.
std::string tagged(const std::string& name) {
  size_t open = name.find('{');
  if (open != std::string::npos) {
    size_t close = name.find('}', open + 1);
    if (close != std::string::npos && close > open + 1) return name;
  }
  return "{" + name + "}";
}

std::string make_client_id() {
  std::random_device device;
  std::mt19937_64 rng((static_cast<uint64_t>(device()) << 32) ^ device() ^
                      static_cast<uint64_t>(Clock::now().time_since_epoch().count()));
  uint64_t a = rng(), b = rng();
  // A version-4 UUID, as Redisson's ids look.
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  char text[40];
  std::snprintf(text, sizeof(text), "%08x-%04x-%04x-%04x-%012llx",
                static_cast<unsigned>(a >> 32), static_cast<unsigned>((a >> 16) & 0xffff),
                static_cast<unsigned>(a & 0xffff), static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return text;
}

}  // namespace

struct LockState {
  std::mutex mutex;
  std::string name;
  std::string owner;
  std::string channel;
  int64_t holds = 0;
  bool watchdog = false;
  bool renew_failed = false;
  Milliseconds lease{0};
  Clock::time_point deadline{};
  uint64_t epoch = 0;
  // A hold ended by loss, not by unlock(): the next unlock() acknowledges it instead of
  // throwing, so a std::lock_guard around a lost lock does not terminate the program.
  bool lost_pending = false;
  std::shared_ptr<std::function<void(LockLostReason)>> on_lost;
  std::shared_ptr<std::function<void(const std::exception&)>> on_error;
};

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
};

class LockService {
 public:
  explicit LockService(Client& client)
      : client_(client),
        client_id_(make_client_id()),
        acquire_(kAcquire),
        release_(kRelease),
        renew_(kRenew),
        force_(kForce),
        release_all_(kReleaseAll) {
    watchdog_timeout_ = std::max(Milliseconds(3), client.options().lock_watchdog_timeout);
    thread_ = std::thread([this] { run(); });
  }

  ~LockService() {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) {
      // The last handle may be dropped by an on_lost callback, on the watchdog thread itself.
      if (thread_.get_id() == std::this_thread::get_id()) thread_.detach();
      else thread_.join();
    }
    std::lock_guard<std::mutex> guard(subscribe_mutex_);
    subscriber_.reset();
  }

  Client& client() { return client_; }
  Milliseconds watchdog_timeout() const { return watchdog_timeout_; }
  const Script& acquire_script() const { return acquire_; }
  const Script& release_script() const { return release_; }
  const Script& force_script() const { return force_; }
  const Script& release_all_script() const { return release_all_; }

  std::string next_owner() { return client_id_ + ":" + std::to_string(++owner_counter_); }
  std::string next_request() { return client_id_ + ":r" + std::to_string(++request_counter_); }

  // A hold began: the watchdog watches its deadline (and renews it when watchdog-kept).
  void hold(const std::shared_ptr<LockState>& state) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      held_[state.get()] = state;
      changed_ = true;
    }
    cv_.notify_all();
  }

  void drop(LockState* state) {
    std::lock_guard<std::mutex> guard(mutex_);
    held_.erase(state);
  }

  // Ends the hold `state` had at `epoch` (if it still has it) and tells its on_lost.
  void lose(const std::shared_ptr<LockState>& state, uint64_t epoch, LockLostReason reason) {
    std::shared_ptr<std::function<void(LockLostReason)>> callback;
    {
      std::lock_guard<std::mutex> guard(state->mutex);
      if (state->epoch != epoch || state->holds == 0) return;
      state->holds = 0;
      ++state->epoch;
      state->lost_pending = true;
      callback = state->on_lost;
    }
    drop(state.get());
    if (callback && *callback) {
      try {
        (*callback)(reason);
      } catch (...) {
        // The callback's own failure has nowhere better to go.
      }
    }
  }

  void force_unlocked(const std::string& name) {
    for (auto& [state, epoch] : snapshot()) {
      if (state->name == name) lose(state, epoch, LockLostReason::kForceUnlocked);
    }
  }

  // Subscribes (once per name, refcounted) to the channel; returns once the server confirmed.
  std::shared_ptr<ChannelEntry> join_channel(const std::string& channel) {
    std::lock_guard<std::mutex> serial(subscribe_mutex_);
    std::shared_ptr<ChannelEntry> entry;
    bool first;
    {
      std::lock_guard<std::mutex> guard(channels_mutex_);
      auto& slot = channels_[channel];
      if (!slot) slot = std::make_shared<ChannelEntry>();
      entry = slot;
      first = ++entry->users == 1;
    }
    if (first) {
      try {
        subscriber().subscribe(channel, [entry](const Message&) { entry->bump(); });
      } catch (...) {
        std::lock_guard<std::mutex> guard(channels_mutex_);
        if (--entry->users == 0) channels_.erase(channel);
        throw;
      }
    }
    return entry;
  }

  void leave_channel(const std::string& channel) {
    std::lock_guard<std::mutex> serial(subscribe_mutex_);
    bool last = false;
    {
      std::lock_guard<std::mutex> guard(channels_mutex_);
      auto it = channels_.find(channel);
      if (it == channels_.end()) return;
      if (--it->second->users == 0) {
        channels_.erase(it);
        last = true;
      }
    }
    if (last && subscriber_) subscriber_->unsubscribe(channel);
  }

 private:
  Subscriber& subscriber() {
    if (!subscriber_) {
      subscriber_ = std::make_unique<Subscriber>(client_.options());
      // Release messages sent while the connection was down are lost: wake every waiter.
      subscriber_->on_reconnect([this] {
        std::lock_guard<std::mutex> guard(channels_mutex_);
        for (auto& [name, entry] : channels_) entry->bump();
      });
    }
    return *subscriber_;
  }

  std::vector<std::pair<std::shared_ptr<LockState>, uint64_t>> snapshot() {
    std::vector<std::shared_ptr<LockState>> states;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      for (auto& [key, state] : held_) states.push_back(state);
    }
    std::vector<std::pair<std::shared_ptr<LockState>, uint64_t>> out;
    for (auto& state : states) {
      std::lock_guard<std::mutex> guard(state->mutex);
      if (state->holds > 0) out.emplace_back(state, state->epoch);
    }
    return out;
  }

  void renew(const std::vector<std::pair<std::shared_ptr<LockState>, uint64_t>>& held) {
    std::vector<std::pair<std::shared_ptr<LockState>, uint64_t>> kept;
    for (const auto& item : held) {
      std::lock_guard<std::mutex> guard(item.first->mutex);
      if (item.first->watchdog) kept.push_back(item);
    }
    for (size_t start = 0; start < kept.size(); start += kRenewBatch) {
      size_t end = std::min(kept.size(), start + kRenewBatch);
      std::vector<std::string> keys;
      std::vector<std::string> args{std::to_string(watchdog_timeout_.count())};
      for (size_t i = start; i < end; ++i) {
        keys.push_back(kept[i].first->name);
        args.push_back(kept[i].first->owner);
      }
      const Clock::time_point sent = Clock::now();
      std::vector<int64_t> results;
      try {
        Reply reply = client_.eval_sha(renew_, keys, args);
        for (const Reply& r : reply.elements()) results.push_back(r.integer());
      } catch (const std::exception&) {
        for (size_t i = start; i < end; ++i) {
          std::lock_guard<std::mutex> guard(kept[i].first->mutex);
          kept[i].first->renew_failed = true;
        }
        continue;
      }
      for (size_t i = start; i < end && i - start < results.size(); ++i) {
        auto& [state, epoch] = kept[i];
        bool still_held = results[i - start] == 1;
        if (still_held) {
          std::lock_guard<std::mutex> guard(state->mutex);
          if (state->epoch == epoch && state->holds > 0) {
            state->deadline = sent + watchdog_timeout_;
            state->renew_failed = false;
          }
        } else {
          lose(state, epoch, LockLostReason::kNotOwner);
        }
      }
    }
  }

  void run() {
    const Milliseconds interval = std::max(Milliseconds(1), watchdog_timeout_ / 3);
    Clock::time_point next_renew = Clock::now() + interval;
    for (;;) {
      {
        std::lock_guard<std::mutex> guard(mutex_);
        if (stop_) return;
        changed_ = false;
      }
      auto held = snapshot();
      Clock::time_point now = Clock::now();
      if (now >= next_renew) {
        renew(held);
        next_renew = now + interval;
        continue;
      }
      Clock::time_point wake = next_renew;
      for (auto& [state, epoch] : held) {
        Clock::time_point deadline;
        LockLostReason reason;
        {
          std::lock_guard<std::mutex> guard(state->mutex);
          // Fire a little early: the watchdog thread may be scheduled late, and the holder
          // must hear of the loss before the server lets the next one in.
          deadline = state->deadline - std::min(Milliseconds(100),
                                                std::max(Milliseconds(1), state->lease / 20));
          reason = state->watchdog ? LockLostReason::kRenewFailed
                                   : LockLostReason::kDeadlinePassed;
        }
        if (now >= deadline) lose(state, epoch, reason);
        else wake = std::min(wake, deadline);
      }
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait_until(lock, wake, [&] { return stop_ || changed_; });
    }
  }

  Client& client_;
  const std::string client_id_;
  Milliseconds watchdog_timeout_;
  Script acquire_, release_, renew_, force_, release_all_;
  std::atomic<uint64_t> owner_counter_{0};
  std::atomic<uint64_t> request_counter_{0};

  std::mutex mutex_;  // held_, stop_, changed_
  std::condition_variable cv_;
  bool stop_ = false;
  bool changed_ = false;
  std::map<LockState*, std::shared_ptr<LockState>> held_;
  std::thread thread_;

  std::mutex subscribe_mutex_;  // serialises join/leave and guards subscriber_
  std::unique_ptr<Subscriber> subscriber_;
  std::mutex channels_mutex_;
  std::map<std::string, std::shared_ptr<ChannelEntry>> channels_;
};

}  // namespace detail

using detail::Clock;

Lock Client::get_lock(std::string name) {
  std::call_once(lock_service_once_,
                 [this] { lock_service_ = std::make_shared<detail::LockService>(*this); });
  return Lock(lock_service_, std::move(name));
}

Lock::Lock(std::shared_ptr<detail::LockService> service, std::string name)
    : service_(std::move(service)), state_(std::make_shared<detail::LockState>()) {
  state_->channel = "redisson_lock__channel:" + detail::tagged(name);
  state_->owner = service_->next_owner();
  state_->name = std::move(name);
}

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
      service_->client().eval_sha(service_->release_all_script(), {state_->name, state_->channel},
                                  {"0", state_->owner, "publish"});
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
  Reply reply = service_->client().eval_sha(service_->acquire_script(), {state_->name},
                                            {std::to_string(effective.count()), state_->owner});
  if (!reply.is_null()) return reply.integer();
  bool first;
  {
    std::lock_guard<std::mutex> guard(state_->mutex);
    first = state_->holds == 0;
    if (first) {
      ++state_->epoch;
      state_->watchdog = !lease.has_value();
      state_->renew_failed = false;
      state_->lost_pending = false;
    }
    state_->lease = effective;
    ++state_->holds;
    state_->deadline = sent + effective;
  }
  service_->hold(state_);
  return std::nullopt;
}

bool Lock::acquire(std::optional<Milliseconds> wait, std::optional<Milliseconds> lease) {
  if (lease && lease->count() <= 0) throw std::invalid_argument("lock lease must be positive");
  if (!try_once(lease)) return true;
  if (wait && wait->count() <= 0) return false;
  const Clock::time_point end = wait ? Clock::now() + *wait : Clock::time_point::max();
  auto entry = service_->join_channel(state_->channel);
  struct Leave {
    detail::LockService* service;
    const std::string& channel;
    ~Leave() {
      try {
        service->leave_channel(channel);
      } catch (...) {
      }
    }
  } leave{service_.get(), state_->channel};
  for (;;) {
    uint64_t generation;
    {
      std::lock_guard<std::mutex> guard(entry->mutex);
      generation = entry->generation;
    }
    // Subscribed now, so a release from here on is not missed.
    std::optional<int64_t> ttl = try_once(lease);
    if (!ttl) return true;
    Clock::time_point now = Clock::now();
    if (now >= end) return false;
    Clock::time_point until = end;
    if (*ttl >= 0) until = std::min(end, now + Milliseconds(*ttl));
    std::unique_lock<std::mutex> lock(entry->mutex);
    auto released = [&] { return entry->generation != generation; };
    if (until == Clock::time_point::max()) entry->cv.wait(lock, released);
    else entry->cv.wait_until(lock, until, released);
  }
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
  const std::string latch =
      "redisson_unlock_latch:" + detail::tagged(state_->name) + ":" + service_->next_request();
  Milliseconds latch_ttl =
      std::max(Milliseconds(1000), service_->client().options().command_timeout * 2);
  const Clock::time_point sent = Clock::now();
  Reply reply;
  try {
    reply = service_->client().eval_sha(
        service_->release_script(), {state_->name, state_->channel, latch},
        {"0", std::to_string(lease.count()), state_->owner, "publish",
         std::to_string(latch_ttl.count())});
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
  if (reply.is_null()) {
    // Held here but not there: the lease was lost before the watchdog noticed, and that is
    // reported as a loss.
    service_->lose(state_, epoch, LockLostReason::kNotOwner);
    {
      std::lock_guard<std::mutex> guard(state_->mutex);
      state_->lost_pending = false;
    }
    if (!loss_told) report(lost_error());
    return;
  }
  if (reply.integer() == 0) {
    std::lock_guard<std::mutex> guard(state_->mutex);
    if (state_->holds > 1) --state_->holds;
    state_->deadline = sent + lease;
    return;
  }
  {
    std::lock_guard<std::mutex> guard(state_->mutex);
    state_->holds = 0;
    ++state_->epoch;
  }
  service_->drop(state_.get());
}

bool Lock::force_unlock() {
  Reply reply = service_->client().eval_sha(service_->force_script(),
                                            {state_->name, state_->channel}, {"0", "publish"});
  service_->force_unlocked(state_->name);
  return reply.integer() == 1;
}

bool Lock::is_locked() const {
  return service_->client().command("EXISTS", state_->name).integer() == 1;
}

bool Lock::is_held() const {
  return service_->client().command("HEXISTS", state_->name, state_->owner).integer() == 1;
}

int64_t Lock::hold_count() const {
  Reply reply = service_->client().command("HGET", state_->name, state_->owner);
  if (reply.is_null()) return 0;
  return std::stoll(reply.str());
}

Lock::Milliseconds Lock::remaining_lease() const {
  return Milliseconds(service_->client().command("PTTL", state_->name).integer());
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
