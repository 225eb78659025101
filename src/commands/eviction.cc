#include "commands/eviction.h"

#include <cmath>
#include <string>
#include <vector>

#include "commands/client_session.h"
#include "commands/server_state.h"

namespace keywarden {

namespace {

EvictionPolicy policy_from(int policy) {
  using Order = EvictionPolicy::Order;
  switch (policy) {
    case kMaxmemoryVolatileLru: return {Order::kLru, true};
    case kMaxmemoryVolatileLfu: return {Order::kLfu, true};
    case kMaxmemoryVolatileRandom: return {Order::kRandom, true};
    case kMaxmemoryVolatileTtl: return {Order::kTtl, true};
    case kMaxmemoryAllKeysLfu: return {Order::kLfu, false};
    case kMaxmemoryAllKeysRandom: return {Order::kRandom, false};
    default: return {Order::kLru, false};
  }
}

// The time is read once per this many evictions, as Redis does.
constexpr uint64_t kKeysPerTimeCheck = 16;

}  // namespace

uint64_t Evictor::time_limit_us(int64_t tenacity) {
  // Redis's curve: linear up to 500 us at 10, then 15% more per step, no limit at 100.
  if (tenacity <= 10) return 50 * static_cast<uint64_t>(std::max<int64_t>(tenacity, 0));
  if (tenacity < 100) return static_cast<uint64_t>(500.0 * std::pow(1.15, tenacity - 10.0));
  return UINT64_MAX;
}

Evictor::Result Evictor::perform() {
  // CLIENT PAUSE keeps the dataset still: no eviction, and no refusal either (Redis 7.0 skips
  // the whole check as if memory were under the limit). So does a replica under
  // replica-ignore-maxmemory: it is an exact copy of its primary, which evicts for both.
  if (state_.client_pause().active()) return Result::kOk;
  const ReplicationRole& role = state_.replication();
  if (role.replica && role.ignore_maxmemory) return Result::kOk;
  Result result = Result::kOk;
  const int64_t maxmemory = settings_.maxmemory;
  if (maxmemory <= 0 || counted_memory() <= static_cast<size_t>(maxmemory)) {
    pending_ = false;
    update_exceeded_time(result);
    return result;
  }
  const CommandSettings& command_settings = state_.settings();
  if (command_settings.maxmemory_policy == kMaxmemoryNoEviction) {
    pending_ = false;
    update_exceeded_time(Result::kFail);
    return Result::kFail;
  }
  const EvictionPolicy policy = policy_from(command_settings.maxmemory_policy);
  const Clock& clock = state_.clock();
  const int64_t start_us = clock.monotonic_us();
  const uint64_t limit_us = time_limit_us(settings_.tenacity);
  Keyspace& keyspace = state_.keyspace();
  uint64_t freed = 0;
  result = Result::kFail;
  while (true) {
    const int64_t now_ms = clock.wall_ms();
    EvictionVictim victim =
        pool_.choose(keyspace, policy, static_cast<int>(settings_.samples), now_ms,
                     command_settings.lfu_decay_time);
    if (victim.entry == nullptr) break;  // nothing can go: fail
    key_copy_.assign(victim.entry->key());
    Database& db = keyspace.db(victim.db);
    // Under lazyfree-lazy-eviction the value goes to the lazy-free thread, and replicas are
    // told UNLINK, as Redis does.
    const bool lazy = keyspace.lazy_free().settings().lazy_eviction;
    db.remove(victim.entry, lazy);
    ++evicted_keys_;
    ++freed;
    state_.key_evicted(victim.db, key_copy_, lazy);
    if (counted_memory() <= static_cast<size_t>(maxmemory)) {
      result = Result::kOk;
      break;
    }
    if (freed % kKeysPerTimeCheck == 0 &&
        static_cast<uint64_t>(clock.monotonic_us() - start_us) >= limit_us) {
      result = Result::kRunning;  // the cron continues
      break;
    }
  }
  // Each eviction's DEL leaves before the command that caused it, never inside its batch.
  if (freed > 0) state_.propagator().flush();
  pending_ = result == Result::kRunning;
  update_exceeded_time(result);
  return result;
}

void Evictor::update_exceeded_time(Result result) {
  const int64_t now_us = state_.clock().monotonic_us();
  if (result != Result::kOk) {
    if (exceeded_since_us_ == 0) exceeded_since_us_ = std::max<int64_t>(now_us, 1);
  } else if (exceeded_since_us_ != 0) {
    exceeded_total_us_ += now_us - exceeded_since_us_;
    exceeded_since_us_ = 0;
  }
}

int64_t Evictor::current_exceeded_ms() const {
  if (exceeded_since_us_ == 0) return 0;
  return (state_.clock().monotonic_us() - exceeded_since_us_) / 1000;
}

int64_t Evictor::total_exceeded_ms() const {
  int64_t total = exceeded_total_us_;
  if (exceeded_since_us_ != 0) total += state_.clock().monotonic_us() - exceeded_since_us_;
  return total / 1000;
}

void Evictor::reset_stats() {
  evicted_keys_ = 0;
  exceeded_total_us_ = 0;
  exceeded_since_us_ = 0;
}

bool Evictor::denies_oom(const Command& command, std::span<const std::string_view> args,
                         ClientSession& session) const {
  if (command.has(kExecutesQueue)) {
    // Queueing kept what each command would have needed; EXEC is refused when any queued
    // command is denyoom (Redis ORs the queued commands' flags).
    for (const QueuedCommand& queued : session.transaction.queue()) {
      if (denies_oom(*queued.command, queued.views(), session)) return true;
    }
    return false;
  }
  if (script_rule_) {
    const int rule = script_rule_(command, args);
    if (rule >= 0) return rule == 1;
  }
  return command.has(kDenyOom);
}

}  // namespace keywarden
