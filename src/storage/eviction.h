// Choosing which key maxmemory eviction removes next: the approximated LRU and LFU of Redis
// (a pool of the best candidates kept across calls and databases), random choice, and the
// nearest deadline. This unit only chooses; the command layer deletes, propagates and counts.
//
// Redis samples `maxmemory-samples` keys per database on every eviction and merges them into a
// pool of its 16 best candidates, so a good candidate seen once is not forgotten. We do the
// same, with two refinements that make the choice at least as accurate for the same cost:
// before each choice the pool's members are looked up again and rescored (a key accessed since
// it entered the pool would otherwise be evicted on a stale idle time, and a key that lost its
// TTL would be evicted under a volatile policy), and volatile keys are sampled uniformly from
// the expiry index's array rather than from a run of hash buckets. volatile-ttl needs no
// sampling at all: each database's expiry index is a min-heap, so the soonest deadline of every
// database is at hand and the choice is exact.
//
// Invariant: pool_ is sorted by score, ascending; the best victim is at the back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/keyspace.h"

namespace keywarden {

struct EvictionPolicy {
  enum class Order : uint8_t { kLru, kLfu, kRandom, kTtl };
  Order order = Order::kLru;
  bool volatile_only = false;  // volatile-*: only keys with a deadline are candidates
};

struct EvictionVictim {
  Entry* entry = nullptr;  // nullptr: nothing can be evicted
  int db = 0;
};

class EvictionPool {
 public:
  static constexpr size_t kSize = 16;  // Redis's EVPOOL_SIZE

  // The next key to evict under `policy`, or a null entry when no key qualifies.
  // `samples` is maxmemory-samples; `lfu_decay_minutes` is lfu-decay-time.
  EvictionVictim choose(Keyspace& keyspace, EvictionPolicy policy, int samples, int64_t now_ms,
                        int64_t lfu_decay_minutes);
  // Forgets every candidate (policy change, FLUSHALL…). Stale candidates are harmless (each is
  // looked up again before use) but keep their key bytes.
  void clear() { pool_.clear(); }
  size_t size() const { return pool_.size(); }

 private:
  struct Candidate {
    uint64_t score;  // higher is a better victim: idle ms (LRU) or 255 - counter (LFU)
    int db;
    std::string key;
  };

  uint64_t score_of(const Entry* entry, EvictionPolicy policy, int64_t now_ms,
                    int64_t lfu_decay_minutes) const;
  void rescore(Keyspace& keyspace, EvictionPolicy policy, int64_t now_ms, int64_t decay);
  void offer(uint64_t score, int db, std::string_view key);
  EvictionVictim choose_random(Keyspace& keyspace, bool volatile_only);
  static EvictionVictim choose_soonest_deadline(Keyspace& keyspace);

  std::vector<Candidate> pool_;
  std::vector<Entry*> sample_;
  int next_random_db_ = 0;
};

}  // namespace keywarden
