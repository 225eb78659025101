// All databases of the server and the active expiry that walks them.
//
// Active expiry takes due keys from the front of each database's expiry index, in slices: a
// slice deletes until nothing is due or its budget is spent (250 us at active-expire-effort 1,
// 25% more per step), reading the clock every few deletions. The event loop runs one slice
// before it sleeps, does not sleep while keys are still due, and otherwise sleeps no later
// than the earliest deadline (next_expiry_deadline_ms). So a key is reclaimed, and its
// `expired` event fired, about a millisecond after its deadline, a backlog of due keys is
// drained at full speed between client requests, and no slice stalls clients for longer than
// its budget. While clients are being served the server asks for short slices (a fifth of the
// budget, active_expire_slice(short_slice_budget_us())): a request that arrives during one waits
// for its end, so the slice length is what a client sees added to its latency under mass expiry,
// while the loop's turn between two slices costs only an epoll_wait. Deletions themselves are
// O(log n) in the index.
//
// Hash fields with deadlines ride the same slices: after a database's due keys, the slice takes
// due hashes from the front of its field index and deletes their due fields, kDeletionsPerClock
// at a time, so a hash of a million fields expiring together is drained across slices like a
// million keys would be.
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
  uint64_t expired_fields = 0;         // hash fields, lazy + active (INFO expired_subkeys)
  uint64_t time_cap_reached_count = 0;  // active slices that ran out of budget
  int64_t cycle_cpu_us = 0;            // time spent in active slices
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

  // Runs one slice of active expiry; true when keys are still due after it (the caller
  // should run another soon). Does nothing while active expiry is disabled.
  // `budget_us`: the slice's time budget, 0 for slice_budget_us().
  bool active_expire_slice(int64_t budget_us = 0);
  // A slice's budget at the effort in force.
  int64_t slice_budget_us() const;
  // The budget of a slice run while clients are being served.
  int64_t short_slice_budget_us() const { return slice_budget_us() / 5; }
  // The earliest deadline of any volatile key, for the event loop's wake-up; INT64_MAX when
  // there is none or active expiry is disabled.
  int64_t next_expiry_deadline_ms() const;
  // True when some database has a key due at `now_ms` (cheap: one look at each index front).
  bool has_due_keys(int64_t now_ms) const;

  // Deletions by expiry are held while any reason holds them: lookups hide expired keys
  // without deleting them, and active expiry does not run (see Database). CLIENT PAUSE holds
  // them while a pause is in force; a replica holds them for as long as it is one (only its
  // primary's DEL removes a key, which keeps the two identical).
  enum ExpiryHold : uint8_t { kHoldForPause = 1, kHoldForReplica = 2 };
  void hold_expiry(ExpiryHold reason, bool held);
  bool expiry_held() const { return expiry_holds_ != 0; }
  // While set, lookups return keys whose deadline has passed as if alive: the commands of a
  // replica's primary run so (Redis's expireIfNeeded answers "not expired" for the master
  // client), because the primary decides when they go and says so with a DEL.
  void set_expired_visible(bool visible);

  ExpiryStats& expiry_stats() { return expiry_stats_; }
  ExpirySettings& expiry_settings() { return expiry_settings_; }
  std::mt19937_64& rng() { return rng_; }

  // The access clock (see access_clock in database.h) that entries added from now on start
  // with; the command layer sets it for each command from its time snapshot and policy.
  void set_new_entry_access_clock(uint32_t bits) { new_entry_access_clock_ = bits; }

  void key_expired(int db, std::string_view key) override;
  void hash_fields_expired(int db, std::string_view key, const std::vector<std::string>& fields,
                           bool key_deleted) override;

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
  uint8_t expiry_holds_ = 0;  // ExpiryHold bits
  bool expired_visible_ = false;
  int next_cycle_db_ = 0;
};

}  // namespace keywarden
