// Expiry family through the dispatcher: EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT with every condition
// and error text, TTL/PTTL/EXPIRETIME/PEXPIRETIME rounding, PERSIST, deadlines in the past, and
// the propagation stream of a key's whole life: SET … PXAT, PEXPIREAT, then DEL on expiry,
// whether the expiry is found lazily or by the active cycle. Time moves by the manual clock.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "command_harness.h"

namespace keywarden::testing {
namespace {

constexpr int64_t kStart = 1'700'000'000'000;  // ManualClock's default start

class ExpireCommands : public ::testing::Test {
 protected:
  Database& db(int index = 0) { return h.state.keyspace().db(index); }
  Entry* find(std::string_view key) { return db().find_raw(key); }
  int64_t now() const { return h.clock.wall_ms(); }
  void set(std::string_view key, std::string_view value = "v") {
    if (Entry* old = db().find_raw(key)) db().remove(old);
    db().add(key, Value::make_string(value));
  }
  void set_with_deadline(std::string_view key, int64_t deadline) {
    set(key);
    (void)db().set_expiry(find(key), deadline);
  }
  std::string call(const std::string& line) { return h.call(line); }

  CommandHarness h;
};

using Strings = std::vector<std::string>;

TEST_F(ExpireCommands, ExpireSetsARelativeDeadlineAndPropagatesItAbsolute) {
  set("k");
  EXPECT_EQ(h.call("EXPIRE k 100"), ":1");
  EXPECT_EQ(db().deadline_of(find("k")), kStart + 100'000);
  EXPECT_EQ(h.call("TTL k"), ":100");
  EXPECT_EQ(h.call("PTTL k"), ":100000");
  EXPECT_EQ(h.take_propagated(), Strings({"0:PEXPIREAT k 1700000100000"}));
  EXPECT_EQ(h.call("PEXPIRE k 1500"), ":1");
  EXPECT_EQ(h.take_propagated(), Strings({"0:PEXPIREAT k 1700000001500"}));
  EXPECT_EQ(h.call("EXPIREAT k 1800000000"), ":1");
  EXPECT_EQ(h.take_propagated(), Strings({"0:PEXPIREAT k 1800000000000"}));
  EXPECT_EQ(h.call("PEXPIREAT k 1800000000123"), ":1");
  EXPECT_EQ(h.take_propagated(), Strings({"0:PEXPIREAT k 1800000000123"}));
  EXPECT_EQ(h.call("PEXPIRETIME k"), ":1800000000123");
  EXPECT_EQ(h.call("EXPIRETIME k"), ":1800000000");
  EXPECT_EQ(db().volatile_count(), 1u);
}

TEST_F(ExpireCommands, MissingKeysAreLeftAlone) {
  const uint64_t before = h.dirty();
  EXPECT_EQ(h.call("EXPIRE nokey 10"), ":0");
  EXPECT_EQ(h.call("PEXPIRE nokey 10"), ":0");
  EXPECT_EQ(h.call("EXPIREAT nokey 10"), ":0");
  EXPECT_EQ(h.call("PEXPIREAT nokey 10"), ":0");
  EXPECT_EQ(h.call("PERSIST nokey"), ":0");
  EXPECT_EQ(h.dirty(), before);
  EXPECT_TRUE(h.take_propagated().empty());
}

TEST_F(ExpireCommands, ArgumentErrors) {
  set("k");
  EXPECT_EQ(h.call("EXPIRE k"), "-ERR wrong number of arguments for 'expire' command");
  EXPECT_EQ(h.call("PEXPIREAT k"), "-ERR wrong number of arguments for 'pexpireat' command");
  EXPECT_EQ(h.call("TTL"), "-ERR wrong number of arguments for 'ttl' command");
  EXPECT_EQ(h.call("PTTL a b"), "-ERR wrong number of arguments for 'pttl' command");
  EXPECT_EQ(h.call("EXPIRETIME"), "-ERR wrong number of arguments for 'expiretime' command");
  EXPECT_EQ(h.call("PEXPIRETIME"), "-ERR wrong number of arguments for 'pexpiretime' command");
  EXPECT_EQ(h.call("PERSIST a b"), "-ERR wrong number of arguments for 'persist' command");
  EXPECT_EQ(h.call("EXPIRE k x"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("EXPIRE k 1.5"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("EXPIRE k \"\""), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("PEXPIRE k 01"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("EXPIRE nokey x"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("EXPIRE k 10 foo"), "-ERR Unsupported option foo");
  EXPECT_EQ(h.call("EXPIRE k 10 NX foo"), "-ERR Unsupported option foo");
  EXPECT_EQ(h.call_args({"EXPIRE", "k", "10", std::string("ab\0cd", 5)}),
            "-ERR Unsupported option ab");
  EXPECT_EQ(h.call("EXPIRE k 10 nx xx"),
            "-ERR NX and XX, GT or LT options at the same time are not compatible");
  EXPECT_EQ(h.call("EXPIRE k 10 NX GT"),
            "-ERR NX and XX, GT or LT options at the same time are not compatible");
  EXPECT_EQ(h.call("EXPIRE k 10 LT NX"),
            "-ERR NX and XX, GT or LT options at the same time are not compatible");
  EXPECT_EQ(h.call("EXPIRE k 10 GT LT"),
            "-ERR GT and LT options at the same time are not compatible");
  EXPECT_EQ(h.call("EXPIRE k 10 XX GT LT"),
            "-ERR GT and LT options at the same time are not compatible");
  // The options are read before the time.
  EXPECT_EQ(h.call("EXPIRE k x NX XX"),
            "-ERR NX and XX, GT or LT options at the same time are not compatible");
  EXPECT_EQ(h.call("EXPIRE k x bad"), "-ERR Unsupported option bad");
  EXPECT_FALSE(find("k")->has_expiry());
  EXPECT_TRUE(h.take_propagated().empty());
}

TEST_F(ExpireCommands, OverflowIsAnInvalidExpireTime) {
  set("k");
  EXPECT_EQ(h.call("EXPIRE k 9223372036854776"), "-ERR invalid expire time in 'expire' command");
  EXPECT_EQ(h.call("EXPIRE k -9223372036854776"), "-ERR invalid expire time in 'expire' command");
  // Fits once multiplied, overflows once now is added.
  EXPECT_EQ(h.call("EXPIRE k 9223372036854775"), "-ERR invalid expire time in 'expire' command");
  EXPECT_EQ(h.call("PEXPIRE k 9223372036854775807"),
            "-ERR invalid expire time in 'pexpire' command");
  EXPECT_EQ(h.call("EXPIREAT k 9223372036854776"),
            "-ERR invalid expire time in 'expireat' command");
  EXPECT_EQ(h.call("EXPIRE k 9223372036854775808"),
            "-ERR value is not an integer or out of range");
  EXPECT_FALSE(find("k")->has_expiry());
  // The absolute forms have no base to add.
  EXPECT_EQ(h.call("EXPIREAT k 9223372036854775"), ":1");
  EXPECT_EQ(h.call("PEXPIREAT k 9223372036854775807"), ":1");
  EXPECT_EQ(h.call("PTTL k"), ":" + std::to_string(INT64_MAX - kStart));
  EXPECT_EQ(h.call("EXPIRE k 10 foo"), "-ERR Unsupported option foo");
}

TEST_F(ExpireCommands, NxAndXx) {
  set("k");
  EXPECT_EQ(h.call("EXPIRE k 100 XX"), ":0");
  EXPECT_FALSE(find("k")->has_expiry());
  EXPECT_EQ(h.call("EXPIRE k 100 NX"), ":1");
  EXPECT_EQ(h.call("EXPIRE k 200 nx"), ":0");
  EXPECT_EQ(h.call("TTL k"), ":100");
  EXPECT_EQ(h.call("EXPIRE k 200 XX"), ":1");
  EXPECT_EQ(h.call("TTL k"), ":200");
  // The condition words travel with the propagated PEXPIREAT, as in Redis.
  EXPECT_EQ(h.take_propagated(),
            Strings({"0:PEXPIREAT k 1700000100000 NX", "0:PEXPIREAT k 1700000200000 XX"}));
}

TEST_F(ExpireCommands, GtAndLtTreatNoTtlAsInfinite) {
  set("k");
  EXPECT_EQ(h.call("EXPIRE k 100 GT"), ":0");  // nothing beats forever
  EXPECT_FALSE(find("k")->has_expiry());
  EXPECT_EQ(h.call("EXPIRE k 100 LT"), ":1");  // anything is earlier than forever
  EXPECT_EQ(h.call("EXPIRE k 100 GT"), ":0");  // equal is not greater
  EXPECT_EQ(h.call("EXPIRE k 100 LT"), ":0");  // nor less
  EXPECT_EQ(h.call("EXPIRE k 50 GT"), ":0");
  EXPECT_EQ(h.call("EXPIRE k 150 GT"), ":1");
  EXPECT_EQ(h.call("TTL k"), ":150");
  EXPECT_EQ(h.call("EXPIRE k 200 LT"), ":0");
  EXPECT_EQ(h.call("PEXPIRE k 149999 LT"), ":1");
  EXPECT_EQ(h.call("PTTL k"), ":149999");
  // XX combines with GT and LT.
  EXPECT_EQ(h.call("EXPIRE k 300 XX GT"), ":1");
  EXPECT_EQ(h.call("EXPIRE k 100 GT XX"), ":0");
  set("p");
  EXPECT_EQ(h.call("EXPIRE p 100 XX LT"), ":0");
  // LT on a key without TTL with a time in the past deletes it.
  EXPECT_EQ(h.call("EXPIRE p -1 LT"), ":1");
  EXPECT_EQ(find("p"), nullptr);
}

TEST_F(ExpireCommands, ADeadlineAlreadyReachedDeletesAtOnce) {
  set("a");
  set("b");
  set("c");
  set("d");
  const uint64_t before = h.dirty();
  EXPECT_EQ(h.call("EXPIRE a -10"), ":1");
  EXPECT_EQ(h.call("PEXPIRE b 0"), ":1");
  EXPECT_EQ(h.call("PEXPIREAT c " + std::to_string(kStart)), ":1");  // exactly now
  EXPECT_EQ(h.call("EXPIREAT d 1"), ":1");
  EXPECT_EQ(h.dirty() - before, 4u);
  EXPECT_EQ(db().size(), 0u);
  EXPECT_EQ(db().volatile_count(), 0u);
  EXPECT_EQ(h.take_propagated(), Strings({"0:DEL a", "0:DEL b", "0:DEL c", "0:DEL d"}));
  // Such deletions are not expirations.
  EXPECT_EQ(h.state.keyspace().expiry_stats().expired_keys, 0u);
  h.state.keyspace().lazy_free().settings().lazy_expire = true;
  set("e");
  EXPECT_EQ(h.call("PEXPIRE e -1"), ":1");
  EXPECT_EQ(h.take_propagated(), Strings({"0:UNLINK e"}));
  // One millisecond ahead is the future.
  set("f");
  EXPECT_EQ(h.call("PEXPIRE f 1"), ":1");
  EXPECT_EQ(h.take_propagated(), Strings({"0:PEXPIREAT f 1700000000001"}));
}

TEST_F(ExpireCommands, TtlRepliesAndRounding) {
  EXPECT_EQ(h.call("TTL nokey"), ":-2");
  EXPECT_EQ(h.call("PTTL nokey"), ":-2");
  EXPECT_EQ(h.call("EXPIRETIME nokey"), ":-2");
  EXPECT_EQ(h.call("PEXPIRETIME nokey"), ":-2");
  set("k");
  EXPECT_EQ(h.call("TTL k"), ":-1");
  EXPECT_EQ(h.call("PTTL k"), ":-1");
  EXPECT_EQ(h.call("EXPIRETIME k"), ":-1");
  EXPECT_EQ(h.call("PEXPIRETIME k"), ":-1");
  set_with_deadline("t", now() + 10'000);
  h.advance_ms(500);  // 9500 left: rounds to 10
  EXPECT_EQ(h.call("TTL t"), ":10");
  EXPECT_EQ(h.call("PTTL t"), ":9500");
  h.advance_ms(1);  // 9499 left: rounds to 9
  EXPECT_EQ(h.call("TTL t"), ":9");
  h.advance_ms(9499);  // due exactly now: alive, nothing left
  EXPECT_EQ(h.call("TTL t"), ":0");
  EXPECT_EQ(h.call("PTTL t"), ":0");
  h.advance_ms(1);
  EXPECT_EQ(h.call("TTL t"), ":-2");
  EXPECT_EQ(h.take_propagated(), Strings({"0:DEL t"}));
  set_with_deadline("r", 1'800'000'000'499);
  EXPECT_EQ(h.call("EXPIRETIME r"), ":1800000000");
  set_with_deadline("r", 1'800'000'000'500);
  EXPECT_EQ(h.call("EXPIRETIME r"), ":1800000001");
  EXPECT_EQ(h.call("PEXPIRETIME r"), ":1800000000500");
}

TEST_F(ExpireCommands, PersistRemovesTheDeadline) {
  set("k");
  EXPECT_EQ(h.call("PERSIST k"), ":0");
  EXPECT_TRUE(h.take_propagated().empty());
  h.call("EXPIRE k 100");
  h.take_propagated();
  const uint64_t before = h.dirty();
  EXPECT_EQ(h.call("PERSIST k"), ":1");
  EXPECT_EQ(h.dirty() - before, 1u);
  EXPECT_EQ(h.take_propagated(), Strings({"0:PERSIST k"}));
  EXPECT_EQ(h.call("TTL k"), ":-1");
  EXPECT_EQ(db().volatile_count(), 0u);
  h.advance_ms(200'000);
  h.active_expire();
  EXPECT_EQ(h.call("EXISTS k"), ":1");
  set_with_deadline("t", now() + 5);
  h.advance_ms(6);
  EXPECT_EQ(h.call("PERSIST t"), ":0");
  EXPECT_EQ(h.take_propagated(), Strings({"0:DEL t"}));
}

TEST_F(ExpireCommands, ExpireOnAnExpiredKeyFindsItMissing) {
  set_with_deadline("k", now() + 5);
  h.advance_ms(6);
  EXPECT_EQ(h.call("EXPIRE k 100"), ":0");
  EXPECT_EQ(h.take_propagated(), Strings({"0:DEL k"}));
  EXPECT_EQ(h.state.keyspace().expiry_stats().expired_keys, 1u);
}

TEST_F(ExpireCommands, OtherDatabasesPropagateWithTheirNumber) {
  h.call("SELECT 7");
  set("k");
  db(7).add("k", Value::make_string("v"));
  EXPECT_EQ(h.call("EXPIRE k 1"), ":1");
  EXPECT_EQ(h.take_propagated(), Strings({"7:PEXPIREAT k 1700000001000"}));
  h.advance_ms(1001);
  EXPECT_EQ(h.call("GET k"), "(nil)");
  EXPECT_EQ(h.take_propagated(), Strings({"7:DEL k"}));
  EXPECT_NE(find("k"), nullptr);  // db 0's key is another key
}

// The life of keys as a replica or the AOF sees it.
TEST_F(ExpireCommands, PropagationStreamOfAKeysWholeLife) {
  EXPECT_EQ(h.call("SET k v EX 10"), "+OK");
  EXPECT_EQ(h.call("EXPIRE k 100"), ":1");
  EXPECT_EQ(h.call("SET lazy v PX 5000"), "+OK");
  h.advance_ms(100'000);
  // Due exactly now: alive, neither lazily nor actively expired.
  h.active_expire();
  EXPECT_EQ(h.call("EXISTS k"), ":1");
  h.advance_ms(1);
  h.active_expire();
  EXPECT_EQ(db().size(), 0u);
  EXPECT_EQ(h.take_propagated(),
            Strings({"0:SET k v PXAT 1700000010000", "0:PEXPIREAT k 1700000100000",
                     "0:SET lazy v PXAT 1700000005000", "0:DEL lazy", "0:DEL k"}));
}

TEST_F(ExpireCommands, LazyExpiryOnAccessPropagatesDel) {
  EXPECT_EQ(h.call("SET k v PX 1000"), "+OK");
  h.take_propagated();
  h.advance_ms(1000);
  EXPECT_EQ(h.call("GET k"), "\"v\"");
  h.advance_ms(1);
  EXPECT_EQ(h.call("GET k"), "(nil)");
  EXPECT_EQ(h.take_propagated(), Strings({"0:DEL k"}));
  EXPECT_EQ(h.state.keyspace().expiry_stats().expired_keys, 1u);
  h.state.keyspace().lazy_free().settings().lazy_expire = true;
  h.call("SET j v PX 10");
  h.take_propagated();
  h.advance_ms(11);
  EXPECT_EQ(h.call("TTL j"), ":-2");
  EXPECT_EQ(h.take_propagated(), Strings({"0:UNLINK j"}));
}

TEST_F(ExpireCommands, OneActiveCycleRemovesEveryDueKeyAndNoneEarly) {
  // Deadlines spread over a second, across several databases.
  for (int i = 0; i < 3000; ++i) {
    Database& database = db(i % 4);
    Entry* entry = database.add("k" + std::to_string(i), Value::make_string("v"));
    entry = database.set_expiry(entry, kStart + 1 + (i % 1000));
  }
  set("forever");
  h.advance_ms(500);  // deadlines kStart+1 … kStart+499 are due; kStart+500 is not yet
  h.active_expire();
  size_t remaining = 0;
  for (int i = 0; i < 4; ++i) {
    remaining += db(i).size();
    db(i).for_each([&](const Entry* entry) {
      EXPECT_TRUE(!entry->has_expiry() || db(i).deadline_of(entry) >= now()) << entry->key();
      return true;
    });
  }
  EXPECT_EQ(remaining, 3000u - 3 * 499 + 1);
  EXPECT_EQ(h.take_propagated().size(), 3u * 499);
  h.advance_ms(1000);
  h.active_expire();
  EXPECT_EQ(h.state.keyspace().total_keys(), 1u);
  EXPECT_EQ(h.state.keyspace().expiry_stats().expired_keys, 3000u);
}

TEST_F(ExpireCommands, ExpiretimeOfTheLargestDeadlineDoesNotWrap) {
  set("k");
  EXPECT_EQ(call("PEXPIREAT k 9223372036854775807"), ":1");
  EXPECT_EQ(call("PEXPIRETIME k"), ":9223372036854775807");
  EXPECT_EQ(call("EXPIRETIME k"), ":9223372036854776");  // as redis-server 7.0.15 prints it
}

}  // namespace
}  // namespace keywarden::testing
