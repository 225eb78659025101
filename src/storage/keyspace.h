// All databases of the server and the active expiry cycle that walks them.
//
// The active cycle takes due keys from the front of each database's expiry index until none
// is due or its CPU budget is spent. It runs in two forms, as Redis's does: a slow cycle from
// the server cron (`hz` times a second, up to 25% + 2% per extra `active-expire-effort` step of
// each tick) and a fast cycle before the event loop sleeps (about a millisecond), so that
// memory returns promptly without a single tick ever stalling clients. The clock is read every
// few deletions; deletions themselves are O(log n) in the index.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "common/clock.h"
#include "storage/database.h"
#include "storage/lazy_free.h"

namespace keywarden {

struct ExpiryStats {
  uint64_t expired_keys = 0;           // lazy + active
  uint64_t time_cap_reached_count = 0;  // active cycles that ran out of budget
  int64_t cycle_cpu_us = 0;            // time spent in active cycles
  double stale_percent = 0;            // running estimate of due keys left behind, in %
};

struct ExpirySettings {
  bool active_expire_enabled = true;  // DEBUG SET-ACTIVE-EXPIRE
  int effort = 1;                     // active-expire-effort, 1..10
};

class Keyspace final : public KeyspaceListener {
 public:
  explicit Keyspace(int database_count, const Clock& clock);

  int database_count() const { return static_cast<int>(databases_.size()); }
  Database& db(int index) { return *databases_[index]; }
  const Database& db(int index) const { return *databases_[index]; }

  // Changes how many databases there are; only before any key exists (start-up config).
  void set_database_count(int count);
  // SWAPDB: contents move, numbers stay.
  void swap(int first, int second);
  // Total keys in all databases.
  size_t total_keys() const;

  // The lazy-free thread every database of this keyspace hands its big values to.
  LazyFree& lazy_free() { return lazy_free_; }
  const LazyFree& lazy_free() const { return lazy_free_; }

  // Where expired and (later) evicted deletions are reported; may be null.
  void set_listener(KeyspaceListener* listener) { listener_ = listener; }

  enum class CycleKind { kSlow, kFast };
  // Runs one active expiry cycle. `hz` sizes the slow cycle's budget.
  void active_expire_cycle(CycleKind kind, int hz);
  // True when some database has a key due at `now_ms` (cheap: one look at each index front).
  bool has_due_keys(int64_t now_ms) const;

  ExpiryStats& expiry_stats() { return expiry_stats_; }
  ExpirySettings& expiry_settings() { return expiry_settings_; }
  std::mt19937_64& rng() { return rng_; }

  // The access clock (see access_clock in database.h) that entries added from now on start
  // with; the command layer sets it for each command from its time snapshot and policy.
  void set_new_entry_access_clock(uint32_t bits) { new_entry_access_clock_ = bits; }

  void key_expired(int db, std::string_view key) override;

 private:
  const Clock& clock_;
  // Declared before the databases so that it outlives them: their destructors may still hand
  // it work, and it drains and joins only after.
  LazyFree lazy_free_;
  std::vector<std::unique_ptr<Database>> databases_;
  KeyspaceListener* listener_ = nullptr;
  ExpiryStats expiry_stats_;
  ExpirySettings expiry_settings_;
  std::mt19937_64 rng_;
  uint32_t new_entry_access_clock_ = 0;
  int next_cycle_db_ = 0;
  int64_t last_fast_cycle_us_ = 0;
};

}  // namespace keywarden
