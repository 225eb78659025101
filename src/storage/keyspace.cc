#include "storage/keyspace.h"

#include <algorithm>

namespace keywarden {
namespace {
// A slice at active-expire-effort 1; each further step adds a quarter. Short enough that a
// request arriving during a slice waits well under a millisecond.
constexpr int64_t kSliceUs = 250;
constexpr int kDeletionsPerClockCheck = 32;
// How far the due-key count walks the index when a slice ran out of time.
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
    databases_.back()->set_expiry_held(expiry_held());
    databases_.back()->set_expired_visible(expired_visible_);
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

void Keyspace::hash_fields_expired(int db, std::string_view key,
                                   const std::vector<std::string>& fields, bool key_deleted) {
  expiry_stats_.expired_fields += fields.size();
  if (listener_ != nullptr) listener_->hash_fields_expired(db, key, fields, key_deleted);
}

bool Keyspace::has_due_keys(int64_t now_ms) const {
  for (const auto& db : databases_) {
    if (db->expiry_index().front_deadline() < now_ms) return true;
    if (db->field_expiry_index().front_deadline() < now_ms) return true;
  }
  return false;
}

int64_t Keyspace::slice_budget_us() const {
  const int effort = std::clamp(expiry_settings_.effort, 1, 10) - 1;
  return kSliceUs * (4 + effort) / 4;
}

void Keyspace::hold_expiry(ExpiryHold reason, bool held) {
  expiry_holds_ = held ? (expiry_holds_ | reason) : (expiry_holds_ & ~reason);
  for (auto& db : databases_) db->set_expiry_held(expiry_holds_ != 0);
}

void Keyspace::set_expired_visible(bool visible) {
  expired_visible_ = visible;
  for (auto& db : databases_) db->set_expired_visible(visible);
}

int64_t Keyspace::next_expiry_deadline_ms() const {
  if (!expiry_settings_.active_expire_enabled || expiry_held()) return INT64_MAX;
  int64_t earliest = INT64_MAX;
  for (const auto& db : databases_) {
    earliest = std::min(earliest, db->expiry_index().front_deadline());
    earliest = std::min(earliest, db->field_expiry_index().front_deadline());
  }
  return earliest;
}

bool Keyspace::active_expire_slice(int64_t budget_us) {
  if (!expiry_settings_.active_expire_enabled || expiry_held()) return false;
  const int64_t start_us = clock_.monotonic_us();
  if (budget_us <= 0) budget_us = slice_budget_us();
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
    ExpiryIndex& fields = db.field_expiry_index();
    while (!out_of_time && !fields.empty() && fields.front_deadline() < now_ms) {
      bool key_deleted = false;
      const size_t limit = static_cast<size_t>(kDeletionsPerClockCheck - deletions_since_check);
      deletions_since_check +=
          static_cast<int>(db.expire_fields(fields.front(), now_ms, limit, &key_deleted));
      if (deletions_since_check >= kDeletionsPerClockCheck) {
        deletions_since_check = 0;
        if (clock_.monotonic_us() - start_us >= budget_us) out_of_time = true;
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
  return out_of_time && has_due_keys(now_ms);
}

}  // namespace keywarden
