// Database and Keyspace: lazy expiry at the exact boundary, the expiry index kept in step with
// every TTL change, move/swap/clear, and the active expiry cycle (slow and fast forms, its CPU
// budget, DEBUG SET-ACTIVE-EXPIRE, its statistics). Time is driven by clocks the test owns:
// ManualClock for the boundaries, and TickingClock, whose monotonic time advances on every read,
// so that the cycle's budget check trips after a known number of deletions. Nothing here
// asserts on wall time.
#include "storage/database.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "storage/keyspace.h"

namespace keywarden {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;

class RecordingListener final : public KeyspaceListener {
 public:
  void key_expired(int db, std::string_view key) override { expired.emplace_back(db, key); }
  std::vector<std::pair<int, std::string>> expired;
};

// Counts only: the mass-expiry test does not want a million strings kept.
class CountingListener final : public KeyspaceListener {
 public:
  void key_expired(int, std::string_view) override { ++count; }
  uint64_t count = 0;
};

// A clock whose monotonic time moves forward by `tick_us` on every read (wall time moves only
// when told), standing in for the CPU time an active cycle spends.
class TickingClock final : public Clock {
 public:
  explicit TickingClock(int64_t tick_us) : tick_us_(tick_us) {}
  int64_t wall_ms() const override { return wall_us_ / 1000; }
  int64_t wall_us() const override { return wall_us_; }
  int64_t monotonic_us() const override {
    ++reads_;
    monotonic_us_ += tick_us_;
    return monotonic_us_;
  }
  void advance_ms(int64_t ms) {
    wall_us_ += ms * 1000;
    monotonic_us_ += ms * 1000;
  }
  void advance_monotonic_us(int64_t us) { monotonic_us_ += us; }
  void set_tick_us(int64_t us) { tick_us_ = us; }
  int64_t reads() const { return reads_; }

 private:
  int64_t tick_us_;
  int64_t wall_us_ = kNow * 1000;
  mutable int64_t monotonic_us_ = 1'000'000;
  mutable int64_t reads_ = 0;
};

Value string_value(std::string_view text) { return Value::make_string(text); }

// The database's index agrees with its entries: every volatile entry is indexed at the slot it
// records, every other entry is not.
void expect_index_consistent(Database& db) {
  size_t volatile_entries = 0;
  std::set<uint32_t> slots;
  db.for_each([&](const Entry* entry) {
    if (entry->has_expiry()) {
      ++volatile_entries;
      EXPECT_NE(entry->expiry_slot(), kNotInExpiryIndex) << entry->key();
      EXPECT_LT(entry->expiry_slot(), db.expiry_index().size()) << entry->key();
      EXPECT_TRUE(slots.insert(entry->expiry_slot()).second) << entry->key();
      EXPECT_EQ(db.expiry_index().at(entry->expiry_slot()), entry) << entry->key();
      EXPECT_EQ(db.expiry_index().deadline_of(entry), entry->deadline()) << entry->key();
    }
    return true;
  });
  EXPECT_EQ(volatile_entries, db.volatile_count());
  EXPECT_EQ(db.expiry_index().size(), db.volatile_count());
  __int128 sum = 0;
  db.for_each([&](const Entry* entry) {
    if (entry->has_expiry()) sum += db.deadline_of(entry);
    return true;
  });
  EXPECT_TRUE(db.expiry_index().deadline_sum() == sum);
  if (volatile_entries > 0) {
    const Entry* front = db.expiry_index().front();
    EXPECT_EQ(db.deadline_of(front), db.expiry_index().front_deadline());
    db.for_each([&](const Entry* entry) {
      if (entry->has_expiry()) {
        EXPECT_GE(db.deadline_of(entry), db.deadline_of(front));
      }
      return true;
    });
  }
}

std::set<std::string> keys_of(const Database& db) {
  std::set<std::string> keys;
  db.for_each([&](const Entry* entry) {
    keys.emplace(entry->key());
    return true;
  });
  return keys;
}

// ----------------------------------------------------------------------------------------------
// Database
// ----------------------------------------------------------------------------------------------

TEST(DatabaseTest, AddFindLookupRemove) {
  RecordingListener listener;
  Database db(0, &listener);
  EXPECT_EQ(db.index(), 0);
  EXPECT_EQ(db.lookup("a", kNow), nullptr);
  Entry* a = db.add("a", string_value("1"));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->key(), "a");
  EXPECT_FALSE(a->has_expiry());
  EXPECT_EQ(db.size(), 1u);
  EXPECT_EQ(db.lookup("a", kNow), a);
  EXPECT_EQ(db.find_raw("a"), a);
  EXPECT_TRUE(db.remove("a"));
  EXPECT_FALSE(db.remove("a"));
  EXPECT_EQ(db.size(), 0u);
  EXPECT_TRUE(listener.expired.empty());  // removals by command are not expirations
}

TEST(DatabaseTest, NewEntriesTakeTheCurrentAccessClock) {
  RecordingListener listener;
  uint32_t stamp = 1234;
  Database db(0, &listener, &stamp);
  EXPECT_EQ(db.add("a", string_value("1"))->access_clock, 1234u);
  stamp = 99;
  EXPECT_EQ(db.add("b", string_value("1"))->access_clock, 99u);
  Database plain(1, &listener);
  EXPECT_EQ(plain.add("a", string_value("1"))->access_clock, 0u);
}

// Keys shorter than Entry::kLongKey keep their length in the entry's spare byte; longer ones
// carry it ahead of the key bytes. Both read back intact, across the boundary, and survive a
// rename to the other form.
TEST(DatabaseTest, ShortAndLongKeysReadBack) {
  RecordingListener listener;
  Database db(0, &listener);
  std::vector<std::string> keys;
  for (size_t length : {size_t{0}, size_t{1}, size_t{16}, size_t{126}, size_t{127}, size_t{128},
                        size_t{254}, size_t{255}, size_t{256},
                        size_t{70000}}) {
    std::string key(length, 'k');
    for (size_t i = 0; i < length; ++i) key[i] = static_cast<char>('a' + (i * 7 + length) % 26);
    keys.push_back(key);
    Entry* entry = db.add(key, string_value("v"));
    EXPECT_EQ(entry->key(), key) << length;
    const size_t fields_and_key = Entry::kFieldBytes + length + (length >= Entry::kLongKey ? 4 : 0);
    EXPECT_EQ(Entry::allocation_bytes(length, false), std::max(fields_and_key, sizeof(Entry)));
    EXPECT_EQ(Entry::allocation_bytes(length, true), 16 + std::max(fields_and_key, sizeof(Entry)));
  }
  for (const std::string& key : keys) EXPECT_NE(db.find_raw(key), nullptr) << key.size();
  Entry* longest = db.find_raw(keys.back());
  Entry* renamed = db.move_entry(longest, db, "short");
  EXPECT_EQ(renamed->key(), "short");
  Entry* grown = db.move_entry(db.find_raw(keys[1]), db, std::string(300, 'z'));
  EXPECT_EQ(grown->key(), std::string(300, 'z'));
  EXPECT_EQ(db.size(), keys.size());
}

TEST(DatabaseTest, LazyExpiryAtTheExactDeadline) {
  RecordingListener listener;
  Database db(4, &listener);
  Entry* entry = db.add("k", string_value("v"));
  entry = db.set_expiry(entry, kNow);
  // Due exactly now: still alive, as in Redis (expired only when now > deadline).
  EXPECT_FALSE(db.is_expired(entry, kNow));
  EXPECT_EQ(db.lookup("k", kNow), entry);
  EXPECT_EQ(db.lookup("k", kNow - 1000), entry);
  EXPECT_TRUE(listener.expired.empty());
  // One millisecond later it is gone, and the listener hears about it once.
  EXPECT_TRUE(db.is_expired(entry, kNow + 1));
  EXPECT_EQ(db.lookup("k", kNow + 1), nullptr);
  ASSERT_EQ(listener.expired.size(), 1u);
  EXPECT_EQ(listener.expired[0], std::make_pair(4, std::string("k")));
  EXPECT_EQ(db.size(), 0u);
  EXPECT_EQ(db.volatile_count(), 0u);
  EXPECT_EQ(db.find_raw("k"), nullptr);
  EXPECT_EQ(db.lookup("k", kNow + 2), nullptr);
  EXPECT_EQ(listener.expired.size(), 1u);
  EXPECT_TRUE(db.expiry_index().empty());
}

TEST(DatabaseTest, FindRawSeesExpiredEntriesWithoutDeletingThem) {
  RecordingListener listener;
  Database db(0, &listener);
  Entry* entry = db.add("k", string_value("v"));
  entry = db.set_expiry(entry, kNow - 10);
  EXPECT_EQ(db.find_raw("k"), entry);
  EXPECT_EQ(db.size(), 1u);
  EXPECT_TRUE(listener.expired.empty());
  db.expire(entry);
  EXPECT_EQ(db.size(), 0u);
  ASSERT_EQ(listener.expired.size(), 1u);
  EXPECT_EQ(listener.expired[0].second, "k");
}

TEST(DatabaseTest, HeldExpiryHidesExpiredKeysWithoutDeletingThem) {
  // CLIENT PAUSE: an expired key reads as missing but stays; a write of the same key deletes
  // it first (as expired), and releasing the hold lets lookups delete again.
  RecordingListener listener;
  Database db(0, &listener);
  db.set_expiry_held(true);
  Entry* entry = db.add("k", string_value("v"));
  entry = db.set_expiry(entry, kNow - 10);
  Entry* other = db.add("other", string_value("v"));
  other = db.set_expiry(other, kNow - 10);
  EXPECT_EQ(db.lookup("k", kNow), nullptr);
  db.expire(entry);
  EXPECT_EQ(db.size(), 2u);
  EXPECT_EQ(db.find_raw("k"), entry);
  EXPECT_TRUE(listener.expired.empty());
  Entry* fresh = db.add("k", string_value("new"));
  ASSERT_EQ(listener.expired.size(), 1u);
  EXPECT_EQ(listener.expired[0].second, "k");
  EXPECT_EQ(db.lookup("k", kNow), fresh);
  EXPECT_EQ(db.size(), 2u);
  db.set_expiry_held(false);
  EXPECT_EQ(db.lookup("other", kNow), nullptr);
  EXPECT_EQ(db.size(), 1u);
  EXPECT_EQ(listener.expired.size(), 2u);
}

TEST(KeyspaceTest, ExpiryStaysHeldWhileAnyReasonHoldsIt) {
  // A replica holds expiry for as long as it is one; a CLIENT PAUSE ending meanwhile must not
  // release it.
  ManualClock clock(kNow);
  Keyspace keyspace(1, clock);
  Entry* entry = keyspace.db(0).add("k", string_value("v"));
  entry = keyspace.db(0).set_expiry(entry, kNow - 10);
  keyspace.hold_expiry(Keyspace::kHoldForReplica, true);
  keyspace.hold_expiry(Keyspace::kHoldForPause, true);
  keyspace.hold_expiry(Keyspace::kHoldForPause, false);
  EXPECT_TRUE(keyspace.expiry_held());
  EXPECT_EQ(keyspace.db(0).lookup("k", kNow), nullptr);
  EXPECT_EQ(keyspace.db(0).size(), 1u);
  // The primary's commands see it as alive.
  keyspace.set_expired_visible(true);
  EXPECT_EQ(keyspace.db(0).lookup("k", kNow), entry);
  keyspace.set_expired_visible(false);
  keyspace.hold_expiry(Keyspace::kHoldForReplica, false);
  EXPECT_FALSE(keyspace.expiry_held());
  EXPECT_EQ(keyspace.db(0).lookup("k", kNow), nullptr);
  EXPECT_EQ(keyspace.db(0).size(), 0u);
}

TEST(KeyspaceTest, HeldExpiryStopsTheActiveCycle) {
  ManualClock clock(kNow);
  Keyspace keyspace(2, clock);
  Entry* entry = keyspace.db(1).add("k", string_value("v"));
  entry = keyspace.db(1).set_expiry(entry, kNow - 10);
  keyspace.hold_expiry(Keyspace::kHoldForPause, true);
  EXPECT_TRUE(keyspace.db(1).expiry_held());
  EXPECT_EQ(keyspace.next_expiry_deadline_ms(), INT64_MAX);
  EXPECT_FALSE(keyspace.active_expire_slice());
  EXPECT_EQ(keyspace.db(1).size(), 1u);
  keyspace.hold_expiry(Keyspace::kHoldForPause, false);
  keyspace.active_expire_slice();
  EXPECT_EQ(keyspace.db(1).size(), 0u);
}

TEST(DatabaseTest, ExpiryWithoutListener) {
  Database db(0, nullptr);
  Entry* entry = db.add("k", string_value("v"));
  entry = db.set_expiry(entry, kNow);
  EXPECT_EQ(db.lookup("k", kNow + 1), nullptr);
  EXPECT_EQ(db.size(), 0u);
}

TEST(DatabaseTest, SetExpiryAndPersistKeepTheIndexConsistent) {
  RecordingListener listener;
  Database db(0, &listener);
  std::vector<Entry*> entries;
  for (int i = 0; i < 50; ++i) {
    entries.push_back(db.add("k" + std::to_string(i), string_value("v")));
  }
  for (int i = 0; i < 50; i += 2) entries[i] = db.set_expiry(entries[i], kNow + 1000 - i);
  EXPECT_EQ(db.volatile_count(), 25u);
  expect_index_consistent(db);
  EXPECT_EQ(db.expiry_index().front(), entries[48]);

  // New TTLs, earlier and later.
  entries[0] = db.set_expiry(entries[0], kNow + 1);
  entries[48] = db.set_expiry(entries[48], kNow + 5000);
  EXPECT_EQ(db.expiry_index().front(), entries[0]);
  EXPECT_EQ(db.volatile_count(), 25u);
  expect_index_consistent(db);

  // PERSIST.
  entries[0] = db.set_expiry(entries[0], kNoExpiry);
  EXPECT_FALSE(entries[0]->has_expiry());
  EXPECT_EQ(db.volatile_count(), 24u);
  expect_index_consistent(db);
  // PERSIST of a key without TTL changes nothing.
  entries[1] = db.set_expiry(entries[1], kNoExpiry);
  EXPECT_EQ(db.volatile_count(), 24u);
  expect_index_consistent(db);

  // Overwrite: SET drops the TTL, SET KEEPTTL keeps it.
  entries[2] = db.overwrite(entries[2], string_value("new"), /*keep_ttl=*/true);
  EXPECT_EQ(db.deadline_of(entries[2]), kNow + 998);
  entries[4] = db.overwrite(entries[4], string_value("new"), /*keep_ttl=*/false);
  EXPECT_FALSE(entries[4]->has_expiry());
  EXPECT_EQ(db.volatile_count(), 23u);
  expect_index_consistent(db);

  // DEL of volatile and persistent keys.
  EXPECT_TRUE(db.remove("k6"));
  db.remove(entries[7]);
  EXPECT_EQ(db.volatile_count(), 22u);
  EXPECT_EQ(db.size(), 48u);
  expect_index_consistent(db);
  EXPECT_TRUE(listener.expired.empty());
}

// A key without a TTL has no volatile prefix: giving it one, and taking it away, moves the
// entry to a new allocation of the other shape, relinked everywhere; the caller gets the new
// address and the old one is freed (ASan builds catch a caller that keeps it).
TEST(DatabaseTest, SetExpiryMovesTheEntryBetweenShapes) {
  RecordingListener listener;
  uint32_t stamp = 77;
  Database db(0, &listener, &stamp);
  // The layout the memory figures rest on: an 11-byte key takes 31 bytes without a TTL (the
  // allocator's 32-byte class) and 47 with one (48).
  EXPECT_EQ(Entry::allocation_bytes(11, false), 31u);
  EXPECT_EQ(Entry::allocation_bytes(11, true), 47u);
  std::vector<std::string> keys;
  for (int i = 0; i < 200; ++i) keys.push_back("key:" + std::to_string(1000000 + i));
  for (const std::string& key : keys) db.add(key, string_value("value-" + key));
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < keys.size(); ++i) {
      Entry* entry = db.find_raw(keys[i]);
      ASSERT_NE(entry, nullptr);
      const bool give = (i + round) % 2 == 0;
      Entry* after = db.set_expiry(entry, give ? kNow + 1000 + static_cast<int64_t>(i) : kNoExpiry);
      EXPECT_EQ(db.find_raw(keys[i]), after);
      EXPECT_EQ(after->has_expiry(), give);
      EXPECT_EQ(after->key(), keys[i]);
      EXPECT_EQ(after->access_clock, 77u);
      char scratch[kInt64BufferSize];
      EXPECT_EQ(after->value.string_view(scratch), "value-" + keys[i]);
      if (give) EXPECT_EQ(db.deadline_of(after), kNow + 1000 + static_cast<int64_t>(i));
      // A second deadline on a volatile key stays in place.
      if (give) EXPECT_EQ(db.set_expiry(after, kNow + 5000), after);
    }
    expect_index_consistent(db);
  }
  // A hash with a volatile field is in the field index by its entry: that link follows too.
  Entry* hash = db.add("h", Value::make_hash());
  HashLimits limits;
  hash->value.as<HashValue>().set("f", "v", limits);
  hash->value.as<HashValue>().set_field_deadline("f", kNow + 50);
  db.refresh_field_expiry(hash);
  ASSERT_EQ(db.field_expiry_index().front(), hash);
  hash = db.set_expiry(hash, kNow + 100);
  EXPECT_EQ(db.field_expiry_index().front(), hash);
  EXPECT_EQ(db.field_expiry_index().deadline_of(hash), kNow + 50);
  hash = db.set_expiry(hash, kNoExpiry);
  EXPECT_EQ(db.field_expiry_index().front(), hash);
  EXPECT_NE(db.lookup("h", kNow + 10), nullptr);
  EXPECT_EQ(db.lookup("h", kNow + 60), nullptr);  // its only field expired, and the key with it
  EXPECT_EQ(db.size(), keys.size());
}

TEST(DatabaseTest, MoveEntryKeepsTheDeadline) {
  RecordingListener listener;
  uint32_t stamp = 11;
  Database source(0, &listener, &stamp);
  Database target(5, &listener);
  Entry* volatile_entry = source.add("v", string_value("1"));
  volatile_entry = source.set_expiry(volatile_entry, kNow + 100);
  Entry* persistent = source.add("p", string_value("2"));
  Entry* other = source.add("o", string_value("3"));
  other = source.set_expiry(other, kNow + 50);

  Entry* moved = source.move_entry(volatile_entry, target, "moved");  // MOVE, cross-db RENAME
  EXPECT_EQ(source.find_raw("v"), nullptr);
  EXPECT_EQ(target.find_raw("moved"), moved);
  EXPECT_EQ(moved->key(), "moved");
  EXPECT_EQ(target.deadline_of(moved), kNow + 100);
  EXPECT_EQ(moved->access_clock, 11u);
  char scratch[kInt64BufferSize];
  EXPECT_EQ(moved->value.string_view(scratch), "1");
  EXPECT_EQ(source.volatile_count(), 1u);
  EXPECT_EQ(target.volatile_count(), 1u);
  EXPECT_EQ(target.expiry_index().front(), moved);
  expect_index_consistent(source);
  expect_index_consistent(target);

  Entry* moved_persistent = source.move_entry(persistent, target, "p2");
  EXPECT_FALSE(moved_persistent->has_expiry());
  EXPECT_EQ(target.volatile_count(), 1u);
  EXPECT_EQ(target.size(), 2u);

  // RENAME within one database, to a longer key.
  Entry* renamed = source.move_entry(other, source, "a-much-longer-name-than-before");
  EXPECT_EQ(source.find_raw("o"), nullptr);
  EXPECT_EQ(source.find_raw("a-much-longer-name-than-before"), renamed);
  EXPECT_EQ(source.deadline_of(renamed), kNow + 50);
  EXPECT_EQ(source.volatile_count(), 1u);
  EXPECT_EQ(source.expiry_index().front(), renamed);
  expect_index_consistent(source);

  // The moved key expires in its new database, reported under the new name and number.
  EXPECT_EQ(target.lookup("moved", kNow + 101), nullptr);
  ASSERT_EQ(listener.expired.size(), 1u);
  EXPECT_EQ(listener.expired[0], std::make_pair(5, std::string("moved")));
  EXPECT_EQ(target.volatile_count(), 0u);
}

TEST(DatabaseTest, SwapContentsKeepsIndexNumbers) {
  RecordingListener listener;
  Database first(0, &listener);
  Database second(1, &listener);
  (void)first.set_expiry(first.add("a", string_value("1")), kNow + 10);
  first.add("b", string_value("2"));
  (void)second.set_expiry(second.add("c", string_value("3")), kNow + 20);
  (void)second.set_expiry(second.add("d", string_value("4")), kNow + 30);

  first.swap_contents(second);
  EXPECT_EQ(first.index(), 0);
  EXPECT_EQ(second.index(), 1);
  EXPECT_EQ(keys_of(first), (std::set<std::string>{"c", "d"}));
  EXPECT_EQ(keys_of(second), (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(first.volatile_count(), 2u);
  EXPECT_EQ(second.volatile_count(), 1u);
  expect_index_consistent(first);
  expect_index_consistent(second);

  // Expiry after the swap is reported with the database's own number.
  EXPECT_EQ(first.lookup("c", kNow + 21), nullptr);
  EXPECT_EQ(second.lookup("a", kNow + 21), nullptr);
  ASSERT_EQ(listener.expired.size(), 2u);
  EXPECT_EQ(listener.expired[0], std::make_pair(0, std::string("c")));
  EXPECT_EQ(listener.expired[1], std::make_pair(1, std::string("a")));
  expect_index_consistent(first);
  expect_index_consistent(second);
}

TEST(DatabaseTest, ClearRemovesEverythingAndTheDatabaseIsReusable) {
  RecordingListener listener;
  Database db(0, &listener);
  for (int i = 0; i < 1000; ++i) {
    Entry* entry = db.add("k" + std::to_string(i), string_value("value"));
    if (i % 3 == 0) entry = db.set_expiry(entry, kNow + i);
  }
  EXPECT_EQ(db.clear(), 1000u);
  EXPECT_EQ(db.size(), 0u);
  EXPECT_EQ(db.volatile_count(), 0u);
  EXPECT_TRUE(db.expiry_index().empty());
  EXPECT_TRUE(db.expiry_index().deadline_sum() == 0);
  EXPECT_EQ(db.lookup("k0", kNow), nullptr);
  EXPECT_TRUE(listener.expired.empty());  // FLUSHDB is not expiry
  EXPECT_EQ(db.clear(), 0u);

  Entry* again = db.add("k0", string_value("v"));
  again = db.set_expiry(again, kNow + 5);
  EXPECT_EQ(db.volatile_count(), 1u);
  expect_index_consistent(db);
}

TEST(DatabaseTest, ScanAndRandomEntry) {
  RecordingListener listener;
  Database db(0, &listener);
  std::mt19937_64 rng(1);
  EXPECT_EQ(db.random_entry(rng), nullptr);
  for (int i = 0; i < 300; ++i) db.add("k" + std::to_string(i), string_value("v"));
  std::set<std::string> seen;
  uint64_t cursor = 0;
  do {
    cursor = db.scan(cursor, [&](Entry* entry) { seen.emplace(entry->key()); });
  } while (cursor != 0);
  EXPECT_EQ(seen, keys_of(db));
  for (int i = 0; i < 20; ++i) {
    Entry* entry = db.random_entry(rng);
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(db.find_raw(entry->key()), entry);
  }
}

// ----------------------------------------------------------------------------------------------
// Keyspace
// ----------------------------------------------------------------------------------------------

TEST(KeyspaceTest, DatabasesAndSwap) {
  ManualClock clock(kNow);
  Keyspace keyspace(16, clock);
  EXPECT_EQ(keyspace.database_count(), 16);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(keyspace.db(i).index(), i);
  keyspace.db(0).add("a", string_value("1"));
  keyspace.db(3).add("b", string_value("1"));
  keyspace.db(3).add("c", string_value("1"));
  EXPECT_EQ(keyspace.total_keys(), 3u);
  keyspace.swap(0, 3);
  EXPECT_EQ(keyspace.db(0).size(), 2u);
  EXPECT_EQ(keyspace.db(3).size(), 1u);
  EXPECT_EQ(keyspace.db(0).index(), 0);
  keyspace.swap(2, 2);
  EXPECT_EQ(keyspace.total_keys(), 3u);

  keyspace.db(0).clear();
  keyspace.db(3).clear();
  keyspace.set_database_count(4);
  EXPECT_EQ(keyspace.database_count(), 4);
  EXPECT_EQ(keyspace.total_keys(), 0u);
}

TEST(KeyspaceTest, NewEntriesGetTheKeyspaceAccessClock) {
  ManualClock clock(kNow);
  Keyspace keyspace(2, clock);
  keyspace.set_new_entry_access_clock(777);
  EXPECT_EQ(keyspace.db(1).add("a", string_value("1"))->access_clock, 777u);
}

TEST(KeyspaceTest, LazyExpiryIsCountedAndForwarded) {
  ManualClock clock(kNow);
  Keyspace keyspace(4, clock);
  RecordingListener listener;
  keyspace.set_listener(&listener);
  Database& db = keyspace.db(2);
  (void)db.set_expiry(db.add("k", string_value("v")), kNow + 10);
  EXPECT_NE(db.lookup("k", kNow + 10), nullptr);
  EXPECT_EQ(keyspace.expiry_stats().expired_keys, 0u);
  EXPECT_EQ(db.lookup("k", kNow + 11), nullptr);
  EXPECT_EQ(keyspace.expiry_stats().expired_keys, 1u);
  ASSERT_EQ(listener.expired.size(), 1u);
  EXPECT_EQ(listener.expired[0], std::make_pair(2, std::string("k")));
}

// Keys around `now` in several databases: due ones (before now), one due exactly now, future
// ones and persistent ones.
struct Population {
  std::map<int, std::set<std::string>> due;
  std::map<int, std::set<std::string>> surviving;
};

Population populate(Keyspace& keyspace, int64_t now, const std::vector<int>& databases) {
  Population population;
  for (int index : databases) {
    Database& db = keyspace.db(index);
    for (int i = 0; i < 200; ++i) {
      std::string key = "due:" + std::to_string(i);
      (void)db.set_expiry(db.add(key, string_value("v")), now - 1 - i * 7);
      population.due[index].insert(key);
    }
    for (int i = 0; i < 100; ++i) {
      std::string key = "later:" + std::to_string(i);
      (void)db.set_expiry(db.add(key, string_value("v")), now + 1 + i);
      population.surviving[index].insert(key);
      key = "plain:" + std::to_string(i);
      db.add(key, string_value("v"));
      population.surviving[index].insert(key);
    }
    (void)db.set_expiry(db.add("exactly-now", string_value("v")), now);
    population.surviving[index].insert("exactly-now");
  }
  return population;
}

TEST(KeyspaceTest, SliceRemovesEveryDueKeyAcrossDatabasesAndNoneEarly) {
  ManualClock clock(kNow);
  Keyspace keyspace(16, clock);
  RecordingListener listener;
  keyspace.set_listener(&listener);
  Population population = populate(keyspace, kNow, {0, 3, 15});
  EXPECT_TRUE(keyspace.has_due_keys(kNow));
  EXPECT_FALSE(keyspace.has_due_keys(kNow - 1400));

  // The manual clock does not move during the slice, so the budget is never spent.
  EXPECT_FALSE(keyspace.active_expire_slice());

  for (int index : {0, 3, 15}) {
    EXPECT_EQ(keys_of(keyspace.db(index)), population.surviving[index]) << "db " << index;
    expect_index_consistent(keyspace.db(index));
  }
  EXPECT_FALSE(keyspace.has_due_keys(kNow));
  EXPECT_EQ(listener.expired.size(), 600u);
  std::map<int, std::set<std::string>> reported;
  for (const auto& [db, key] : listener.expired) {
    EXPECT_TRUE(reported[db].insert(key).second) << "reported twice: " << db << " " << key;
  }
  EXPECT_EQ(reported, population.due);
  EXPECT_EQ(keyspace.expiry_stats().expired_keys, 600u);
  EXPECT_EQ(keyspace.expiry_stats().time_cap_reached_count, 0u);
  EXPECT_EQ(keyspace.expiry_stats().stale_percent, 0.0);

  // Another slice at the same time finds nothing; one millisecond later "exactly-now" goes.
  keyspace.active_expire_slice();
  EXPECT_EQ(listener.expired.size(), 600u);
  clock.advance_ms(1);
  keyspace.active_expire_slice();
  EXPECT_EQ(listener.expired.size(), 603u);
  for (int index : {0, 3, 15}) EXPECT_EQ(keyspace.db(index).find_raw("exactly-now"), nullptr);
  EXPECT_EQ(keyspace.total_keys(), 3u * 200u);
}

TEST(KeyspaceTest, DisabledActiveExpireRemovesNothing) {
  ManualClock clock(kNow);
  Keyspace keyspace(4, clock);
  RecordingListener listener;
  keyspace.set_listener(&listener);
  populate(keyspace, kNow, {0, 1});
  const size_t before = keyspace.total_keys();
  keyspace.expiry_settings().active_expire_enabled = false;  // DEBUG SET-ACTIVE-EXPIRE 0
  EXPECT_FALSE(keyspace.active_expire_slice());
  clock.advance_ms(10'000);
  EXPECT_FALSE(keyspace.active_expire_slice());
  EXPECT_EQ(keyspace.total_keys(), before);
  // Nothing for the event loop to wake up for either.
  EXPECT_EQ(keyspace.next_expiry_deadline_ms(), INT64_MAX);
  EXPECT_TRUE(listener.expired.empty());
  EXPECT_EQ(keyspace.expiry_stats().expired_keys, 0u);
  // Lazy expiry still works.
  EXPECT_EQ(keyspace.db(0).lookup("due:0", clock.wall_ms()), nullptr);
  EXPECT_EQ(listener.expired.size(), 1u);
  // Enabled again, the next slice reclaims the rest.
  keyspace.expiry_settings().active_expire_enabled = true;
  keyspace.active_expire_slice();
  EXPECT_EQ(keyspace.total_keys(), 2u * 100u);  // only the persistent keys remain
}

TEST(KeyspaceTest, NextExpiryDeadlineIsTheEarliestOfAllDatabases) {
  ManualClock clock(kNow);
  Keyspace keyspace(3, clock);
  EXPECT_EQ(keyspace.next_expiry_deadline_ms(), INT64_MAX);
  Database& later = keyspace.db(0);
  Database& sooner = keyspace.db(2);
  (void)later.set_expiry(later.add("later", string_value("v")), kNow + 500);
  EXPECT_EQ(keyspace.next_expiry_deadline_ms(), kNow + 500);
  Entry* entry = sooner.add("sooner", string_value("v"));
  entry = sooner.set_expiry(entry, kNow + 20);
  EXPECT_EQ(keyspace.next_expiry_deadline_ms(), kNow + 20);
  // Due only once its deadline has passed: a slice at the deadline keeps it.
  clock.advance_ms(20);
  EXPECT_FALSE(keyspace.active_expire_slice());
  EXPECT_NE(sooner.find_raw("sooner"), nullptr);
  clock.advance_ms(1);
  EXPECT_FALSE(keyspace.active_expire_slice());
  EXPECT_EQ(sooner.find_raw("sooner"), nullptr);
  EXPECT_EQ(keyspace.next_expiry_deadline_ms(), kNow + 500);
  // PERSIST leaves nothing to wake up for.
  (void)later.set_expiry(later.find_raw("later"), kNoExpiry);
  EXPECT_EQ(keyspace.next_expiry_deadline_ms(), INT64_MAX);
}

// Adds `count` keys to `db`, all due at `deadline`.
void add_volatile_keys(Database& db, int count, int64_t deadline, const std::string& prefix) {
  db.table().reserve(db.size() + count);
  for (int i = 0; i < count; ++i) {
    (void)db.set_expiry(db.add(prefix + std::to_string(i), Value::make_int(i)), deadline);
  }
}

// How many deletions a slice makes before its budget check trips: the clock is checked every
// 32 deletions, and each read moves it by `tick_us`.
int64_t deletions_per_slice(int64_t budget_us, int64_t tick_us) {
  return 32 * ((budget_us + tick_us - 1) / tick_us);
}

TEST(KeyspaceTest, SliceBudgetScalesWithEffort) {
  // 250 us at effort 1, 25% more per step.
  const std::pair<int, int64_t> cases[] = {{1, 250}, {5, 500}, {10, 812}};
  for (const auto& [effort, budget_us] : cases) {
    TickingClock clock(10);
    Keyspace keyspace(1, clock);
    keyspace.expiry_settings().effort = effort;
    EXPECT_EQ(keyspace.slice_budget_us(), budget_us);
    const int64_t expected = deletions_per_slice(budget_us, 10);
    add_volatile_keys(keyspace.db(0), static_cast<int>(expected) + 500, kNow - 1, "k");
    EXPECT_TRUE(keyspace.active_expire_slice()) << "keys are left: another slice is wanted";
    EXPECT_EQ(keyspace.expiry_stats().expired_keys, static_cast<uint64_t>(expected))
        << "effort " << effort;
    EXPECT_EQ(keyspace.expiry_stats().time_cap_reached_count, 1u);
    EXPECT_EQ(keyspace.db(0).size(), 500u);
  }
}

TEST(KeyspaceTest, ExpiryStatsCounters) {
  TickingClock clock(10);
  Keyspace keyspace(2, clock);
  add_volatile_keys(keyspace.db(0), 2000, kNow - 1, "due");
  add_volatile_keys(keyspace.db(0), 2000, kNow + 60'000, "later");
  // One slice (250 us budget) deletes 800 and runs out of time.
  keyspace.active_expire_slice();
  const ExpiryStats& stats = keyspace.expiry_stats();
  EXPECT_EQ(stats.expired_keys, 800u);
  EXPECT_EQ(stats.time_cap_reached_count, 1u);
  // 26 clock reads while deleting (start + 25 checks) and one at the end: 26 ticks of 10 us.
  EXPECT_EQ(stats.cycle_cpu_us, 260);
  // 1200 due of 3200 volatile left (37.5%), folded into the running estimate at 5%.
  EXPECT_DOUBLE_EQ(stats.stale_percent, 0.05 * 100.0 * 1000 / 3200);  // count capped at 1000
  const double first_estimate = stats.stale_percent;

  keyspace.active_expire_slice();
  EXPECT_EQ(stats.expired_keys, 1600u);
  EXPECT_EQ(stats.time_cap_reached_count, 2u);
  EXPECT_GT(stats.stale_percent, first_estimate);

  // The last 400 fit in the budget: no time cap, and the estimate decays.
  const double second_estimate = stats.stale_percent;
  keyspace.active_expire_slice();
  EXPECT_EQ(stats.expired_keys, 2000u);
  EXPECT_EQ(stats.time_cap_reached_count, 2u);
  EXPECT_DOUBLE_EQ(stats.stale_percent, second_estimate * 0.95);
  keyspace.active_expire_slice();
  EXPECT_DOUBLE_EQ(stats.stale_percent, second_estimate * 0.95 * 0.95);
  EXPECT_EQ(keyspace.db(0).size(), 2000u);

  // Lazy expiry counts too.
  (void)keyspace.db(1).set_expiry(keyspace.db(1).add("x", string_value("v")), kNow);
  EXPECT_EQ(keyspace.db(1).lookup("x", kNow + 1), nullptr);
  EXPECT_EQ(stats.expired_keys, 2001u);
}

// A million keys expiring in the same second are reclaimed over many slices, each of which
// stops at its budget and asks for another; no slice deletes more than its share, and nothing
// is left behind.
TEST(KeyspaceTest, MillionKeyMassExpiryIsDrainedInBoundedSlices) {
  constexpr int kKeys = 1'000'000;
  constexpr int64_t kTickUs = 10;
  TickingClock clock(kTickUs);
  Keyspace keyspace(3, clock);
  CountingListener listener;
  keyspace.set_listener(&listener);
  Database& db = keyspace.db(0);
  db.table().reserve(kKeys);
  for (int i = 0; i < kKeys; ++i) {
    // Deadlines spread over one second.
    (void)db.set_expiry(db.add("key:" + std::to_string(i), Value::make_int(i)), kNow + i % 1000);
  }
  add_volatile_keys(keyspace.db(2), 5000, kNow + 1000, "due");
  add_volatile_keys(keyspace.db(1), 100, kNow + 5000, "later");

  // Nothing is due yet.
  EXPECT_FALSE(keyspace.active_expire_slice());
  EXPECT_EQ(listener.count, 0u);
  EXPECT_EQ(keyspace.next_expiry_deadline_ms(), kNow);
  clock.advance_ms(1001);  // everything in db 0 and db 2 is due now

  const int64_t share = deletions_per_slice(250, kTickUs);  // 800
  const uint64_t total_due = kKeys + 5000;
  uint64_t previous = 0;
  int slices = 0;
  bool wants_more = true;
  while (wants_more) {
    ASSERT_LT(slices, 5000) << "mass expiry does not drain";
    wants_more = keyspace.active_expire_slice();
    ++slices;
    ASSERT_LE(listener.count - previous, static_cast<uint64_t>(share)) << "slice " << slices;
    previous = listener.count;
  }
  EXPECT_EQ(listener.count, total_due);
  EXPECT_EQ(keyspace.expiry_stats().expired_keys, total_due);
  // Every slice but the last ran into its budget.
  EXPECT_EQ(slices, static_cast<int>((total_due + share - 1) / share));
  EXPECT_GE(keyspace.expiry_stats().time_cap_reached_count, static_cast<uint64_t>(slices - 1));
  EXPECT_EQ(db.size(), 0u);
  EXPECT_TRUE(db.expiry_index().empty());
  EXPECT_EQ(keyspace.db(2).size(), 0u);
  EXPECT_EQ(keyspace.db(1).size(), 100u);  // not due: untouched
  EXPECT_FALSE(keyspace.has_due_keys(clock.wall_ms()));
  EXPECT_EQ(keyspace.next_expiry_deadline_ms(), kNow + 5000);
}

}  // namespace
}  // namespace keywarden
