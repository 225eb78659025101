// Hash-field expiration through the dispatcher, with the replies Redis 8.4 gives (written from
// its t_hash.c and command docs, since the 7.0 oracle lacks the commands): every result code
// of HEXPIRE and friends, HTTL rounding, HPERSIST, HGETEX, HSETEX, HGETDEL, the exact errors,
// what each command propagates, lazy and active reclaim (HDEL per field, the key going with
// its last field), other hash commands never showing a due field, a replica hiding due fields
// without deleting them, and the keyspace events. Time moves by the manual clock.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "command_harness.h"
#include "commands/notifications.h"

namespace keywarden::testing {
namespace {

using Lines = std::vector<std::string>;
constexpr int64_t kStart = 1'700'000'000'000;  // ManualClock's default start

class HashFieldExpiry : public ::testing::Test {
 protected:
  Database& db() { return h.state.keyspace().db(0); }
  CommandHarness h;
};

TEST_F(HashFieldExpiry, HexpireResultCodesAndPropagation) {
  EXPECT_EQ(h.call("HSET h a 1 b 2 c 3"), ":3");
  h.take_propagated();
  EXPECT_EQ(h.call("HEXPIRE h 100 FIELDS 3 a zz b"), "[:1, :-2, :1]");
  // Only the fields set, in absolute milliseconds.
  EXPECT_EQ(h.take_propagated(), Lines({"0:HPEXPIREAT h 1700000100000 FIELDS 2 a b"}));
  EXPECT_EQ(h.call("HPEXPIRE h 5000 NX FIELDS 2 a c"), "[:0, :1]");
  EXPECT_EQ(h.take_propagated(), Lines({"0:HPEXPIREAT h 1700000005000 FIELDS 1 c"}));
  EXPECT_EQ(h.call("HPEXPIRE h 7000 XX FIELDS 1 a"), "[:1]");
  EXPECT_EQ(h.call("HEXPIREAT h 1800000000 GT FIELDS 2 a b"), "[:1, :1]");
  EXPECT_EQ(h.call("HPEXPIREAT h 1700000001000 GT FIELDS 1 a"), "[:0]");
  EXPECT_EQ(h.call("HPEXPIREAT h 1700000001000 LT FIELDS 1 a"), "[:1]");
  h.take_propagated();
  // Past (or now) deletes the field and propagates HDEL, no HPEXPIREAT.
  EXPECT_EQ(h.call("HPEXPIREAT h 1700000000000 FIELDS 1 a"), "[:2]");
  EXPECT_EQ(h.call("HEXPIRE h 0 FIELDS 1 b"), "[:2]");
  EXPECT_EQ(h.take_propagated(), Lines({"0:HDEL h a", "0:HDEL h b"}));
  EXPECT_EQ(h.call("HGETALL h"), "[\"c\", \"3\"]");
  // The last field deleted takes the key.
  EXPECT_EQ(h.call("HEXPIRE h 0 FIELDS 1 c"), "[:2]");
  EXPECT_EQ(h.call("EXISTS h"), ":0");
  EXPECT_EQ(db().field_expiry_index().size(), 0u);
}

TEST_F(HashFieldExpiry, ObjectEncodingNamesListpackex) {
  h.call("HSET h a 1");
  EXPECT_EQ(h.encoding("h"), "\"listpack\"");
  h.call("HEXPIRE h 100 FIELDS 1 a");
  EXPECT_EQ(h.encoding("h"), "\"listpackex\"");
  h.call("HSET h b " + std::string(100, 'x'));  // longer than hash-max-listpack-value
  EXPECT_EQ(h.encoding("h"), "\"hashtable\"");
  EXPECT_EQ(h.call("HTTL h FIELDS 2 a b"), "[:100, :-1]");
}

TEST_F(HashFieldExpiry, ConditionsOnFieldsWithoutDeadline) {
  h.call("HSET h a 1");
  EXPECT_EQ(h.call("HEXPIRE h 10 XX FIELDS 1 a"), "[:0]");
  EXPECT_EQ(h.call("HEXPIRE h 10 GT FIELDS 1 a"), "[:0]");
  EXPECT_EQ(h.call("HEXPIRE h 10 LT FIELDS 1 a"), "[:1]");
  EXPECT_EQ(h.call("HEXPIRE h 20 NX FIELDS 1 a"), "[:0]");
  EXPECT_EQ(h.call("HEXPIRE h 20 gt FIELDS 1 a"), "[:1]");
  EXPECT_EQ(h.call("HTTL h FIELDS 1 a"), "[:20]");
}

TEST_F(HashFieldExpiry, MissingKeyAndWrongType) {
  const uint64_t before = h.dirty();
  EXPECT_EQ(h.call("HEXPIRE nokey 10 FIELDS 2 a b"), "[:-2, :-2]");
  EXPECT_EQ(h.call("HTTL nokey FIELDS 1 a"), "[:-2]");
  EXPECT_EQ(h.call("HPERSIST nokey FIELDS 1 a"), "[:-2]");
  EXPECT_EQ(h.call("HGETEX nokey EX 10 FIELDS 2 a b"), "[(nil), (nil)]");
  EXPECT_EQ(h.call("HGETDEL nokey FIELDS 1 a"), "[(nil)]");
  EXPECT_EQ(h.call("HSETEX nokey FXX FIELDS 1 a 1"), ":0");
  EXPECT_EQ(h.dirty(), before);
  EXPECT_TRUE(h.take_propagated().empty());
  h.call("SET s x");
  for (const char* line : {"HEXPIRE s 10 FIELDS 1 a", "HTTL s FIELDS 1 a", "HPERSIST s FIELDS 1 a",
                           "HGETEX s FIELDS 1 a", "HSETEX s FIELDS 1 a 1", "HGETDEL s FIELDS 1 a",
                           "HPEXPIRETIME s FIELDS 1 a"}) {
    EXPECT_EQ(h.call(line), kWrongType) << line;
  }
  // WRONGTYPE comes before argument errors, as Redis looks the key up first.
  EXPECT_EQ(h.call("HEXPIRE s notanumber FIELDS 1 a"), kWrongType);
}

TEST_F(HashFieldExpiry, ArgumentErrors) {
  h.call("HSET h a 1");
  EXPECT_EQ(h.call("HEXPIRE h notanum FIELDS 1 a"),
            "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("HEXPIRE h -1 FIELDS 1 a"), "-ERR invalid expire time, must be >= 0");
  EXPECT_EQ(h.call("HEXPIRE h 70368744177 FIELDS 1 a"),
            "-ERR invalid expire time in 'hexpire' command");
  EXPECT_EQ(h.call("HPEXPIREAT h 70368744177664 FIELDS 1 a"),
            "-ERR invalid expire time in 'hpexpireat' command");
  EXPECT_EQ(h.call("HPEXPIREAT h 70368744177663 FIELDS 1 a"), "[:1]");
  EXPECT_EQ(h.call("HEXPIRE h 10 BADCOND FIELDS 1 a"),
            "-ERR Mandatory argument FIELDS is missing or not at the right position");
  EXPECT_EQ(h.call("HEXPIRE h 10 FIELDS 0 a"),
            "-ERR Parameter `numFields` should be greater than 0");
  EXPECT_EQ(h.call("HEXPIRE h 10 FIELDS x a"),
            "-ERR Parameter `numFields` should be greater than 0");
  EXPECT_EQ(h.call("HEXPIRE h 10 FIELDS 2 a"),
            "-ERR The `numfields` parameter must match the number of arguments");
  EXPECT_EQ(h.call("HEXPIRE h 10 FIELDS 1 a b"),
            "-ERR The `numfields` parameter must match the number of arguments");
  EXPECT_EQ(h.call("HEXPIRE h 10 FIELDS"), "-ERR wrong number of arguments for 'hexpire' command");
  EXPECT_EQ(h.call("HTTL h NOTFIELDS 1 a"),
            "-ERR Mandatory argument FIELDS is missing or not at the right position");
  EXPECT_EQ(h.call("HTTL h FIELDS 0 a"), "-ERR Number of fields must be a positive integer");
  EXPECT_EQ(h.call("HPERSIST h FIELDS -1 a"), "-ERR Number of fields must be a positive integer");
  EXPECT_EQ(h.call("HGETDEL h FIELDS 3 a"),
            "-ERR The `numfields` parameter must match the number of arguments");
  EXPECT_EQ(h.call("HGETEX h EX 10 FIELDS"), "-ERR wrong number of arguments for 'hgetex' command");
  EXPECT_EQ(h.call("HGETEX h EX -5 FIELDS 1 a"), "-ERR invalid expire time, must be >= 0");
  EXPECT_EQ(h.call("HGETEX h BOGUS FIELDS 1 a"),
            "-ERR Mandatory argument FIELDS is missing or not at the right position");
  EXPECT_EQ(h.call("HSETEX h FNX FXX FIELDS 1 a 1"),
            "-ERR Only one of FXX or FNX arguments can be specified");
  EXPECT_EQ(h.call("HSETEX h EX 10 KEEPTTL FIELDS 1 a 1"),
            "-ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified");
  EXPECT_EQ(h.call("HSETEX h BOGUS FIELDS 1 a 1"), "-ERR unknown argument: BOGUS");
  EXPECT_EQ(h.call("HSETEX h FIELDS 0 a 1"), "-ERR invalid number of fields");
  EXPECT_EQ(h.call("HSETEX h FIELDS 2 a 1"), "-ERR wrong number of arguments for 'hsetex' command");
  EXPECT_EQ(h.call("HSETEX h FIELDS 1 a 1 b"),
            "-ERR wrong number of arguments for 'hsetex' command");
  EXPECT_EQ(h.call("HSETEX h FNX FXX PX 1"),
            "-ERR Only one of FXX or FNX arguments can be specified");
  EXPECT_EQ(h.call("HEXPIRE h"), "-ERR wrong number of arguments for 'hexpire' command");
  EXPECT_EQ(h.call("HSETEX h FIELDS 1 a"), "-ERR wrong number of arguments for 'hsetex' command");
}

TEST_F(HashFieldExpiry, TtlFamilyRounding) {
  h.call("HSET h a 1 b 2");
  h.call("HPEXPIRE h 1500 FIELDS 1 a");
  EXPECT_EQ(h.call("HTTL h FIELDS 3 a b zz"), "[:2, :-1, :-2]");
  EXPECT_EQ(h.call("HPTTL h FIELDS 1 a"), "[:1500]");
  EXPECT_EQ(h.call("HEXPIRETIME h FIELDS 1 a"), "[:1700000002]");
  EXPECT_EQ(h.call("HPEXPIRETIME h FIELDS 2 a b"), "[:1700000001500, :-1]");
  h.advance_ms(1499);
  EXPECT_EQ(h.call("HPTTL h FIELDS 1 a"), "[:1]");
  EXPECT_EQ(h.call("HTTL h FIELDS 1 a"), "[:1]");
  h.advance_ms(1);
  EXPECT_EQ(h.call("HPTTL h FIELDS 1 a"), "[:0]");
  h.advance_ms(1);
  EXPECT_EQ(h.call("HPTTL h FIELDS 1 a"), "[:-2]");
}

TEST_F(HashFieldExpiry, HpersistCodesAndPropagation) {
  h.call("HSET h a 1 b 2");
  h.call("HEXPIRE h 100 FIELDS 1 a");
  h.take_propagated();
  const uint64_t before = h.dirty();
  EXPECT_EQ(h.call("HPERSIST h FIELDS 3 a b zz"), "[:1, :-1, :-2]");
  EXPECT_EQ(h.dirty(), before + 1);
  EXPECT_EQ(h.take_propagated(), Lines({"0:HPERSIST h FIELDS 3 a b zz"}));
  EXPECT_EQ(h.call("HTTL h FIELDS 1 a"), "[:-1]");
  EXPECT_EQ(h.call("HPERSIST h FIELDS 1 a"), "[:-1]");
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(db().field_expiry_index().size(), 0u);
}

TEST_F(HashFieldExpiry, LazyExpiryPropagatesHdelAndDeletesTheKeyWithItsLastField) {
  h.call("HSET h a 1 b 2");
  h.call("HPEXPIRE h 100 FIELDS 2 a b");
  h.take_propagated();
  h.advance_ms(100);
  EXPECT_EQ(h.call("HGET h a"), "\"1\"");  // deadline == now: still alive
  h.advance_ms(1);
  EXPECT_EQ(h.call("HGET h a"), "(nil)");
  EXPECT_EQ(h.take_propagated(), Lines({"0:HDEL h a", "0:HDEL h b"}));
  EXPECT_EQ(h.call("EXISTS h"), ":0");
  EXPECT_EQ(db().size(), 0u);
  EXPECT_EQ(db().field_expiry_index().size(), 0u);
}

TEST_F(HashFieldExpiry, ActiveExpiryReclaimsByDeadline) {
  // Listpack and table encodings, in several hashes.
  h.call("HSET small a 1 keep 2");
  h.call("HPEXPIRE small 10 FIELDS 1 a");
  std::string line = "HSET big";
  for (int i = 0; i < 1000; ++i) line += " f" + std::to_string(i) + " v";
  h.call(line);
  EXPECT_EQ(h.encoding("big"), "\"hashtable\"");
  line = "HPEXPIRE big 20 FIELDS 1000";
  for (int i = 0; i < 1000; ++i) line += " f" + std::to_string(i);
  h.call(line);
  h.call("HSET gone x 1");
  h.call("HPEXPIRE gone 30 FIELDS 1 x");
  EXPECT_EQ(db().field_expiry_index().size(), 3u);
  h.take_propagated();
  h.advance_ms(11);
  h.active_expire();
  EXPECT_EQ(h.take_propagated(), Lines({"0:HDEL small a"}));
  h.advance_ms(100);
  for (int i = 0; i < 200 && db().field_expiry_index().size() > 0; ++i) h.active_expire();
  EXPECT_EQ(db().field_expiry_index().size(), 0u);
  EXPECT_EQ(h.state.keyspace().expiry_stats().expired_fields, 1002u);
  EXPECT_EQ(h.take_propagated().size(), 1001u);
  EXPECT_EQ(h.call("EXISTS big gone small"), ":1");
  EXPECT_EQ(h.call("HGETALL small"), "[\"keep\", \"2\"]");
}

TEST_F(HashFieldExpiry, OtherHashCommandsNeverShowDueFields) {
  h.state.keyspace().expiry_settings().active_expire_enabled = false;  // lazy only
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"HGET h a", "(nil)"},
      {"HMGET h a c", "[(nil), \"3\"]"},
      {"HLEN h", ":1"},
      {"HGETALL h", "[\"c\", \"3\"]"},
      {"HKEYS h", "[\"c\"]"},
      {"HVALS h", "[\"3\"]"},
      {"HEXISTS h a", ":0"},
      {"HSTRLEN h a", ":0"},
      {"HRANDFIELD h 10", "[\"c\"]"},
      {"HSCAN h 0", "[\"0\", [\"c\", \"3\"]]"},
      {"HINCRBY h a 5", ":5"},
      {"HINCRBYFLOAT h a 1.5", "\"1.5\""},
      {"HSETNX h a 9", ":1"},
      {"HDEL h a b", ":0"},
      {"HGETDEL h FIELDS 1 a", "[(nil)]"},
      {"HGETEX h FIELDS 1 a", "[(nil)]"},
      {"HPERSIST h FIELDS 1 a", "[:-2]"},
      {"HEXPIRE h 10 FIELDS 1 a", "[:-2]"},
      {"DUMP h", "(skip)"},
      {"COPY h h2", ":1"},
      {"HGETALL h2", "[\"c\", \"3\"]"},
  };
  for (const auto& [command, expected] : cases) {
    h.call("DEL h");
    h.call("HSET h a 1 b 2 c 3");
    h.call("HPEXPIRE h 10 FIELDS 2 a b");
    h.advance_ms(11);
    if (expected == "(skip)") {
      h.call(command);
      EXPECT_EQ(h.call("HLEN h"), ":1") << command;
      continue;
    }
    EXPECT_EQ(h.call(command), expected) << command;
  }
}

TEST_F(HashFieldExpiry, HsetDropsTheDeadlineIncrementsKeepIt) {
  h.call("HSET h a 1 b 2 c 3.5");
  h.call("HEXPIRE h 100 FIELDS 3 a b c");
  h.take_propagated();
  EXPECT_EQ(h.call("HSET h a 10"), ":0");
  EXPECT_EQ(h.call("HINCRBY h b 1"), ":3");
  EXPECT_EQ(h.call("HINCRBYFLOAT h c 1"), "\"4.5\"");
  EXPECT_EQ(h.call("HTTL h FIELDS 3 a b c"), "[:-1, :100, :100]");
  EXPECT_EQ(h.take_propagated(),
            Lines({"0:HSET h a 10", "0:HINCRBY h b 1", "0:HSETEX h KEEPTTL FIELDS 1 c 4.5"}));
  EXPECT_EQ(h.call("HINCRBYFLOAT h a 1"), "\"11\"");
  EXPECT_EQ(h.take_propagated(), Lines({"0:HSET h a 11"}));
}

TEST_F(HashFieldExpiry, HgetexChangesDeadlinesAndPropagatesThemAbsolute) {
  h.call("HSET h a 1 b 2");
  h.take_propagated();
  EXPECT_EQ(h.call("HGETEX h FIELDS 2 a zz"), "[\"1\", (nil)]");
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(h.call("HGETEX h EX 100 FIELDS 2 a zz"), "[\"1\", (nil)]");
  EXPECT_EQ(h.take_propagated(), Lines({"0:HPEXPIREAT h 1700000100000 FIELDS 2 a zz"}));
  EXPECT_EQ(h.call("HGETEX h PXAT 1800000000000 FIELDS 1 b"), "[\"2\"]");
  EXPECT_EQ(h.take_propagated(), Lines({"0:HPEXPIREAT h 1800000000000 FIELDS 1 b"}));
  EXPECT_EQ(h.call("HGETEX h EXAT 1800000000 FIELDS 1 b"), "[\"2\"]");
  EXPECT_EQ(h.call("HGETEX h PX 5 FIELDS 1 b"), "[\"2\"]");
  EXPECT_EQ(h.call("HTTL h FIELDS 2 a b"), "[:100, :1]");
  h.take_propagated();
  EXPECT_EQ(h.call("HGETEX h PERSIST FIELDS 2 a b"), "[\"1\", \"2\"]");
  EXPECT_EQ(h.take_propagated(), Lines({"0:HPERSIST h FIELDS 2 a b"}));
  EXPECT_EQ(h.call("HGETEX h PERSIST FIELDS 1 a"), "[\"1\"]");
  EXPECT_TRUE(h.take_propagated().empty());
  // A time already passed: the value comes back, then the field goes (HDEL).
  EXPECT_EQ(h.call("HGETEX h EXAT 1 FIELDS 2 a b"), "[\"1\", \"2\"]");
  EXPECT_EQ(h.take_propagated(), Lines({"0:HDEL h a", "0:HDEL h b"}));
  EXPECT_EQ(h.call("EXISTS h"), ":0");
}

TEST_F(HashFieldExpiry, HsetexConditionsDeadlinesAndPropagation) {
  EXPECT_EQ(h.call("HSETEX h EX 100 FIELDS 2 a 1 b 2"), ":1");
  EXPECT_EQ(h.take_propagated(), Lines({"0:HSETEX h PXAT 1700000100000 FIELDS 2 a 1 b 2"}));
  EXPECT_EQ(h.call("HTTL h FIELDS 2 a b"), "[:100, :100]");
  EXPECT_EQ(h.call("HSETEX h FNX FIELDS 2 a 1 c 3"), ":0");
  EXPECT_EQ(h.call("HSETEX h FXX FIELDS 2 a 1 c 3"), ":0");
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(h.call("HSETEX h FXX KEEPTTL FIELDS 1 a 10"), ":1");
  EXPECT_EQ(h.take_propagated(), Lines({"0:HSETEX h FXX KEEPTTL FIELDS 1 a 10"}));
  EXPECT_EQ(h.call("HSETEX h FNX PXAT 1800000000000 FIELDS 1 c 3"), ":1");
  EXPECT_EQ(h.take_propagated(), Lines({"0:HSETEX h FNX PXAT 1800000000000 FIELDS 1 c 3"}));
  // Without KEEPTTL or a time the deadline goes, as with HSET.
  EXPECT_EQ(h.call("HSETEX h FIELDS 1 b 20"), ":1");
  EXPECT_EQ(h.call("HTTL h FIELDS 3 a b c"), "[:100, :-1, :100000000]");
  EXPECT_EQ(h.call("HGETALL h"), "[\"a\", \"10\", \"b\", \"20\", \"c\", \"3\"]");
  h.take_propagated();
  // A time already passed deletes what it set and propagates only the HDELs.
  EXPECT_EQ(h.call("HSETEX h PX 0 FIELDS 1 a 5"), ":1");
  EXPECT_EQ(h.take_propagated(), Lines({"0:HDEL h a"}));
  EXPECT_EQ(h.call("HSETEX fresh EXAT 1 FIELDS 1 x 1"), ":1");
  EXPECT_EQ(h.call("EXISTS fresh"), ":0");
}

TEST_F(HashFieldExpiry, HgetdelReturnsThenDeletes) {
  h.call("HSET h a 1 b 2 c 3");
  h.call("HEXPIRE h 100 FIELDS 1 a");
  h.take_propagated();
  EXPECT_EQ(h.call("HGETDEL h FIELDS 2 a zz"), "[\"1\", (nil)]");
  EXPECT_EQ(h.take_propagated(), Lines({"0:HDEL h a zz"}));
  EXPECT_EQ(db().field_expiry_index().size(), 0u);
  EXPECT_EQ(h.call("HGETDEL h FIELDS 1 zz"), "[(nil)]");
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(h.call("HGETDEL h FIELDS 2 b c"), "[\"2\", \"3\"]");
  EXPECT_EQ(h.call("EXISTS h"), ":0");
}

TEST_F(HashFieldExpiry, RenameMoveCopyAndRestoreKeepFieldDeadlines) {
  h.call("HSET h a 1 b 2");
  h.call("HEXPIRE h 100 FIELDS 1 a");
  EXPECT_EQ(h.call("RENAME h h2"), "+OK");
  EXPECT_EQ(h.call("HTTL h2 FIELDS 2 a b"), "[:100, :-1]");
  EXPECT_EQ(h.call("COPY h2 h3"), ":1");
  EXPECT_EQ(h.call("HTTL h3 FIELDS 1 a"), "[:100]");
  EXPECT_EQ(h.call("MOVE h3 1"), ":1");
  EXPECT_EQ(db().field_expiry_index().size(), 1u);
  EXPECT_EQ(h.state.keyspace().db(1).field_expiry_index().size(), 1u);
  EXPECT_EQ(h.call("SET h2 plain"), "+OK");
  EXPECT_EQ(db().field_expiry_index().size(), 0u);
  h.call("SELECT 1");
  h.advance_ms(100'001);
  EXPECT_EQ(h.call("HGETALL h3"), "[\"b\", \"2\"]");
  EXPECT_EQ(h.call("FLUSHALL"), "+OK");
}

// The field index's invariant, checked from both sides: every indexed entry is a live hash of
// this database with a volatile field, filed at the slot it records and by its earliest field
// deadline; every hash of the table with a volatile field is indexed.
void expect_field_index_consistent(Database& db) {
  const ExpiryIndex& index = db.field_expiry_index();
  for (size_t i = 0; i < index.size(); ++i) {
    Entry* entry = index.at(i);
    ASSERT_EQ(db.find_raw(entry->key()), entry) << "slot " << i;
    ASSERT_EQ(entry->value.type(), ValueType::kHash) << entry->key();
    const HashValue& hash = entry->value.as<HashValue>();
    EXPECT_EQ(hash.index_slot(), i) << entry->key();
    EXPECT_EQ(index.deadline_of(entry), hash.earliest_deadline()) << entry->key();
  }
  size_t volatile_hashes = 0;
  db.for_each([&](Entry* entry) {
    if (entry->value.type() != ValueType::kHash) {
      EXPECT_FALSE(index.contains(entry)) << entry->key();
      return;
    }
    const bool has_deadlines = entry->value.as<HashValue>().volatile_count() > 0;
    EXPECT_EQ(index.contains(entry), has_deadlines) << entry->key();
    volatile_hashes += has_deadlines ? 1 : 0;
  });
  EXPECT_EQ(volatile_hashes, index.size());
}

// Regression: the field index once read any entry's value as a hash, so deleting, overwriting,
// renaming or moving a key of another type read garbage (SET a 1; DEL a crashed). Every key
// type, next to hashes with and without field deadlines, through every way a key leaves,
// changes type, or moves between names and databases; the sanitizer build runs this too.
TEST_F(HashFieldExpiry, EveryKeyTypeComesAndGoesBesideVolatileHashes) {
  // A hash with a volatile field, in the listpack and the table encodings.
  auto volatile_hash = [&](const std::string& key, bool big) {
    std::string line = "HSET " + key + " a 1 b 2";
    if (big) line += " long " + std::string(100, 'x');
    h.call(line);
    h.call("HPEXPIRE " + key + " 50000 FIELDS 1 a");
  };
  // One key of every type under `prefix`.
  auto every_type = [&](const std::string& prefix) {
    h.call("SET " + prefix + "str 1");
    h.call("SET " + prefix + "int 12345");
    h.call("RPUSH " + prefix + "list a b");
    h.call("SADD " + prefix + "set a b");
    h.call("SADD " + prefix + "intset 1 2");
    h.call("ZADD " + prefix + "zset 1 a");
    h.call("HSET " + prefix + "plainhash f v");
    h.call("PFADD " + prefix + "hll a b");
    h.call("GEOADD " + prefix + "geo 13.36 38.11 p");
    volatile_hash(prefix + "vh", false);
    volatile_hash(prefix + "vbig", true);
  };
  const std::vector<std::string> types = {"str", "int",       "list", "set", "intset", "zset",
                                          "plainhash", "hll", "geo",  "vh",  "vbig"};

  every_type("");
  expect_field_index_consistent(db());
  EXPECT_EQ(db().field_expiry_index().size(), 2u);
  // DEL and UNLINK of every type.
  for (const std::string& type : types) EXPECT_EQ(h.call("DEL " + type), ":1") << type;
  expect_field_index_consistent(db());
  every_type("");
  for (const std::string& type : types) EXPECT_EQ(h.call("UNLINK " + type), ":1") << type;
  EXPECT_EQ(db().field_expiry_index().size(), 0u);

  // SET (and SET … GET, GETSET) over every type, volatile hashes included.
  every_type("");
  for (const std::string& type : types) EXPECT_EQ(h.call("SET " + type + " s"), "+OK") << type;
  expect_field_index_consistent(db());
  EXPECT_EQ(db().field_expiry_index().size(), 0u);
  h.call("DEL vh");
  volatile_hash("vh", false);
  EXPECT_EQ(h.call("SET vh s GET"), kWrongType);
  EXPECT_EQ(db().field_expiry_index().size(), 1u);
  EXPECT_EQ(h.call("MSET vh s2 str s3"), "+OK");
  EXPECT_EQ(h.call("FLUSHALL"), "+OK");

  // Each type renamed onto a volatile hash, and a volatile hash renamed onto each type.
  for (const std::string& type : types) {
    every_type("");
    volatile_hash("target", type == "vbig");
    volatile_hash("source", type != "vbig");
    EXPECT_EQ(h.call("RENAME " + type + " target"), "+OK") << type;
    expect_field_index_consistent(db());
    EXPECT_EQ(h.call("RENAME source " + type), "+OK") << type;
    expect_field_index_consistent(db());
    volatile_hash("other", false);
    EXPECT_EQ(h.call("COPY other " + type + " REPLACE"), ":1") << type;
    EXPECT_EQ(h.call("COPY target other REPLACE"), ":1") << type;
    expect_field_index_consistent(db());
    EXPECT_EQ(h.call("FLUSHALL"), "+OK");
  }

  // Stores over a volatile hash: SORT … STORE, the set/zset stores, BITOP, GEOSEARCHSTORE,
  // and the same over each type.
  const std::vector<std::string> stores = {
      "SORT list ALPHA STORE dst",        "SUNIONSTORE dst set",
      "ZUNIONSTORE dst 1 zset",           "BITOP OR dst str",
      "GEOSEARCHSTORE dst geo FROMLONLAT 13.36 38.11 BYRADIUS 10 km",
      "LMOVE list dst LEFT LEFT",         "SMOVE set dst a"};
  for (const std::string& store : stores) {
    every_type("");
    volatile_hash("dst", false);
    h.call(store);
    expect_field_index_consistent(db());
    EXPECT_EQ(h.call("FLUSHALL"), "+OK");
  }

  // MOVE each type to database 1 and back, SWAPDB both ways, with volatile hashes in each.
  every_type("");
  for (const std::string& type : types) EXPECT_EQ(h.call("MOVE " + type + " 1"), ":1") << type;
  expect_field_index_consistent(db());
  expect_field_index_consistent(h.state.keyspace().db(1));
  EXPECT_EQ(h.state.keyspace().db(1).field_expiry_index().size(), 2u);
  every_type("");
  EXPECT_EQ(h.call("SWAPDB 0 1"), "+OK");
  EXPECT_EQ(h.call("SWAPDB 1 0"), "+OK");
  EXPECT_EQ(h.call("SWAPDB 0 1"), "+OK");
  expect_field_index_consistent(db());
  expect_field_index_consistent(h.state.keyspace().db(1));
  h.call("SELECT 1");
  for (const std::string& type : types) EXPECT_EQ(h.call("MOVE " + type + " 0"), ":0") << type;
  EXPECT_EQ(h.call("FLUSHDB"), "+OK");
  h.call("SELECT 0");
  expect_field_index_consistent(h.state.keyspace().db(1));
  EXPECT_EQ(h.state.keyspace().db(1).field_expiry_index().size(), 0u);

  // Keys of every type that expire (EXPIRE in the past deletes at once; a deadline reached
  // is reclaimed by lookup and by the active cycle) while volatile hashes are indexed.
  for (const std::string& type : types) EXPECT_EQ(h.call("PEXPIRE " + type + " 10"), ":1");
  h.advance_ms(11);
  EXPECT_EQ(h.call("EXISTS str vh"), ":0");
  h.active_expire();
  EXPECT_EQ(db().size(), 0u);
  expect_field_index_consistent(db());
  every_type("");
  for (const std::string& type : types) EXPECT_EQ(h.call("EXPIRE " + type + " -1"), ":1");
  EXPECT_EQ(db().size(), 0u);
  EXPECT_EQ(db().field_expiry_index().size(), 0u);

  // FLUSHALL and FLUSHALL ASYNC with volatile hashes in two databases.
  every_type("");
  h.call("SELECT 1");
  every_type("");
  h.call("SELECT 0");
  EXPECT_EQ(h.call("FLUSHALL ASYNC"), "+OK");
  EXPECT_EQ(db().field_expiry_index().size(), 0u);
  EXPECT_EQ(h.state.keyspace().db(1).field_expiry_index().size(), 0u);
  every_type("");
  EXPECT_EQ(h.call("FLUSHALL"), "+OK");
  EXPECT_EQ(db().field_expiry_index().size(), 0u);
}

TEST_F(HashFieldExpiry, AReplicaHidesDueFieldsAndNeverDeletesThem) {
  h.call("HSET h a 1 b 2");
  h.call("HPEXPIRE h 10 FIELDS 1 a");
  h.call("HSET gone x 1");
  h.call("HPEXPIRE gone 10 FIELDS 1 x");
  h.take_propagated();
  Keyspace& keyspace = h.state.keyspace();
  keyspace.hold_expiry(Keyspace::kHoldForReplica, true);
  h.advance_ms(11);
  h.active_expire();
  EXPECT_EQ(h.call("HGETALL h"), "[\"b\", \"2\"]");
  EXPECT_EQ(h.call("HGET h a"), "(nil)");
  EXPECT_EQ(h.call("HLEN h"), ":1");
  EXPECT_EQ(h.call("HTTL h FIELDS 2 a b"), "[:-2, :-1]");
  EXPECT_EQ(h.call("HSCAN h 0"), "[\"0\", [\"b\", \"2\"]]");
  EXPECT_EQ(h.call("HGETALL gone"), "[]");
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(db().find_raw("h")->value.as<HashValue>().size(), 2u);
  // The primary's commands see them, and its HDEL removes them.
  keyspace.set_expired_visible(true);
  EXPECT_EQ(h.call("HGET h a"), "\"1\"");
  EXPECT_EQ(h.call("HDEL h a"), ":1");
  keyspace.set_expired_visible(false);
  keyspace.hold_expiry(Keyspace::kHoldForReplica, false);
  EXPECT_EQ(h.call("HGETALL gone"), "[]");
  EXPECT_EQ(h.take_propagated(), Lines({"0:HDEL h a", "0:HDEL gone x"}));
}

class RecordingSubscriber final : public Subscriber {
 public:
  ReplyWriter* pubsub_writer() override { return &writer_; }
  // The events since the last call, as "event key" (keyevent channel only).
  std::vector<std::string> take() {
    std::vector<std::string> events;
    ReplyParser parser;
    std::string_view rest = out_;
    while (!rest.empty() && parser.parse(rest) == ReplyParseStatus::kValue) {
      rest.remove_prefix(parser.consumed());
      RespValue frame = parser.take_value();
      if (frame.elements.size() != 4) break;
      const std::string& channel = frame.elements[2].str;
      events.push_back(channel.substr(channel.find("__:") + 3) + " " + frame.elements[3].str);
    }
    out_.clear();
    return events;
  }

 private:
  std::string out_;
  ReplyWriter writer_{&out_};
};

TEST_F(HashFieldExpiry, KeyspaceEvents) {
  RecordingSubscriber listener;
  h.state.pubsub().psubscribe(&listener, "__keyevent@*__:*");
  uint32_t flags = 0;
  ASSERT_TRUE(parse_notify_flags("KEA", &flags));
  h.state.settings().notify_keyspace_events = flags;
  h.call("HSET h a 1 b 2");
  listener.take();
  h.call("HEXPIRE h 100 FIELDS 1 a");
  EXPECT_EQ(listener.take(), Lines({"hexpire h"}));
  h.call("HPERSIST h FIELDS 1 a");
  EXPECT_EQ(listener.take(), Lines({"hpersist h"}));
  h.call("HEXPIRE h 0 FIELDS 1 a");
  EXPECT_EQ(listener.take(), Lines({"hdel h"}));
  h.call("HPEXPIRE h 10 FIELDS 1 b");
  listener.take();
  h.advance_ms(11);
  h.active_expire();
  EXPECT_EQ(listener.take(), Lines({"hexpired h", "del h"}));
  h.call("HSETEX h EX 10 FIELDS 1 a 1");
  EXPECT_EQ(listener.take(), Lines({"hset h", "hexpire h"}));  // `new` is class n, not in A
  h.call("HGETDEL h FIELDS 1 a");
  EXPECT_EQ(listener.take(), Lines({"hdel h", "del h"}));
  h.state.pubsub().punsubscribe(&listener, "__keyevent@*__:*");
}

}  // namespace
}  // namespace keywarden::testing
