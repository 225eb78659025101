// maxmemory eviction through the dispatcher with a fake memory gauge: "used memory" is a fixed
// cost per key, so each test knows exactly when memory is over the limit and checks which keys
// each policy evicts, which stay, when -OOM comes, and what evictions leave behind (DEL
// propagation, `evicted` events, evicted_keys, WATCH). Replies are redis-server 7.0.15's.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "command_harness.h"
#include "commands/errors.h"
#include "commands/notifications.h"
#include "storage/lazy_free.h"

namespace keywarden {
namespace {

using testing::CommandHarness;
using testing::HarnessClient;

constexpr size_t kBytesPerKey = 100;
const std::string kOomReply = "-" + std::string(errors::kOom);

class EvictionTest : public ::testing::Test {
 protected:
  EvictionTest() {
    h.state.eviction().set_memory_gauge([this] {
      ++gauge_reads;
      return extra_memory + kBytesPerKey * h.state.keyspace().total_keys();
    });
  }
  // Memory allows `keys` keys: one more is over the limit.
  void limit_keys(size_t keys, int policy) {
    h.state.eviction().settings().maxmemory = static_cast<int64_t>(keys * kBytesPerKey);
    h.state.settings().maxmemory_policy = policy;
  }
  bool exists(const std::string& key) { return h.call("EXISTS " + key) == ":1"; }
  size_t keys() { return h.state.keyspace().total_keys(); }

  CommandHarness h;
  size_t extra_memory = 0;
  int gauge_reads = 0;
};

TEST_F(EvictionTest, NoLimitNeverReadsMemory) {
  h.state.settings().maxmemory_policy = kMaxmemoryAllKeysLru;
  for (int i = 0; i < 50; ++i) EXPECT_EQ(h.call("SET k" + std::to_string(i) + " v"), "+OK");
  EXPECT_EQ(gauge_reads, 0);
  EXPECT_EQ(keys(), 50u);
  EXPECT_EQ(h.state.eviction().evicted_keys(), 0u);
}

TEST_F(EvictionTest, NoevictionRefusesDenyoomCommandsOnly) {
  for (const char* key : {"a", "b", "c"}) h.call(std::string("SET ") + key + " 1");
  limit_keys(2, kMaxmemoryNoEviction);
  EXPECT_EQ(h.call("SET d 1"), kOomReply);
  EXPECT_EQ(h.call("INCR a"), kOomReply);  // denyoom even when the key exists
  EXPECT_EQ(h.call("GET a"), "\"1\"");
  EXPECT_EQ(h.call("EXPIRE a 100"), ":1");  // a write, but not denyoom
  EXPECT_EQ(keys(), 3u);
  EXPECT_EQ(h.call("DEL a"), ":1");
  EXPECT_EQ(h.call("SET d 1"), "+OK");  // 2 keys: at the limit, not over it
}

TEST_F(EvictionTest, AtTheLimitIsNotOver) {
  h.call("SET a 1");
  h.call("SET b 1");
  limit_keys(2, kMaxmemoryNoEviction);
  EXPECT_EQ(h.call("SET c 1"), "+OK");  // used == maxmemory: allowed (Redis: used > max)
  EXPECT_EQ(h.call("SET d 1"), kOomReply);
  EXPECT_EQ(h.state.settings().maxmemory_policy, kMaxmemoryNoEviction);
  EXPECT_EQ(h.state.eviction().evicted_keys(), 0u);
}

TEST_F(EvictionTest, AllkeysLruEvictsTheLongestIdle) {
  h.state.eviction().settings().samples = 64;  // sees every key: the choice is exact
  for (int i = 0; i < 10; ++i) {
    h.call("SET k" + std::to_string(i) + " v");
    h.advance_ms(1000);
  }
  h.call("GET k0");  // k0 and k1 become the most recently used
  h.call("GET k1");
  limit_keys(10, kMaxmemoryAllKeysLru);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(h.call("SET new" + std::to_string(i) + " v"), "+OK");
  // The first SET finds 10 keys (at the limit); each later command finds 11 and evicts the
  // longest idle: k2, k3, then (before the first EXISTS) k4. New keys are the freshest.
  EXPECT_TRUE(exists("k0"));
  EXPECT_TRUE(exists("k1"));
  EXPECT_FALSE(exists("k2"));
  EXPECT_FALSE(exists("k3"));
  EXPECT_FALSE(exists("k4"));
  EXPECT_TRUE(exists("k5"));
  EXPECT_EQ(h.state.eviction().evicted_keys(), 3u);
  EXPECT_EQ(keys(), 10u);
}

TEST_F(EvictionTest, AllkeysLruWithFewSamplesStillPrefersOldKeys) {
  // Default 5 samples per eviction, 1000 keys in two age groups: the pool keeps the best
  // candidates across evictions, so almost every victim is from the old half.
  for (int i = 0; i < 500; ++i) h.call("SET old" + std::to_string(i) + " v");
  h.advance_ms(100'000);
  for (int i = 0; i < 500; ++i) h.call("SET young" + std::to_string(i) + " v");
  h.advance_ms(1000);
  limit_keys(900, kMaxmemoryAllKeysLru);
  // The first command evicts down to 900 keys.
  EXPECT_EQ(h.call("PING"), "+PONG");
  EXPECT_EQ(keys(), 900u);
  int young_left = 0;
  for (int i = 0; i < 500; ++i) young_left += exists("young" + std::to_string(i)) ? 1 : 0;
  EXPECT_GE(young_left, 490);
}

TEST_F(EvictionTest, PoolRescoresKeysAccessedSinceTheyWereSampled) {
  h.state.eviction().settings().samples = 64;
  h.call("SET a v");
  h.advance_ms(5000);
  h.call("SET b v");
  h.call("SET c v");
  h.advance_ms(1000);
  limit_keys(2, kMaxmemoryAllKeysLru);
  EXPECT_EQ(h.call("PING"), "+PONG");  // evicts a, pools b and c
  EXPECT_FALSE(exists("a"));
  h.advance_ms(1000);
  h.call("GET b");  // b is now fresher than c
  h.advance_ms(1000);
  h.call("SET d v");  // 3 keys before: one goes, and it must be c, not the pooled b
  EXPECT_TRUE(exists("b"));
  EXPECT_FALSE(exists("c"));
}

TEST_F(EvictionTest, VolatileLruTouchesOnlyKeysWithTtl) {
  h.state.eviction().settings().samples = 64;
  h.call("SET p1 v");
  h.call("SET v1 v EX 1000");
  h.advance_ms(1000);
  h.call("SET p2 v");
  h.call("SET v2 v EX 1000");
  h.advance_ms(1000);
  limit_keys(3, kMaxmemoryVolatileLru);
  EXPECT_EQ(h.call("SET p3 v"), "+OK");  // evicts v1 (oldest volatile), p1 older but stays
  EXPECT_TRUE(exists("p1"));
  EXPECT_FALSE(exists("v1"));
  EXPECT_EQ(h.call("SET p4 v"), "+OK");  // evicts v2
  EXPECT_FALSE(exists("v2"));
  // No volatile key left: nothing can go.
  EXPECT_EQ(h.call("SET p5 v"), kOomReply);
  EXPECT_EQ(h.call("GET p1"), "\"v\"");
  EXPECT_EQ(keys(), 4u);
}

TEST_F(EvictionTest, VolatilePoliciesWithoutVolatileKeysGiveOom) {
  for (int policy : {kMaxmemoryVolatileLru, kMaxmemoryVolatileLfu, kMaxmemoryVolatileRandom,
                     kMaxmemoryVolatileTtl}) {
    h.call("FLUSHALL");
    h.call("SET a 1");
    h.call("SET b 1");
    limit_keys(1, policy);
    EXPECT_EQ(h.call("SET c 1"), kOomReply) << policy;
    EXPECT_EQ(keys(), 2u) << policy;
    h.state.eviction().settings().maxmemory = 0;
  }
  EXPECT_EQ(h.state.eviction().evicted_keys(), 0u);
}

TEST_F(EvictionTest, AllkeysLfuKeepsFrequentlyUsedKeys) {
  h.state.eviction().settings().samples = 64;
  h.state.settings().maxmemory_policy = kMaxmemoryAllKeysLfu;
  for (const char* key : {"a", "b", "c", "d", "e"}) h.call(std::string("SET ") + key + " 1");
  // The first access takes a new key's counter from 5 to 6 for certain.
  h.call("GET c");
  h.call("GET d");
  EXPECT_EQ(h.call("OBJECT FREQ c"), ":6");
  EXPECT_EQ(h.call("OBJECT FREQ a"), ":5");
  limit_keys(3, kMaxmemoryAllKeysLfu);
  EXPECT_EQ(h.call("PING"), "+PONG");  // 5 keys, 3 allowed: two of a, b, e go
  EXPECT_TRUE(exists("c"));
  EXPECT_TRUE(exists("d"));
  EXPECT_EQ(keys(), 3u);
  EXPECT_EQ(h.state.eviction().evicted_keys(), 2u);
}

TEST_F(EvictionTest, LfuCountersDecayWithIdleTime) {
  h.state.eviction().settings().samples = 64;
  h.state.settings().maxmemory_policy = kMaxmemoryAllKeysLfu;
  h.call("SET hot 1");
  for (int i = 0; i < 30; ++i) h.call("GET hot");  // well above the others
  h.call("SET cold 1");
  h.advance_ms(60 * 60'000);  // an hour idle: hot decays by 60 (lfu-decay-time 1) to 0
  h.call("SET fresh 1");      // 5
  limit_keys(2, kMaxmemoryAllKeysLfu);
  EXPECT_EQ(h.call("PING"), "+PONG");
  EXPECT_TRUE(exists("fresh"));
  EXPECT_EQ(keys(), 2u);
}

TEST_F(EvictionTest, VolatileLfuTouchesOnlyKeysWithTtl) {
  h.state.eviction().settings().samples = 64;
  h.state.settings().maxmemory_policy = kMaxmemoryVolatileLfu;
  h.call("SET p 1");
  h.call("SET v1 1 EX 100");
  h.call("SET v2 1 EX 100");
  h.call("GET v2");
  limit_keys(2, kMaxmemoryVolatileLfu);
  EXPECT_EQ(h.call("PING"), "+PONG");
  EXPECT_TRUE(exists("p"));
  EXPECT_FALSE(exists("v1"));
  EXPECT_TRUE(exists("v2"));
}

TEST_F(EvictionTest, AllkeysRandomEvictsAnyKeyUntilUnderTheLimit) {
  for (int i = 0; i < 100; ++i) h.call("SET k" + std::to_string(i) + " v");
  for (int i = 0; i < 100; ++i) h.call("SET v" + std::to_string(i) + " v EX 100");
  limit_keys(50, kMaxmemoryAllKeysRandom);
  EXPECT_EQ(h.call("SET x v"), "+OK");
  EXPECT_EQ(keys(), 51u);  // 150 evicted, then x added
  EXPECT_EQ(h.state.eviction().evicted_keys(), 150u);
}

TEST_F(EvictionTest, VolatileRandomEvictsOnlyKeysWithTtl) {
  for (int i = 0; i < 20; ++i) h.call("SET k" + std::to_string(i) + " v");
  for (int i = 0; i < 20; ++i) h.call("SET v" + std::to_string(i) + " v EX 100");
  limit_keys(25, kMaxmemoryVolatileRandom);
  EXPECT_EQ(h.call("PING"), "+PONG");
  EXPECT_EQ(keys(), 25u);
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(exists("k" + std::to_string(i)));
  limit_keys(10, kMaxmemoryVolatileRandom);
  EXPECT_EQ(h.call("SET y v"), kOomReply);  // the 5 volatile keys go, then nothing can
  EXPECT_EQ(keys(), 20u);
}

TEST_F(EvictionTest, VolatileTtlEvictsTheSoonestDeadlineAcrossDatabases) {
  h.call("SET a v EX 300");
  h.call("SET b v EX 100");
  h.call("SET p v");
  h.call("SELECT 3");
  h.call("SET c v EX 200");
  h.call("SET d v EX 50");
  h.call("SELECT 0");
  limit_keys(4, kMaxmemoryVolatileTtl);
  EXPECT_EQ(h.call("PING"), "+PONG");
  h.call("SELECT 3");
  EXPECT_FALSE(exists("d"));
  h.call("SELECT 0");
  limit_keys(2, kMaxmemoryVolatileTtl);
  EXPECT_EQ(h.call("PING"), "+PONG");  // then b (100) and c (200), a (300) stays
  EXPECT_FALSE(exists("b"));
  EXPECT_TRUE(exists("a"));
  EXPECT_TRUE(exists("p"));
  h.call("SELECT 3");
  EXPECT_FALSE(exists("c"));
}

TEST_F(EvictionTest, EvictionsPropagateAsDelBeforeTheCommand) {
  h.state.eviction().settings().samples = 64;
  h.call("SET a 1");
  h.advance_ms(2000);
  h.call("SET b 1");
  h.take_propagated();
  limit_keys(2, kMaxmemoryAllKeysLru);
  h.call("SET c 1");
  h.call("SET d 1");  // 3 keys: a goes, first
  EXPECT_EQ(h.take_propagated(), (std::vector<std::string>{"0:SET c 1", "0:DEL a", "0:SET d 1"}));
  EXPECT_EQ(h.dirty(), 4u);  // evictions do not count as changes (Redis does not either)
}

TEST_F(EvictionTest, LazyEvictionPropagatesUnlinkAndFreesBigValuesOnTheThread) {
  h.state.eviction().settings().samples = 64;
  LazyFree& lazy_free = h.state.keyspace().lazy_free();
  lazy_free.settings().lazy_eviction = true;
  std::string fields;
  for (int i = 0; i < 600; ++i) fields += " f" + std::to_string(i) + " v";
  h.call("HSET big" + fields);
  // Past hash-max-listpack-entries (512): a hashtable, worth the thread (> 64 allocations).
  ASSERT_EQ(h.call("OBJECT ENCODING big"), "\"hashtable\"");
  h.advance_ms(2000);
  h.call("SET b 1");
  h.take_propagated();
  limit_keys(2, kMaxmemoryAllKeysLru);
  h.call("SET c 1");
  h.call("SET d 1");  // 3 keys: big goes, first
  EXPECT_EQ(h.take_propagated(),
            (std::vector<std::string>{"0:SET c 1", "0:UNLINK big", "0:SET d 1"}));
  lazy_free.drain();
  EXPECT_EQ(lazy_free.freed_objects(), 1u);
}

TEST_F(EvictionTest, EvictionsFireEvictedEvents) {
  h.state.settings().notify_keyspace_events = kNotifyKeyevent | kNotifyKeyspace | kNotifyEvicted;
  h.state.eviction().settings().samples = 64;
  HarnessClient& listener = h.new_client();
  h.call_as(listener, "PSUBSCRIBE __key*__:*");
  h.replies_of(listener);
  h.call("SET a 1");
  h.advance_ms(2000);
  h.call("SET b 1");
  limit_keys(1, kMaxmemoryAllKeysLru);
  h.call("PING");
  EXPECT_EQ(h.replies_of(listener),
            "[\"pmessage\", \"__key*__:*\", \"__keyspace@0__:a\", \"evicted\"]; "
            "[\"pmessage\", \"__key*__:*\", \"__keyevent@0__:evicted\", \"a\"]");
}

TEST_F(EvictionTest, EvictionTouchesWatchedKeys) {
  h.state.eviction().settings().samples = 64;
  h.call("SET a 1");
  h.advance_ms(2000);
  h.call("SET b 1");
  h.call("WATCH a");
  h.call("MULTI");
  h.call("GET b");
  limit_keys(1, kMaxmemoryAllKeysLru);
  EXPECT_EQ(h.call("EXEC"), "(nil)");  // EXEC's own memory check evicted a
}

TEST_F(EvictionTest, MultiRefusesQueueingWhenOutOfMemory) {
  h.call("SET a 1");
  h.call("SET b 1");
  limit_keys(1, kMaxmemoryNoEviction);
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SET c 1"), kOomReply);
  EXPECT_EQ(h.call("GET a"), kOomReply);  // even reads: queueing itself takes memory
  EXPECT_EQ(h.call("EXEC"), "-EXECABORT Transaction discarded because of previous errors.");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("DISCARD"), "+OK");
}

TEST_F(EvictionTest, ExecRefusedWhenAQueuedCommandIsDenyoom) {
  h.call("SET a 1");
  limit_keys(1, kMaxmemoryNoEviction);
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SET b 1"), "+QUEUED");
  EXPECT_EQ(h.call("GET a"), "+QUEUED");
  extra_memory = 1000;  // memory grew meanwhile
  EXPECT_EQ(h.call("EXEC"),
            "-EXECABORT Transaction discarded because of: OOM command not allowed when used "
            "memory > 'maxmemory'.");
  EXPECT_EQ(h.call("EXEC"), "-ERR EXEC without MULTI");
  // Only reads queued: EXEC runs.
  extra_memory = 0;
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("GET a"), "+QUEUED");
  EXPECT_EQ(h.call("DEL a"), "+QUEUED");
  extra_memory = 1000;
  EXPECT_EQ(h.call("EXEC"), "[\"1\", :1]");
}

TEST_F(EvictionTest, TenacityBoundsTheTimeOfOneEviction) {
  EXPECT_EQ(Evictor::time_limit_us(0), 0u);
  EXPECT_EQ(Evictor::time_limit_us(10), 500u);
  EXPECT_EQ(Evictor::time_limit_us(11), 575u);
  EXPECT_GT(Evictor::time_limit_us(99), 100'000'000u);
  EXPECT_EQ(Evictor::time_limit_us(100), UINT64_MAX);

  for (int i = 0; i < 100; ++i) h.call("SET k" + std::to_string(i) + " v");
  // Tenacity 0: the time is checked every 16 evictions and the limit is always reached, so a
  // command evicts 16 keys and runs (not OOM); the cron does the rest.
  h.state.eviction().settings().tenacity = 0;
  limit_keys(10, kMaxmemoryAllKeysRandom);
  EXPECT_EQ(h.call("SET x v"), "+OK");
  EXPECT_EQ(keys(), 85u);
  EXPECT_TRUE(h.state.eviction().pending());
  h.state.eviction().run_pending();
  EXPECT_EQ(keys(), 69u);
  // Unlimited: one command goes all the way.
  h.state.eviction().settings().tenacity = 100;
  EXPECT_EQ(h.call("SET y v"), "+OK");
  EXPECT_EQ(keys(), 11u);
  EXPECT_FALSE(h.state.eviction().pending());
}

TEST_F(EvictionTest, ScheduledEvictionRunsWithoutACommand) {
  for (int i = 0; i < 20; ++i) h.call("SET k" + std::to_string(i) + " v");
  limit_keys(5, kMaxmemoryAllKeysRandom);
  h.state.eviction().schedule();  // what CONFIG SET maxmemory does
  EXPECT_TRUE(h.state.eviction().pending());
  h.state.eviction().run_pending();  // the cron
  EXPECT_EQ(keys(), 5u);
  EXPECT_FALSE(h.state.eviction().pending());
  h.state.eviction().settings().maxmemory = 0;
  h.state.eviction().schedule();
  EXPECT_FALSE(h.state.eviction().pending());
}

TEST_F(EvictionTest, ExceededTimeIsMeasuredWhileOverTheLimit) {
  h.call("SET a 1");
  h.call("SET b 1");
  limit_keys(1, kMaxmemoryNoEviction);
  EXPECT_EQ(h.call("SET c 1"), kOomReply);
  h.advance_ms(1500);
  EXPECT_EQ(h.state.eviction().current_exceeded_ms(), 1500);
  h.call("DEL a");  // the DEL's own check still sees 2 keys
  h.call("PING");   // under again: the period ends
  EXPECT_EQ(h.state.eviction().current_exceeded_ms(), 0);
  EXPECT_EQ(h.state.eviction().total_exceeded_ms(), 1500);
  h.state.eviction().reset_stats();
  EXPECT_EQ(h.state.eviction().total_exceeded_ms(), 0);
}

TEST_F(EvictionTest, ObjectIdletimeAndFreqFollowThePolicy) {
  h.call("SET a 1");
  h.state.settings().maxmemory_policy = kMaxmemoryAllKeysLfu;
  EXPECT_EQ(h.call("OBJECT IDLETIME a"),
            "-ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that "
            "when switching between policies at runtime LRU and LFU data will take some time to "
            "adjust.");
  h.state.settings().maxmemory_policy = kMaxmemoryVolatileLru;
  EXPECT_EQ(h.call("OBJECT FREQ a"),
            "-ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please "
            "note that when switching between policies at runtime LRU and LFU data will take "
            "some time to adjust.");
}

}  // namespace
}  // namespace keywarden
