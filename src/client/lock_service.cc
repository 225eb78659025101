// LockService (see lock_service.h): the client id, the shared Subscriber with refcounted
// channels, the watchdog thread, and the waiting loop every lock kind sleeps in.
#include "lock_service.h"

#include "common/key_slot.h"
#include "reply_convert.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <tuple>

namespace keywarden::detail {

namespace {

constexpr size_t kRenewBatch = 100;

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

std::string tagged(const std::string& name) {
  size_t open = name.find('{');
  if (open != std::string::npos) {
    size_t close = name.find('}', open + 1);
    if (close != std::string::npos && close > open + 1) return name;
  }
  return "{" + name + "}";
}

void LockProtocol::cancel_wait(LockService&, const LockState&) const noexcept {}

bool LockProtocol::is_locked(LockService& service, const LockState& state) const {
  return service.client().command_on_primary("EXISTS", state.name).integer() == 1;
}

int64_t LockProtocol::hold_count(LockService& service, const LockState& state) const {
  Reply reply = service.client().command_on_primary("HGET", state.name, state.owner);
  if (reply.is_null()) return 0;
  return std::stoll(reply.str());
}

ChannelWait::ChannelWait(LockService& service, std::string channel)
    : service_(service), channel_(std::move(channel)), entry_(service.join_channel(channel_)) {}

ChannelWait::~ChannelWait() {
  try {
    service_.leave_channel(channel_);
  } catch (...) {
    // Unsubscribing is tidiness; a broken connection drops the subscription anyway.
  }
}

bool wait_for(LockService& service, const std::string& channel, Clock::time_point end,
              const std::function<std::optional<int64_t>()>& attempt) {
  if (!attempt()) return true;
  if (Clock::now() >= end) return false;
  ChannelWait wait(service, channel);
  for (;;) {
    uint64_t seen = wait.entry().current();
    // Subscribed now, so a release from here on is not missed.
    std::optional<int64_t> bound = attempt();
    if (!bound) return true;
    Clock::time_point now = Clock::now();
    if (now >= end) return false;
    Clock::time_point until = end;
    if (*bound >= 0) until = std::min(end, now + Milliseconds(*bound));
    wait.entry().wait(seen, until);
  }
}

LockService::LockService(Client& client)
    : client_(client),
      client_id_(make_client_id()),
      watchdog_timeout_(std::max(Milliseconds(3), client.options().lock_watchdog_timeout)) {
  thread_ = std::thread([this] { run(); });
}

LockService::~LockService() {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    // The last handle may be dropped by an on_lost callback, on the watchdog thread itself.
    if (thread_.get_id() == std::this_thread::get_id())
      thread_.detach();
    else
      thread_.join();
  }
  std::lock_guard<std::mutex> guard(subscribe_mutex_);
  subscriber_.reset();
}

bool LockService::native_locks() {
  if (client_.options().lock_native_commands == LockNativeCommands::kOff) return false;
  int known = native_.load();
  if (known == kNativeUnknown) {
    // COMMAND INFO answers [nil] for a command the server does not have.
    const Reply reply = client_.command("COMMAND", "INFO", "lock.acquire");
    known = reply.is_aggregate() && reply.size() == 1 && !reply.elements()[0].is_null()
                ? kNativePresent
                : kNativeAbsent;
    native_.store(known);
  }
  return known == kNativePresent;
}

std::vector<Reply> LockService::native_acquire(const std::vector<std::string>& args,
                                               const std::vector<std::string>& then,
                                               std::optional<Milliseconds> wait) {
  std::unique_ptr<WaitConnection> waiting;
  {
    std::lock_guard<std::mutex> guard(wait_connections_mutex_);
    if (!idle_wait_connections_.empty()) {
      waiting = std::move(idle_wait_connections_.back());
      idle_wait_connections_.pop_back();
    }
  }
  if (!waiting) {
    waiting = std::make_unique<WaitConnection>(client_.options());
    waiting->connection.follow(client_.sentinel_epoch());
    waiting->connection.interrupt_on_switch();
  }
  // The round trip may last the server-side wait plus an ordinary command's time (no limit for
  // a wait without one, as a BLPOP 0 with command_timeout 0).
  const Milliseconds base = client_.options().command_timeout;
  waiting->options.command_timeout =
      !wait || base.count() == 0 ? Milliseconds(0) : base + std::max(Milliseconds(0), *wait);
  std::string encoded;
  encode_command(encoded, args);
  if (!then.empty()) encode_command(encoded, then);
  waiting->connection.ensure_connected();
  std::vector<RespValue> values = waiting->connection.round_trip(encoded, then.empty() ? 1 : 2);
  std::vector<Reply> replies;
  replies.reserve(values.size());
  for (RespValue& value : values) replies.push_back(to_reply(std::move(value)));
  {
    std::lock_guard<std::mutex> guard(wait_connections_mutex_);
    idle_wait_connections_.push_back(std::move(waiting));
  }
  return replies;
}

Reply LockService::eval(const LockState& state, const Script& script,
                        const std::vector<std::string>& keys,
                        const std::vector<std::string>& args) {
  int replicas;
  Milliseconds timeout;
  {
    std::lock_guard<std::mutex> guard(state.mutex);
    replicas = state.durable_replicas;
    timeout = state.durable_timeout;
    state.acked = -1;
  }
  if (replicas <= 0) return client_.eval_sha(script, keys, args);
  auto [reply, acked] = client_.eval_sha_and_wait(script, keys, args, replicas, timeout);
  std::lock_guard<std::mutex> guard(state.mutex);
  state.acked = acked;
  return std::move(reply);
}

Milliseconds LockService::request_memory() const {
  return std::max(Milliseconds(1000), client_.options().command_timeout * 2);
}

void LockService::hold(const std::shared_ptr<LockState>& state) {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    held_[state.get()] = state;
    changed_ = true;
  }
  cv_.notify_all();
}

void LockService::drop(LockState* state) {
  std::lock_guard<std::mutex> guard(mutex_);
  held_.erase(state);
}

void LockService::lose(const std::shared_ptr<LockState>& state, uint64_t epoch,
                       LockLostReason reason) {
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

LockService::Held LockService::holders(const std::string& name) {
  Held out;
  for (auto& item : snapshot()) {
    if (item.first->name == name) out.push_back(item);
  }
  return out;
}

void LockService::force_unlocked(const Held& holds) {
  for (auto& [state, epoch] : holds) lose(state, epoch, LockLostReason::kForceUnlocked);
}

std::shared_ptr<ChannelEntry> LockService::join_channel(const std::string& channel) {
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

void LockService::leave_channel(const std::string& channel) {
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

Subscriber& LockService::subscriber() {
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

LockService::Held LockService::snapshot() {
  std::vector<std::shared_ptr<LockState>> states;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    for (auto& [key, state] : held_) states.push_back(state);
  }
  Held out;
  for (auto& state : states) {
    std::lock_guard<std::mutex> guard(state->mutex);
    if (state->holds > 0) out.emplace_back(state, state->epoch);
  }
  return out;
}

void LockService::renew(const Held& held) {
  // One script per kind of lock, up to kRenewBatch locks per call; on a Redis Cluster one per
  // kind and slot, since a script's keys must share a slot.
  const bool cluster = !client_.options().cluster.addresses.empty();
  std::map<std::pair<const LockProtocol*, int>, Held> kept;
  for (const auto& item : held) {
    std::lock_guard<std::mutex> guard(item.first->mutex);
    if (!item.first->watchdog) continue;
    const int slot = cluster ? key_slot(item.first->name) : 0;
    kept[{item.first->protocol, slot}].push_back(item);
  }
  for (auto& [kind, items] : kept) {
    for (size_t start = 0; start < items.size(); start += kRenewBatch) {
      size_t end = std::min(items.size(), start + kRenewBatch);
      renew_batch(*kind.first, Held(items.begin() + start, items.begin() + end));
    }
  }
}

void LockService::renew_batch(const LockProtocol& protocol, const Held& batch) {
  std::vector<std::string> keys;
  std::vector<std::string> args{std::to_string(watchdog_timeout_.count())};
  // The batch waits for the most replicas any of its handles requires; each handle then
  // compares the answer with its own requirement.
  std::vector<int> required;
  int most = 0;
  Milliseconds timeout{0};
  for (const auto& item : batch) {
    keys.push_back(item.first->name);
    args.push_back(item.first->owner);
    std::lock_guard<std::mutex> guard(item.first->mutex);
    required.push_back(item.first->durable_replicas);
    most = std::max(most, item.first->durable_replicas);
    timeout = std::max(timeout, item.first->durable_timeout);
  }
  const Clock::time_point sent = Clock::now();
  std::vector<int64_t> results;
  int64_t acked = -1;
  try {
    Reply reply;
    if (most > 0) {
      std::tie(reply, acked) =
          client_.eval_sha_and_wait(protocol.renew_script(), keys, args, most, timeout);
    } else {
      reply = client_.eval_sha(protocol.renew_script(), keys, args);
    }
    for (const Reply& r : reply.elements()) results.push_back(r.integer());
  } catch (const std::exception&) {
    // The deadlines stay where they were: run() reports the loss when they pass.
    for (const auto& item : batch) {
      std::lock_guard<std::mutex> guard(item.first->mutex);
      item.first->renew_failed = true;
    }
    return;
  }
  for (size_t i = 0; i < batch.size() && i < results.size(); ++i) {
    const auto& [state, epoch] = batch[i];
    if (results[i] == 1) {
      std::lock_guard<std::mutex> guard(state->mutex);
      if (state->epoch != epoch || state->holds == 0) continue;
      if (required[i] > 0 && acked < required[i]) {
        // Renewed on the primary only: a failover would bring back the old deadline, so the
        // local one stays where it was, as after a renewal that did not reach the server.
        state->renew_failed = true;
      } else {
        state->deadline = sent + watchdog_timeout_;
        state->renew_failed = false;
      }
    } else {
      lose(state, epoch, LockLostReason::kNotOwner);
    }
  }
}

void LockService::run() {
  const Milliseconds interval = std::max(Milliseconds(1), watchdog_timeout_ / 3);
  Clock::time_point next_renew = Clock::now() + interval;
  for (;;) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (stop_) return;
      changed_ = false;
    }
    Held held = snapshot();
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
        deadline = state->deadline -
                   std::min(Milliseconds(100), std::max(Milliseconds(1), state->lease / 20));
        reason = state->watchdog ? LockLostReason::kRenewFailed : LockLostReason::kDeadlinePassed;
      }
      if (now >= deadline)
        lose(state, epoch, reason);
      else
        wake = std::min(wake, deadline);
    }
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait_until(lock, wake, [&] { return stop_ || changed_; });
  }
}

}  // namespace keywarden::detail
