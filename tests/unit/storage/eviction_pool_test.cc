// EvictionPool: which key each policy offers next, straight on a Keyspace (no command layer):
// volatile-ttl is exact across databases, volatile policies never offer a key without a TTL,
// LRU with enough samples offers keys in idle order, and the pool never holds more than 16.
#include "storage/eviction.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "common/clock.h"

namespace keywarden {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;

class EvictionPoolTest : public ::testing::Test {
 protected:
  EvictionPoolTest() : keyspace(4, clock) {}
  Entry* add(int db, const std::string& key, uint32_t access_clock, int64_t deadline = kNoExpiry) {
    Entry* entry = keyspace.db(db).add(key, Value::make_string("v"));
    entry->access_clock = access_clock;
    if (deadline != kNoExpiry) entry = keyspace.db(db).set_expiry(entry, deadline);
    return entry;
  }
  // Chooses and deletes, returning "db:key" (or "" when nothing qualifies).
  std::string evict(EvictionPolicy policy, int samples = 64) {
    EvictionVictim victim = pool.choose(keyspace, policy, samples, kNow, 1);
    if (victim.entry == nullptr) return "";
    std::string name = std::to_string(victim.db) + ":" + std::string(victim.entry->key());
    keyspace.db(victim.db).remove(victim.entry);
    return name;
  }

  ManualClock clock{kNow};
  Keyspace keyspace;
  EvictionPool pool;
};

TEST_F(EvictionPoolTest, VolatileTtlIsExactAcrossDatabases) {
  add(0, "late", 0, kNow + 3000);
  add(2, "soon", 0, kNow + 1000);
  add(1, "mid", 0, kNow + 2000);
  add(3, "forever", 0);
  const EvictionPolicy ttl{EvictionPolicy::Order::kTtl, true};
  EXPECT_EQ(evict(ttl), "2:soon");
  EXPECT_EQ(evict(ttl), "1:mid");
  EXPECT_EQ(evict(ttl), "0:late");
  EXPECT_EQ(evict(ttl), "");
}

TEST_F(EvictionPoolTest, LruOffersKeysInIdleOrder) {
  const uint32_t now = access_clock::lru_stamp(kNow);
  for (int i = 0; i < 40; ++i) add(i % 4, "k" + std::to_string(i), now - 100 + i);
  const EvictionPolicy lru{EvictionPolicy::Order::kLru, false};
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(evict(lru), std::to_string(i % 4) + ":k" + std::to_string(i));
    EXPECT_LE(pool.size(), EvictionPool::kSize);
  }
  EXPECT_EQ(evict(lru), "");
}

TEST_F(EvictionPoolTest, VolatilePoliciesOfferOnlyKeysWithTtl) {
  for (int i = 0; i < 30; ++i) add(i % 4, "p" + std::to_string(i), 0);
  for (int i = 0; i < 10; ++i) add(i % 4, "v" + std::to_string(i), 0, kNow + 1000);
  for (EvictionPolicy::Order order : {EvictionPolicy::Order::kLru, EvictionPolicy::Order::kLfu,
                                      EvictionPolicy::Order::kRandom}) {
    std::set<std::string> seen;
    for (std::string victim; !(victim = evict({order, true}, 3)).empty();) {
      EXPECT_NE(victim.find(":v"), std::string::npos) << victim;
      seen.insert(victim);
    }
    EXPECT_EQ(seen.size(), 10u);
    for (int i = 0; i < 10; ++i) add(i % 4, "v" + std::to_string(i), 0, kNow + 1000);
  }
}

TEST_F(EvictionPoolTest, PooledKeyThatLostItsTtlIsNotOfferedUnderAVolatilePolicy) {
  add(0, "a", 0, kNow + 1000);
  add(0, "b", access_clock::lru_stamp(kNow), kNow + 1000);
  add(0, "c", access_clock::lru_stamp(kNow), kNow + 1000);
  const EvictionPolicy lru{EvictionPolicy::Order::kLru, true};
  EXPECT_EQ(evict(lru), "0:a");  // b and c stay pooled
  Entry* b = keyspace.db(0).find_raw("b");
  b = keyspace.db(0).set_expiry(b, kNoExpiry);  // PERSIST b
  EXPECT_EQ(evict(lru), "0:c");
  EXPECT_EQ(evict(lru), "");
}

}  // namespace
}  // namespace keywarden
