// LazyFree: Redis's free-effort estimate per type and encoding, the threshold, the worker
// (values and whole flushed databases freed off the calling thread, the pending/freed
// counters, drain on stop and on destruction), and the Database paths that hand it work
// (lazy remove, overwrite, clear, expiry under lazy_expire). A probe aggregate records on
// which thread it is destroyed. Nothing here asserts on time.
#include "storage/lazy_free.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "common/clock.h"
#include "storage/keyspace.h"
#include "types/hash_value.h"
#include "types/list_value.h"
#include "types/set_value.h"
#include "types/zset_value.h"

namespace keywarden {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;

// A hash-table-encoded "set" of a chosen size that counts its destructions and remembers the
// thread of the last one. (A set, not a hash: the keyspace reads a hash's field deadlines, so a
// hash-typed value must really be a HashValue; sets and hashes share the free-effort rule.)
std::atomic<int> g_probes_destroyed{0};
std::atomic<std::thread::id> g_last_destroyer{};

class ProbeAggregate final : public Aggregate {
 public:
  explicit ProbeAggregate(size_t size) : size_(size) {}
  ~ProbeAggregate() override {
    g_last_destroyer.store(std::this_thread::get_id());
    g_probes_destroyed.fetch_add(1);
  }
  std::unique_ptr<Aggregate> clone() const override {
    return std::make_unique<ProbeAggregate>(size_);
  }
  Encoding encoding() const override { return Encoding::kHashTable; }
  size_t size() const override { return size_; }
  size_t payload_bytes() const override { return sizeof(*this); }

 private:
  size_t size_;
};

Value probe(size_t size) {
  return Value::make_aggregate(ValueType::kSet, std::make_unique<ProbeAggregate>(size));
}

Value hash_of(size_t fields) {
  auto hash = std::make_unique<HashValue>();
  for (size_t i = 0; i < fields; ++i) {
    hash->set("field:" + std::to_string(i), "v", HashLimits{});
  }
  return Value::make_aggregate(ValueType::kHash, std::move(hash));
}

Value set_of(size_t members, bool integers) {
  auto set = std::make_unique<SetValue>();
  for (size_t i = 0; i < members; ++i) {
    set->add(integers ? std::to_string(i) : "member:" + std::to_string(i), SetLimits{});
  }
  return Value::make_aggregate(ValueType::kSet, std::move(set));
}

Value zset_of(size_t members) {
  auto zset = std::make_unique<ZSetValue>();
  for (size_t i = 0; i < members; ++i) {
    zset->set("member:" + std::to_string(i), static_cast<double>(i), ZSetLimits{});
  }
  return Value::make_aggregate(ValueType::kZSet, std::move(zset));
}

// One entry per quicklist node with fill 1.
Value list_of(size_t elements, int64_t fill) {
  auto list = std::make_unique<ListValue>(fill);
  for (size_t i = 0; i < elements; ++i) list->push_back("element:" + std::to_string(i));
  return Value::make_aggregate(ValueType::kList, std::move(list));
}

class LazyFreeTest : public ::testing::Test {
 protected:
  void SetUp() override { g_probes_destroyed = 0; }
};

TEST(FreeEffortTest, StringsAreOneAllocationWhateverTheirSize) {
  EXPECT_EQ(free_effort(Value::make_int(42)), 1u);
  EXPECT_EQ(free_effort(Value::make_string("short")), 1u);
  EXPECT_EQ(free_effort(Value::make_raw(std::string(1 << 20, 'x'))), 1u);
}

TEST(FreeEffortTest, CompactEncodingsAreOneAllocation) {
  Value small_hash = hash_of(500);  // listpack up to 512 fields
  ASSERT_EQ(small_hash.encoding(), Encoding::kListpack);
  EXPECT_EQ(free_effort(small_hash), 1u);

  Value intset = set_of(500, /*integers=*/true);
  ASSERT_EQ(intset.encoding(), Encoding::kIntset);
  EXPECT_EQ(free_effort(intset), 1u);

  Value small_zset = zset_of(100);
  ASSERT_EQ(small_zset.encoding(), Encoding::kListpack);
  EXPECT_EQ(free_effort(small_zset), 1u);
}

TEST(FreeEffortTest, HashTablesAndSkiplistsCountTheirElements) {
  Value hash = hash_of(600);  // past hash-max-listpack-entries (512)
  ASSERT_EQ(hash.encoding(), Encoding::kHashTable);
  EXPECT_EQ(free_effort(hash), 600u);

  Value set = set_of(300, /*integers=*/false);
  ASSERT_EQ(set.encoding(), Encoding::kHashTable);
  EXPECT_EQ(free_effort(set), 300u);

  Value zset = zset_of(150);
  ASSERT_EQ(zset.encoding(), Encoding::kSkiplist);
  EXPECT_EQ(free_effort(zset), 150u);
}

TEST(FreeEffortTest, ListsCountQuicklistNodesNotElements) {
  Value one_per_node = list_of(70, /*fill=*/1);
  EXPECT_EQ(free_effort(one_per_node), 70u);
  Value packed = list_of(10'000, /*fill=*/-2);  // 8 KB nodes
  EXPECT_EQ(free_effort(packed), packed.as<ListValue>().node_count());
  EXPECT_LT(free_effort(packed), 10'000u);
}

TEST_F(LazyFreeTest, OnlyLazyValuesAboveTheThresholdGoToTheThread) {
  LazyFree lazy_free;
  EXPECT_FALSE(lazy_free.release(probe(1000), /*lazy=*/false));
  EXPECT_FALSE(lazy_free.release(probe(kLazyFreeThreshold), /*lazy=*/true));
  EXPECT_EQ(g_probes_destroyed, 2);  // both freed in place, before release returned
  EXPECT_TRUE(lazy_free.release(probe(kLazyFreeThreshold + 1), /*lazy=*/true));
  lazy_free.drain();
  EXPECT_EQ(g_probes_destroyed, 3);
  EXPECT_NE(g_last_destroyer.load(), std::this_thread::get_id());
  EXPECT_EQ(lazy_free.pending_objects(), 0u);
  EXPECT_EQ(lazy_free.freed_objects(), 1u);
}

TEST_F(LazyFreeTest, ResetStatsZeroesTheFreedCount) {
  LazyFree lazy_free;
  for (int i = 0; i < 3; ++i) lazy_free.release(probe(100), true);
  lazy_free.drain();
  EXPECT_EQ(lazy_free.freed_objects(), 3u);
  lazy_free.reset_stats();
  EXPECT_EQ(lazy_free.freed_objects(), 0u);
  EXPECT_EQ(lazy_free.pending_objects(), 0u);
}

TEST_F(LazyFreeTest, StopDrainsTheQueueThenJoinsAndARestartWorks) {
  LazyFree lazy_free;
  for (int i = 0; i < 200; ++i) lazy_free.release(probe(100), true);
  lazy_free.stop();
  EXPECT_EQ(g_probes_destroyed, 200);
  EXPECT_EQ(lazy_free.pending_objects(), 0u);
  EXPECT_EQ(lazy_free.freed_objects(), 200u);
  lazy_free.release(probe(100), true);
  lazy_free.drain();
  EXPECT_EQ(g_probes_destroyed, 201);
}

TEST_F(LazyFreeTest, DestructionFreesEverythingStillQueued) {
  {
    LazyFree lazy_free;
    for (int i = 0; i < 100; ++i) lazy_free.release(probe(1000), true);
  }
  EXPECT_EQ(g_probes_destroyed, 100);
}

TEST_F(LazyFreeTest, ReleasedEntriesAreFreedOnTheThreadAndCountedPerKey) {
  LazyFree lazy_free;
  Database db(0, nullptr);
  for (int i = 0; i < 1000; ++i) {
    Entry* entry = db.add("key:" + std::to_string(i), i % 10 == 0 ? probe(5) : Value::make_int(i));
    if (i % 3 == 0) entry = db.set_expiry(entry, kNow + i);
  }
  lazy_free.release_entries(std::move(db.table()), std::move(db.expiry_index()));
  lazy_free.drain();
  EXPECT_EQ(g_probes_destroyed, 100);
  EXPECT_EQ(lazy_free.freed_objects(), 1000u);
  EXPECT_EQ(lazy_free.pending_objects(), 0u);
}

class RecordingListener final : public KeyspaceListener {
 public:
  void key_expired(int, std::string_view key) override { expired.emplace_back(key); }
  std::vector<std::string> expired;
};

class KeyspaceLazyFreeTest : public LazyFreeTest {
 protected:
  ManualClock clock{kNow};
  Keyspace keyspace{16, clock};
  Database& db = keyspace.db(0);
  LazyFree& lazy_free = keyspace.lazy_free();
};

TEST_F(KeyspaceLazyFreeTest, RemoveHandsOffOnlyWhenAskedAndBigEnough) {
  db.remove(db.add("eager", probe(1000)), /*lazy=*/false);
  db.remove(db.add("small", probe(10)), /*lazy=*/true);
  EXPECT_EQ(g_probes_destroyed, 2);
  db.remove(db.add("big", probe(1000)), /*lazy=*/true);
  EXPECT_EQ(db.find_raw("big"), nullptr);  // gone from the keyspace at once
  lazy_free.drain();
  EXPECT_EQ(g_probes_destroyed, 3);
  EXPECT_EQ(lazy_free.freed_objects(), 1u);
}

TEST_F(KeyspaceLazyFreeTest, OverwriteReleasesTheOldValue) {
  Entry* entry = db.add("k", probe(1000));
  entry = db.overwrite(entry, probe(1000), /*keep_ttl=*/false, /*lazy=*/true);
  lazy_free.drain();
  EXPECT_EQ(lazy_free.freed_objects(), 1u);
  entry = db.overwrite(entry, Value::make_int(1), /*keep_ttl=*/false, /*lazy=*/false);
  EXPECT_EQ(g_probes_destroyed, 2);
  EXPECT_EQ(lazy_free.freed_objects(), 1u);
}

TEST_F(KeyspaceLazyFreeTest, LazyClearEmptiesAtOnceAndFreesEveryKeyOnTheThread) {
  for (int i = 0; i < 500; ++i) {
    Entry* entry = db.add("key:" + std::to_string(i), probe(1));
    entry = db.set_expiry(entry, kNow + 1000);
  }
  EXPECT_EQ(db.clear(/*lazy=*/true), 500u);
  EXPECT_EQ(db.size(), 0u);
  EXPECT_EQ(db.volatile_count(), 0u);
  EXPECT_EQ(db.find_raw("key:1"), nullptr);
  // The database is usable at once.
  Entry* fresh = db.add("key:1", Value::make_int(1));
  fresh = db.set_expiry(fresh, kNow + 5);
  EXPECT_EQ(db.volatile_count(), 1u);
  lazy_free.drain();
  EXPECT_EQ(g_probes_destroyed, 500);
  EXPECT_EQ(lazy_free.freed_objects(), 500u);
  // A synchronous clear and a lazy clear of an empty database hand nothing over.
  EXPECT_EQ(db.clear(/*lazy=*/false), 1u);
  EXPECT_EQ(db.clear(/*lazy=*/true), 0u);
  lazy_free.drain();
  EXPECT_EQ(lazy_free.freed_objects(), 500u);
}

TEST_F(KeyspaceLazyFreeTest, ExpiryFreesLazilyOnlyUnderLazyExpire) {
  RecordingListener listener;
  keyspace.set_listener(&listener);
  (void)db.set_expiry(db.add("a", probe(1000)), kNow + 10);
  (void)db.set_expiry(db.add("b", probe(1000)), kNow + 10);
  clock.advance_ms(11);
  EXPECT_EQ(db.lookup("a", clock.wall_ms()), nullptr);  // lazy expiry, freed in place
  EXPECT_EQ(g_probes_destroyed, 1);
  lazy_free.settings().lazy_expire = true;
  keyspace.active_expire_slice();
  EXPECT_EQ(db.size(), 0u);
  lazy_free.drain();
  EXPECT_EQ(g_probes_destroyed, 2);
  EXPECT_EQ(lazy_free.freed_objects(), 1u);
  EXPECT_EQ(listener.expired, (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace keywarden
