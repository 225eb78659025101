#include "storage/eviction.h"

#include <algorithm>
#include <span>

namespace keywarden {

uint64_t EvictionPool::score_of(const Entry* entry, EvictionPolicy policy, int64_t now_ms,
                                int64_t lfu_decay_minutes) const {
  if (policy.order == EvictionPolicy::Order::kLfu) {
    return 255 - access_clock::lfu_decayed_count(entry->access_clock, now_ms, lfu_decay_minutes);
  }
  return static_cast<uint64_t>(access_clock::lru_idle_ms(entry->access_clock, now_ms));
}

void EvictionPool::rescore(Keyspace& keyspace, EvictionPolicy policy, int64_t now_ms,
                           int64_t decay) {
  size_t kept = 0;
  for (Candidate& candidate : pool_) {
    if (candidate.db >= keyspace.database_count()) continue;
    const Entry* entry = keyspace.db(candidate.db).find_raw(candidate.key);
    if (entry == nullptr || (policy.volatile_only && !entry->has_expiry())) continue;
    candidate.score = score_of(entry, policy, now_ms, decay);
    if (&pool_[kept] != &candidate) pool_[kept] = std::move(candidate);
    ++kept;
  }
  pool_.resize(kept);
  std::stable_sort(pool_.begin(), pool_.end(),
                   [](const Candidate& a, const Candidate& b) { return a.score < b.score; });
}

void EvictionPool::offer(uint64_t score, int db, std::string_view key) {
  if (pool_.size() == kSize && score <= pool_.front().score) return;
  for (const Candidate& candidate : pool_) {
    if (candidate.db == db && candidate.key == key) return;  // sampled again
  }
  auto at = std::upper_bound(pool_.begin(), pool_.end(), score,
                             [](uint64_t value, const Candidate& c) { return value < c.score; });
  if (pool_.size() == kSize) {
    // Full: the worst candidate (the front) makes room; everything before `at` shifts left.
    std::move(pool_.begin() + 1, at, pool_.begin());
    --at;
    at->score = score;
    at->db = db;
    at->key.assign(key);
    return;
  }
  pool_.insert(at, Candidate{score, db, std::string(key)});
}

EvictionVictim EvictionPool::choose_random(Keyspace& keyspace, bool volatile_only) {
  const int count = keyspace.database_count();
  for (int tried = 0; tried < count; ++tried) {
    const int index = next_random_db_++ % count;
    next_random_db_ %= count;
    Database& db = keyspace.db(index);
    const size_t size = volatile_only ? db.volatile_count() : db.size();
    if (size == 0) continue;
    Entry* entry = volatile_only ? db.expiry_index().at(keyspace.rng()() % size)
                                 : db.random_entry(keyspace.rng());
    if (entry != nullptr) return {entry, index};
  }
  return {};
}

EvictionVictim EvictionPool::choose_soonest_deadline(Keyspace& keyspace) {
  EvictionVictim best;
  int64_t best_deadline = INT64_MAX;
  for (int i = 0; i < keyspace.database_count(); ++i) {
    const ExpiryIndex& index = keyspace.db(i).expiry_index();
    if (index.empty() || index.front_deadline() >= best_deadline) continue;
    best_deadline = index.front_deadline();
    best = {index.front(), i};
  }
  return best;
}

EvictionVictim EvictionPool::choose(Keyspace& keyspace, EvictionPolicy policy, int samples,
                                    int64_t now_ms, int64_t lfu_decay_minutes) {
  switch (policy.order) {
    case EvictionPolicy::Order::kRandom:
      return choose_random(keyspace, policy.volatile_only);
    case EvictionPolicy::Order::kTtl:
      return choose_soonest_deadline(keyspace);
    case EvictionPolicy::Order::kLru:
    case EvictionPolicy::Order::kLfu:
      break;
  }
  samples = std::max(samples, 1);
  rescore(keyspace, policy, now_ms, lfu_decay_minutes);
  bool any = false;
  for (int i = 0; i < keyspace.database_count(); ++i) {
    Database& db = keyspace.db(i);
    const size_t size = policy.volatile_only ? db.volatile_count() : db.size();
    if (size == 0) continue;
    any = true;
    sample_.resize(static_cast<size_t>(samples));
    size_t taken;
    if (policy.volatile_only) {
      // Every volatile key when there are no more than the samples asked for, otherwise
      // uniform draws (a repeat is ignored by offer()).
      const ExpiryIndex& index = db.expiry_index();
      taken = std::min(sample_.size(), size);
      for (size_t k = 0; k < taken; ++k) {
        sample_[k] = index.at(size <= sample_.size() ? k : keyspace.rng()() % size);
      }
    } else {
      taken = db.table().sample(std::span<Entry*>(sample_), keyspace.rng());
    }
    for (size_t k = 0; k < taken; ++k) {
      offer(score_of(sample_[k], policy, now_ms, lfu_decay_minutes), i, sample_[k]->key());
    }
  }
  if (!any) return {};
  while (!pool_.empty()) {
    Candidate best = std::move(pool_.back());
    pool_.pop_back();
    Entry* entry = keyspace.db(best.db).find_raw(best.key);
    if (entry != nullptr && (!policy.volatile_only || entry->has_expiry())) {
      return {entry, best.db};
    }
  }
  return {};
}

}  // namespace keywarden
