#include "storage/keyspace.h"

#include <algorithm>

namespace keywarden {
namespace {
// Budget figures follow Redis so that operators' intuitions about `hz` and
// `active-expire-effort` carry over.
constexpr int64_t kSlowCyclePercent = 25;
constexpr int64_t kFastCycleUs = 1000;
constexpr int kDeletionsPerClockCheck = 32;
// How far the due-key count walks the index when a cycle ran out of time.
constexpr int64_t kStaleCountLimit = 1000;
}  // namespace

Keyspace::Keyspace(int database_count, const Clock& clock)
    : clock_(clock), rng_(std::random_device{}()) {
  set_database_count(database_count);
}

void Keyspace::set_database_count(int count) {
  databases_.clear();
  for (int i = 0; i < count; ++i) {
    databases_.push_back(
        std::make_unique<Database>(i, this, &new_entry_access_clock_, &lazy_free_));
  }
  next_cycle_db_ = 0;
}

void Keyspace::swap(int first, int second) {
  if (first == second) return;
  databases_[first]->swap_contents(*databases_[second]);
}

size_t Keyspace::total_keys() const {
  size_t total = 0;
  for (const auto& db : databases_) total += db->size();
  return total;
}

void Keyspace::key_expired(int db, std::string_view key) {
  ++expiry_stats_.expired_keys;
  if (listener_ != nullptr) listener_->key_expired(db, key);
}

bool Keyspace::has_due_keys(int64_t now_ms) const {
  for (const auto& db : databases_) {
    if (db->expiry_index().front_deadline() < now_ms) return true;
  }
  return false;
}

void Keyspace::active_expire_cycle(CycleKind kind, int hz) {
  if (!expiry_settings_.active_expire_enabled) return;
  const int64_t start_us = clock_.monotonic_us();
  const int effort = std::clamp(expiry_settings_.effort, 1, 10) - 1;
  int64_t budget_us;
  if (kind == CycleKind::kFast) {
    const int64_t fast_us = kFastCycleUs + kFastCycleUs / 4 * effort;
    // Like Redis, no fast cycle more often than every other fast-cycle length.
    if (start_us < last_fast_cycle_us_ + 2 * fast_us) return;
    last_fast_cycle_us_ = start_us;
    budget_us = fast_us;
  } else {
    budget_us = (kSlowCyclePercent + 2 * effort) * 1'000'000 / std::max(hz, 1) / 100;
  }

  const int64_t now_ms = clock_.wall_ms();
  bool out_of_time = false;
  int deletions_since_check = 0;
  const int count = database_count();
  for (int visited = 0; visited < count && !out_of_time; ++visited) {
    Database& db = *databases_[next_cycle_db_];
    ExpiryIndex& index = db.expiry_index();
    while (!index.empty() && index.front_deadline() < now_ms) {
      db.expire(index.front());
      if (++deletions_since_check == kDeletionsPerClockCheck) {
        deletions_since_check = 0;
        if (clock_.monotonic_us() - start_us >= budget_us) {
          out_of_time = true;
          break;
        }
      }
    }
    // Move on even when out of time, as Redis does, so one database's mass expiry cannot
    // keep the others' due keys waiting.
    next_cycle_db_ = (next_cycle_db_ + 1) % count;
  }

  double stale = 0;
  if (out_of_time) {
    ++expiry_stats_.time_cap_reached_count;
    size_t volatile_keys = 0;
    int64_t due = 0;
    for (const auto& db : databases_) {
      volatile_keys += db->volatile_count();
      due += db->expiry_index().count_due(now_ms, kStaleCountLimit);
    }
    if (volatile_keys > 0) stale = 100.0 * static_cast<double>(due) / volatile_keys;
  }
  expiry_stats_.stale_percent = expiry_stats_.stale_percent * 0.95 + stale * 0.05;
  expiry_stats_.cycle_cpu_us += clock_.monotonic_us() - start_us;
}

}  // namespace keywarden
