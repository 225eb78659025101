// Keyspace family through the dispatcher: replies and error texts as Redis 7.0 words them,
// lazy expiry on every path (with the manual clock), SCAN's guarantee while the table grows,
// the access clock behind OBJECT IDLETIME/FREQ, and what each write propagates.
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "command_harness.h"

namespace keywarden::testing {
namespace {

class KeyCommands : public ::testing::Test {
 protected:
  Database& db(int index = 0) { return h.state.keyspace().db(index); }
  Entry* find(std::string_view key, int index = 0) { return db(index).find_raw(key); }
  int64_t now() const { return h.clock.wall_ms(); }
  // Sets keys quietly: neither their propagation nor their dirty count reach the test.
  void set(std::string_view key, std::string_view value, int index = 0) {
    Database& database = db(index);
    if (Entry* old = database.find_raw(key)) database.remove(old);
    database.add(key, Value::make_string(value));
  }
  void set_with_deadline(std::string_view key, std::string_view value, int64_t deadline) {
    set(key, value);
    (void)db().set_expiry(find(key), deadline);
  }
  // The elements of an array reply, sorted.
  std::vector<std::string> sorted(const RespValue& reply) {
    std::vector<std::string> out;
    for (const RespValue& element : reply.elements) out.push_back(element.str);
    std::sort(out.begin(), out.end());
    return out;
  }
  std::vector<std::string> keys(std::string_view pattern) {
    std::vector<std::string> args = {"KEYS", std::string(pattern)};
    RespValue reply = h.reply_args(args);
    EXPECT_EQ(reply.type, RespType::kArray) << h.last_raw;
    return sorted(reply);
  }

  CommandHarness h;
};

using Strings = std::vector<std::string>;

// --- DEL / UNLINK ---------------------------------------------------------------------------

TEST_F(KeyCommands, DelCountsRemovedKeysAndPropagatesVerbatim) {
  set("a", "1");
  set("b", "2");
  const uint64_t before = h.dirty();
  EXPECT_EQ(h.call("DEL a b c a"), ":2");
  EXPECT_EQ(h.dirty() - before, 2u);
  EXPECT_EQ(h.take_propagated(), Strings({"0:DEL a b c a"}));
  EXPECT_EQ(h.call("DEL a b"), ":0");
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(h.call("DEL"), "-ERR wrong number of arguments for 'del' command");
  EXPECT_EQ(db().size(), 0u);
}

TEST_F(KeyCommands, UnlinkBehavesAsDel) {
  set("a", "1");
  set("b", "2");
  EXPECT_EQ(h.call("UNLINK a x"), ":1");
  EXPECT_EQ(h.take_propagated(), Strings({"0:UNLINK a x"}));
  EXPECT_EQ(h.call("UNLINK x"), ":0");
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(h.call("UNLINK"), "-ERR wrong number of arguments for 'unlink' command");
  h.state.settings().lazyfree_lazy_user_del = true;
  EXPECT_EQ(h.call("DEL b"), ":1");
  EXPECT_EQ(h.take_propagated(), Strings({"0:DEL b"}));
}

TEST_F(KeyCommands, DelOfAnExpiredKeyPropagatesOnlyTheExpiry) {
  set_with_deadline("gone", "v", now() + 100);
  set("live", "v");
  h.advance_ms(101);
  EXPECT_EQ(h.call("DEL gone"), ":0");
  EXPECT_EQ(h.take_propagated(), Strings({"0:DEL gone"}));
  set_with_deadline("gone", "v", now() + 100);
  h.advance_ms(101);
  EXPECT_EQ(h.call("DEL gone live"), ":1");
  // The expiry first, then the command as sent.
  EXPECT_EQ(h.take_propagated(), Strings({"0:DEL gone", "0:DEL gone live"}));
}

// --- EXISTS / TYPE / TOUCH ------------------------------------------------------------------

TEST_F(KeyCommands, ExistsCountsEveryMention) {
  set("a", "1");
  const uint64_t hits = h.state.stats().keyspace_hits;
  const uint64_t misses = h.state.stats().keyspace_misses;
  EXPECT_EQ(h.call("EXISTS a a b a"), ":3");
  EXPECT_EQ(h.state.stats().keyspace_hits - hits, 3u);
  EXPECT_EQ(h.state.stats().keyspace_misses - misses, 1u);
  EXPECT_EQ(h.call("EXISTS b"), ":0");
  EXPECT_EQ(h.call("EXISTS"), "-ERR wrong number of arguments for 'exists' command");
  set_with_deadline("t", "v", now() + 10);
  EXPECT_EQ(h.call("EXISTS t"), ":1");
  h.advance_ms(10);
  EXPECT_EQ(h.call("EXISTS t"), ":1");  // due exactly now: still alive
  h.advance_ms(1);
  EXPECT_EQ(h.call("EXISTS t"), ":0");
  EXPECT_EQ(h.take_propagated(), Strings({"0:DEL t"}));
  EXPECT_EQ(find("t"), nullptr);
}

TEST_F(KeyCommands, TypeNamesTheValueType) {
  set("s", "hello");
  set("i", "12");
  EXPECT_EQ(h.call("TYPE s"), "+string");
  EXPECT_EQ(h.call("TYPE i"), "+string");
  EXPECT_EQ(h.call("TYPE nothing"), "+none");
  set_with_deadline("t", "v", now() + 5);
  h.advance_ms(6);
  EXPECT_EQ(h.call("TYPE t"), "+none");
  EXPECT_EQ(h.call("TYPE a b"), "-ERR wrong number of arguments for 'type' command");
}

TEST_F(KeyCommands, TouchCountsExistingKeys) {
  set("a", "1");
  set("b", "1");
  EXPECT_EQ(h.call("TOUCH a b c a"), ":3");
  EXPECT_EQ(h.call("TOUCH c"), ":0");
  EXPECT_EQ(h.call("TOUCH"), "-ERR wrong number of arguments for 'touch' command");
  EXPECT_TRUE(h.take_propagated().empty());  // not a write
}

// --- KEYS -----------------------------------------------------------------------------------

TEST_F(KeyCommands, KeysMatchesEveryGlobForm) {
  for (const char* key : {"hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo", "", "a"}) {
    set(key, "v");
  }
  EXPECT_EQ(keys("*"), Strings({"", "a", "h*llo", "hallo", "heeeello", "hello", "hllo", "hxllo"}));
  EXPECT_EQ(keys("h?llo"), Strings({"h*llo", "hallo", "hello", "hxllo"}));
  EXPECT_EQ(keys("h*llo"), Strings({"h*llo", "hallo", "heeeello", "hello", "hllo", "hxllo"}));
  EXPECT_EQ(keys("h[ae]llo"), Strings({"hallo", "hello"}));
  EXPECT_EQ(keys("h[^e]llo"), Strings({"h*llo", "hallo", "hxllo"}));
  EXPECT_EQ(keys("h[a-b]llo"), Strings({"hallo"}));
  EXPECT_EQ(keys("h[b-a]llo"), Strings({"hallo"}));
  EXPECT_EQ(keys("h\\*llo"), Strings({"h*llo"}));
  EXPECT_EQ(keys("**"), Strings({"a", "h*llo", "hallo", "heeeello", "hello", "hllo", "hxllo"}));
  EXPECT_EQ(keys("[a]"), Strings({"a"}));
  // Literal patterns: a direct lookup, same answer.
  EXPECT_EQ(keys("hello"), Strings({"hello"}));
  EXPECT_EQ(keys("nothing"), Strings());
  EXPECT_EQ(keys(""), Strings({""}));
  EXPECT_EQ(h.call("KEYS"), "-ERR wrong number of arguments for 'keys' command");
  EXPECT_EQ(h.call("KEYS a b"), "-ERR wrong number of arguments for 'keys' command");
}

TEST_F(KeyCommands, KeysHidesExpiredKeysWithoutDeletingThem) {
  set("live", "v");
  set_with_deadline("due", "v", now() + 10);
  h.advance_ms(10);
  EXPECT_EQ(keys("*"), Strings({"due", "live"}));
  h.advance_ms(1);
  EXPECT_EQ(keys("*"), Strings({"live"}));
  EXPECT_EQ(keys("d*"), Strings());
  EXPECT_EQ(keys("due"), Strings());
  EXPECT_EQ(db().size(), 2u);
  EXPECT_TRUE(h.take_propagated().empty());
}

TEST_F(KeyCommands, KeysRepliesAnEmptyArrayOnAnEmptyDatabase) {
  EXPECT_EQ(h.call("KEYS *"), "[]");
  h.session.resp = 3;
  EXPECT_EQ(h.reply("KEYS *").type, RespType::kArray);
}

// --- SCAN -----------------------------------------------------------------------------------

TEST_F(KeyCommands, ScanErrors) {
  EXPECT_EQ(h.call("SCAN x"), "-ERR invalid cursor");
  EXPECT_EQ(h.call("SCAN 1x"), "-ERR invalid cursor");
  EXPECT_EQ(h.call("SCAN 18446744073709551616"), "-ERR invalid cursor");
  EXPECT_EQ(h.call("SCAN x COUNT 0"), "-ERR invalid cursor");  // the cursor is read first
  EXPECT_EQ(h.call("SCAN 0 COUNT 0"), "-ERR syntax error");
  EXPECT_EQ(h.call("SCAN 0 COUNT -1"), "-ERR syntax error");
  EXPECT_EQ(h.call("SCAN 0 COUNT x"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("SCAN 0 COUNT"), "-ERR syntax error");
  EXPECT_EQ(h.call("SCAN 0 MATCH"), "-ERR syntax error");
  EXPECT_EQ(h.call("SCAN 0 TYPE"), "-ERR syntax error");
  EXPECT_EQ(h.call("SCAN 0 FOO bar"), "-ERR syntax error");
  EXPECT_EQ(h.call("SCAN 0 MATCH * COUNT 0"), "-ERR syntax error");
  EXPECT_EQ(h.call("SCAN"), "-ERR wrong number of arguments for 'scan' command");
}

TEST_F(KeyCommands, ScanAcceptsCursorsAsRedisReadsThem) {
  EXPECT_EQ(h.call("SCAN 0"), "[\"0\", []]");
  EXPECT_EQ(h.call("SCAN -1"), "[\"0\", []]");
  EXPECT_EQ(h.call("SCAN 007"), "[\"0\", []]");
  EXPECT_EQ(h.call("SCAN 18446744073709551615"), "[\"0\", []]");
  set("k", "v");
  EXPECT_EQ(h.call("scan 0 count 5 match k type string"), "[\"0\", [\"k\"]]");
  EXPECT_EQ(h.call("SCAN 0 TYPE STRING"), "[\"0\", [\"k\"]]");
  EXPECT_EQ(h.call("SCAN 0 TYPE list"), "[\"0\", []]");
  EXPECT_EQ(h.call("SCAN 0 TYPE nosuchtype"), "[\"0\", []]");
  EXPECT_EQ(h.call("SCAN 0 MATCH x*"), "[\"0\", []]");
  // Later options override earlier ones.
  EXPECT_EQ(h.call("SCAN 0 MATCH x* MATCH k"), "[\"0\", [\"k\"]]");
}

// Runs a whole SCAN iteration, calling `between` after every step.
template <class Between>
std::set<std::string> scan_all(CommandHarness& h, const std::string& options, Between between) {
  std::set<std::string> seen;
  std::string cursor = "0";
  for (int calls = 0; calls < 100'000; ++calls) {
    RespValue reply = h.reply("SCAN " + cursor + " " + options);
    EXPECT_EQ(reply.type, RespType::kArray) << h.last_raw;
    if (reply.elements.size() != 2) return seen;
    EXPECT_EQ(reply.elements[0].type, RespType::kBulkString);
    for (const RespValue& key : reply.elements[1].elements) seen.insert(key.str);
    cursor = reply.elements[0].str;
    if (cursor == "0") return seen;
    between();
  }
  ADD_FAILURE() << "SCAN never returned cursor 0";
  return seen;
}

TEST_F(KeyCommands, ScanReturnsEveryKeyPresentThroughoutWhileTheTableGrows) {
  std::set<std::string> original;
  for (int i = 0; i < 1000; ++i) {
    std::string key = "key:" + std::to_string(i);
    set(key, std::to_string(i));
    original.insert(key);
  }
  int added = 0;
  std::set<std::string> seen = scan_all(h, "COUNT 7", [&] {
    // Grow the table by several doublings during the iteration.
    for (int i = 0; i < 40; ++i) set("new:" + std::to_string(added++), "v");
  });
  EXPECT_GT(db().size(), 4000u);
  for (const std::string& key : original) EXPECT_TRUE(seen.count(key)) << key;
  for (const std::string& key : seen) {
    EXPECT_TRUE(key.starts_with("key:") || key.starts_with("new:")) << key;
  }
}

TEST_F(KeyCommands, ScanWithMatchCountAndTypeWhileTheTableGrows) {
  std::set<std::string> expected;
  for (int i = 0; i < 2000; ++i) {
    std::string key = (i % 3 == 0 ? "user:" : "item:") + std::to_string(i);
    set(key, "v");
    if (i % 3 == 0) expected.insert(key);
  }
  int added = 0;
  std::set<std::string> seen = scan_all(h, "MATCH user:* COUNT 50 TYPE string", [&] {
    for (int i = 0; i < 100; ++i) set("other:" + std::to_string(added++), "v");
  });
  for (const std::string& key : expected) EXPECT_TRUE(seen.count(key)) << key;
  for (const std::string& key : seen) EXPECT_TRUE(key.starts_with("user:")) << key;
  // No key has that type: nothing comes back, but the iteration still ends.
  EXPECT_TRUE(scan_all(h, "TYPE hash COUNT 100", [] {}).empty());
}

TEST_F(KeyCommands, ScanCountBoundsTheWorkOfOneCall) {
  for (int i = 0; i < 1000; ++i) set("k" + std::to_string(i), "v");
  RespValue reply = h.reply("SCAN 0 COUNT 10");
  ASSERT_EQ(reply.elements.size(), 2u);
  EXPECT_NE(reply.elements[0].str, "0");
  // A bucket holds a few keys: about COUNT of them, never the whole table.
  EXPECT_GE(reply.elements[1].elements.size(), 10u);
  EXPECT_LT(reply.elements[1].elements.size(), 40u);
  reply = h.reply("SCAN 0 COUNT 100000");
  EXPECT_EQ(reply.elements[0].str, "0");
  EXPECT_EQ(reply.elements[1].elements.size(), 1000u);
}

TEST_F(KeyCommands, ScanDeletesExpiredKeysItMeetsAndHidesThem) {
  for (int i = 0; i < 20; ++i) set("live" + std::to_string(i), "v");
  for (int i = 0; i < 10; ++i) set_with_deadline("due" + std::to_string(i), "v", now() + 5);
  h.advance_ms(6);
  // Keys filtered out by MATCH are not examined, so not deleted.
  std::set<std::string> seen = scan_all(h, "MATCH live*", [] {});
  EXPECT_EQ(seen.size(), 20u);
  EXPECT_EQ(db().size(), 30u);
  EXPECT_TRUE(h.take_propagated().empty());
  seen = scan_all(h, "COUNT 3", [] {});
  EXPECT_EQ(seen.size(), 20u);
  for (const std::string& key : seen) EXPECT_TRUE(key.starts_with("live")) << key;
  EXPECT_EQ(db().size(), 20u);
  std::vector<std::string> lines = h.take_propagated();
  std::sort(lines.begin(), lines.end());
  Strings expected;
  for (int i = 0; i < 10; ++i) expected.push_back("0:DEL due" + std::to_string(i));
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(lines, expected);
}

TEST_F(KeyCommands, ScanTypeLooksKeysUpLikeRedis) {
  set("a", "v");
  set_with_deadline("b", "v", now() + 5);
  h.advance_ms(6);
  const uint64_t hits = h.state.stats().keyspace_hits;
  const uint64_t misses = h.state.stats().keyspace_misses;
  // The type check is a read lookup: a hit for a, a miss for the expired b, which it deletes.
  // Its type then reads "none", so TYPE none returns its name (Redis 7.0 does the same).
  EXPECT_EQ(h.call("SCAN 0 TYPE none"), "[\"0\", [\"b\"]]");
  EXPECT_EQ(h.state.stats().keyspace_hits - hits, 1u);
  EXPECT_EQ(h.state.stats().keyspace_misses - misses, 1u);
  EXPECT_EQ(h.take_propagated(), Strings({"0:DEL b"}));
  EXPECT_EQ(db().size(), 1u);
}

// --- RANDOMKEY / DBSIZE ---------------------------------------------------------------------

TEST_F(KeyCommands, RandomkeyReturnsLiveKeys) {
  EXPECT_EQ(h.call("RANDOMKEY"), "(nil)");
  set("only", "v");
  EXPECT_EQ(h.call("RANDOMKEY"), "\"only\"");
  set("other", "v");
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) seen.insert(h.reply("RANDOMKEY").str);
  EXPECT_EQ(seen, std::set<std::string>({"only", "other"}));
  EXPECT_EQ(h.call("RANDOMKEY x"), "-ERR wrong number of arguments for 'randomkey' command");
}

TEST_F(KeyCommands, RandomkeySkipsAndDeletesExpiredKeys) {
  for (int i = 0; i < 3; ++i) set_with_deadline("due" + std::to_string(i), "v", now() + 5);
  h.advance_ms(6);
  EXPECT_EQ(h.call("RANDOMKEY"), "(nil)");
  EXPECT_EQ(db().size(), 0u);
  EXPECT_EQ(h.take_propagated().size(), 3u);
  // Mostly expired keys: still a live key, in bounded draws.
  for (int i = 0; i < 2000; ++i) set_with_deadline("due" + std::to_string(i), "v", now() + 5);
  set("live", "v");
  h.advance_ms(6);
  EXPECT_EQ(h.call("RANDOMKEY"), "\"live\"");
  EXPECT_LE(db().size(), 2001u);
  EXPECT_EQ(db().size() + h.take_propagated().size(), 2001u);
}

TEST_F(KeyCommands, DbsizeCountsTheSelectedDatabase) {
  EXPECT_EQ(h.call("DBSIZE"), ":0");
  set("a", "1");
  set("b", "1");
  set("c", "1", 3);
  EXPECT_EQ(h.call("DBSIZE"), ":2");
  h.call("SELECT 3");
  EXPECT_EQ(h.call("DBSIZE"), ":1");
  EXPECT_EQ(h.call("DBSIZE x"), "-ERR wrong number of arguments for 'dbsize' command");
}

// --- RENAME / RENAMENX ----------------------------------------------------------------------

TEST_F(KeyCommands, RenameMovesValueAndDeadline) {
  set_with_deadline("a", "hello", now() + 5000);
  set("b", "old");
  (void)db().set_expiry(find("b"), now() + 99'000);
  EXPECT_EQ(h.call("RENAME a b"), "+OK");
  EXPECT_EQ(h.take_propagated(), Strings({"0:RENAME a b"}));
  EXPECT_EQ(find("a"), nullptr);
  ASSERT_NE(find("b"), nullptr);
  EXPECT_EQ(db().deadline_of(find("b")), now() + 5000);
  EXPECT_EQ(h.call("GET b"), "\"hello\"");
  EXPECT_EQ(db().volatile_count(), 1u);
  // A key without deadline stays without one.
  set("c", "x");
  EXPECT_EQ(h.call("RENAME c b"), "+OK");
  EXPECT_FALSE(find("b")->has_expiry());
  EXPECT_EQ(db().volatile_count(), 0u);
}

TEST_F(KeyCommands, RenameErrorsAndSameKey) {
  EXPECT_EQ(h.call("RENAME nokey b"), "-ERR no such key");
  EXPECT_EQ(h.call("RENAME nokey nokey"), "-ERR no such key");
  EXPECT_EQ(h.call("RENAMENX nokey b"), "-ERR no such key");
  set("a", "v");
  const uint64_t before = h.dirty();
  EXPECT_EQ(h.call("RENAME a a"), "+OK");
  EXPECT_EQ(h.call("RENAMENX a a"), ":0");
  EXPECT_EQ(h.dirty(), before);
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(h.call("RENAME a"), "-ERR wrong number of arguments for 'rename' command");
  EXPECT_EQ(h.call("RENAMENX a b c"), "-ERR wrong number of arguments for 'renamenx' command");
  set_with_deadline("t", "v", now() + 5);
  h.advance_ms(6);
  EXPECT_EQ(h.call("RENAME t u"), "-ERR no such key");
  EXPECT_EQ(h.take_propagated(), Strings({"0:DEL t"}));
}

TEST_F(KeyCommands, RenamenxOnlyToANewKey) {
  set_with_deadline("a", "1", now() + 7000);
  set("b", "2");
  EXPECT_EQ(h.call("RENAMENX a b"), ":0");
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(h.call("RENAMENX a c"), ":1");
  EXPECT_EQ(h.take_propagated(), Strings({"0:RENAMENX a c"}));
  EXPECT_EQ(db().deadline_of(find("c")), now() + 7000);
  EXPECT_EQ(h.call("PTTL c"), ":7000");
  // An expired target counts as absent.
  set_with_deadline("d", "v", now() + 5);
  h.advance_ms(6);
  EXPECT_EQ(h.call("RENAMENX c d"), ":1");
  EXPECT_EQ(h.take_propagated(), Strings({"0:DEL d", "0:RENAMENX c d"}));
}

// --- COPY -----------------------------------------------------------------------------------

TEST_F(KeyCommands, CopyErrors) {
  set("k", "v");
  EXPECT_EQ(h.call("COPY k k"), "-ERR source and destination objects are the same");
  EXPECT_EQ(h.call("COPY nokey nokey"), "-ERR source and destination objects are the same");
  EXPECT_EQ(h.call("COPY k k DB 0"), "-ERR source and destination objects are the same");
  EXPECT_EQ(h.call("COPY k k DB 1 x"), "-ERR syntax error");
  EXPECT_EQ(h.call("COPY k k x DB 1"), "-ERR syntax error");
  EXPECT_EQ(h.call("COPY k k DB"), "-ERR syntax error");
  EXPECT_EQ(h.call("COPY k k DB x"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("COPY k k DB 16"), "-ERR DB index is out of range");
  EXPECT_EQ(h.call("COPY k k DB -1"), "-ERR DB index is out of range");
  EXPECT_EQ(h.call("COPY k k DB 4294967296"),
            "-ERR value is out of range, value must between -2147483648 and 2147483647");
  EXPECT_EQ(h.call("COPY nokey b DB 99"), "-ERR DB index is out of range");
  EXPECT_EQ(h.call("COPY k"), "-ERR wrong number of arguments for 'copy' command");
  EXPECT_TRUE(h.take_propagated().empty());
}

TEST_F(KeyCommands, CopyKeepsDeadlineAndEncoding) {
  set("int", "12345");
  set("emb", "short");
  set("raw", std::string(60, 'x'));
  h.call("APPEND emb more");  // modified in place: raw
  (void)db().set_expiry(find("int"), now() + 4000);
  h.take_propagated();
  EXPECT_EQ(h.call("COPY int int2"), ":1");
  EXPECT_EQ(h.call("COPY emb emb2"), ":1");
  EXPECT_EQ(h.call("COPY raw raw2"), ":1");
  EXPECT_EQ(h.take_propagated(),
            Strings({"0:COPY int int2", "0:COPY emb emb2", "0:COPY raw raw2"}));
  EXPECT_EQ(h.call("OBJECT ENCODING int2"), "\"int\"");
  EXPECT_EQ(h.call("OBJECT ENCODING emb2"), "\"raw\"");
  EXPECT_EQ(h.call("OBJECT ENCODING raw2"), "\"raw\"");
  set("emb3", "abc");
  EXPECT_EQ(h.call("COPY emb3 emb4"), ":1");
  EXPECT_EQ(h.call("OBJECT ENCODING emb4"), "\"embstr\"");
  EXPECT_EQ(db().deadline_of(find("int2")), now() + 4000);
  EXPECT_FALSE(find("emb2")->has_expiry());
  EXPECT_EQ(h.call("GET int2"), "\"12345\"");
  EXPECT_EQ(h.call("GET emb2"), "\"shortmore\"");
  // The copy is independent of the source.
  h.call("APPEND emb2 !");
  EXPECT_EQ(h.call("GET emb"), "\"shortmore\"");
}

TEST_F(KeyCommands, CopyToAnotherDatabaseAndReplace) {
  set("k", "v");
  set("k", "other", 2);
  EXPECT_EQ(h.call("COPY k k DB 2"), ":0");
  EXPECT_EQ(h.call("COPY k k db 2 replace"), ":1");
  EXPECT_EQ(h.take_propagated(), Strings({"0:COPY k k db 2 replace"}));
  h.call("SELECT 2");
  EXPECT_EQ(h.call("GET k"), "\"v\"");
  h.call("SELECT 0");
  EXPECT_EQ(h.call("COPY nokey x"), ":0");
  set("dst", "old");
  EXPECT_EQ(h.call("COPY k dst"), ":0");
  EXPECT_EQ(h.call("COPY k dst REPLACE"), ":1");
  EXPECT_EQ(h.call("GET dst"), "\"v\"");
  // The last DB option wins.
  EXPECT_EQ(h.call("COPY k k DB 3 DB 4"), ":1");
  EXPECT_NE(find("k", 4), nullptr);
  EXPECT_EQ(find("k", 3), nullptr);
  // An expired source is missing.
  set_with_deadline("t", "v", now() + 5);
  h.advance_ms(6);
  h.take_propagated();
  EXPECT_EQ(h.call("COPY t t2"), ":0");
  EXPECT_EQ(h.take_propagated(), Strings({"0:DEL t"}));
}

// --- MOVE -----------------------------------------------------------------------------------

TEST_F(KeyCommands, MoveErrors) {
  set("k", "v");
  EXPECT_EQ(h.call("MOVE k x"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("MOVE k 99999999999"),
            "-ERR value is out of range, value must between -2147483648 and 2147483647");
  EXPECT_EQ(h.call("MOVE k 16"), "-ERR DB index is out of range");
  EXPECT_EQ(h.call("MOVE k -1"), "-ERR DB index is out of range");
  EXPECT_EQ(h.call("MOVE k 0"), "-ERR source and destination objects are the same");
  EXPECT_EQ(h.call("MOVE nokey 0"), "-ERR source and destination objects are the same");
  EXPECT_EQ(h.call("MOVE k"), "-ERR wrong number of arguments for 'move' command");
  EXPECT_TRUE(h.take_propagated().empty());
}

TEST_F(KeyCommands, MoveCarriesTheDeadline) {
  set_with_deadline("k", "v", now() + 3000);
  EXPECT_EQ(h.call("MOVE nokey 1"), ":0");
  EXPECT_EQ(h.call("MOVE k 1"), ":1");
  EXPECT_EQ(h.take_propagated(), Strings({"0:MOVE k 1"}));
  EXPECT_EQ(find("k"), nullptr);
  ASSERT_NE(find("k", 1), nullptr);
  EXPECT_EQ(db(1).deadline_of(find("k", 1)), now() + 3000);
  EXPECT_EQ(db(0).volatile_count(), 0u);
  EXPECT_EQ(db(1).volatile_count(), 1u);
  set("k", "again");
  EXPECT_EQ(h.call("MOVE k 1"), ":0");  // the target has it
  EXPECT_EQ(h.call("GET k"), "\"again\"");
}

// --- SWAPDB ---------------------------------------------------------------------------------

TEST_F(KeyCommands, SwapdbErrors) {
  EXPECT_EQ(h.call("SWAPDB a b"), "-ERR invalid first DB index");
  EXPECT_EQ(h.call("SWAPDB 99999999999 0"), "-ERR invalid first DB index");
  EXPECT_EQ(h.call("SWAPDB 0 b"), "-ERR invalid second DB index");
  EXPECT_EQ(h.call("SWAPDB 0 -99999999999"), "-ERR invalid second DB index");
  EXPECT_EQ(h.call("SWAPDB 0 16"), "-ERR DB index is out of range");
  EXPECT_EQ(h.call("SWAPDB -1 0"), "-ERR DB index is out of range");
  EXPECT_EQ(h.call("SWAPDB 0"), "-ERR wrong number of arguments for 'swapdb' command");
  EXPECT_TRUE(h.take_propagated().empty());
}

TEST_F(KeyCommands, SwapdbExchangesContents) {
  set("a", "in0");
  set("b", "in1", 1);
  (void)db(1).set_expiry(find("b", 1), now() + 1000);
  const uint64_t before = h.dirty();
  EXPECT_EQ(h.call("SWAPDB 0 1"), "+OK");
  EXPECT_EQ(h.dirty() - before, 1u);
  EXPECT_EQ(h.take_propagated(), Strings({"0:SWAPDB 0 1"}));
  EXPECT_EQ(h.call("GET b"), "\"in1\"");
  EXPECT_EQ(h.call("PTTL b"), ":1000");
  EXPECT_EQ(h.call("EXISTS a"), ":0");
  EXPECT_EQ(db(0).volatile_count(), 1u);
  EXPECT_EQ(db(1).volatile_count(), 0u);
  // With itself: nothing moves, but it still counts as a write.
  EXPECT_EQ(h.call("SWAPDB 3 3"), "+OK");
  EXPECT_EQ(h.take_propagated(), Strings({"0:SWAPDB 3 3"}));
  // Expiry keeps working in the swapped database.
  h.advance_ms(1001);
  h.active_expire();
  EXPECT_EQ(db(0).size(), 0u);
}

// --- FLUSHDB / FLUSHALL ---------------------------------------------------------------------

TEST_F(KeyCommands, FlushdbEmptiesTheSelectedDatabase) {
  set("a", "1");
  set("b", "1");
  set("c", "1", 1);
  (void)db().set_expiry(find("a"), now() + 100);
  const uint64_t before = h.dirty();
  EXPECT_EQ(h.call("FLUSHDB"), "+OK");
  EXPECT_EQ(h.dirty() - before, 2u);
  EXPECT_EQ(db(0).size(), 0u);
  EXPECT_EQ(db(0).volatile_count(), 0u);
  EXPECT_EQ(db(1).size(), 1u);
  // Propagated even when there was nothing to remove.
  EXPECT_EQ(h.call("FLUSHDB"), "+OK");
  EXPECT_EQ(h.call("flushdb async"), "+OK");
  EXPECT_EQ(h.call("FLUSHDB SYNC"), "+OK");
  EXPECT_EQ(h.take_propagated(),
            Strings({"0:FLUSHDB", "0:FLUSHDB", "0:flushdb async", "0:FLUSHDB SYNC"}));
  EXPECT_EQ(h.call("FLUSHDB foo"), "-ERR syntax error");
  EXPECT_EQ(h.call("FLUSHDB SYNC ASYNC"), "-ERR syntax error");
  EXPECT_EQ(h.call("FLUSHDB ASYNC ASYNC"), "-ERR syntax error");
  EXPECT_TRUE(h.take_propagated().empty());
}

TEST_F(KeyCommands, FlushallEmptiesEveryDatabase) {
  set("a", "1");
  set("b", "1", 5);
  set("c", "1", 15);
  const uint64_t before = h.dirty();
  EXPECT_EQ(h.call("FLUSHALL"), "+OK");
  EXPECT_EQ(h.dirty() - before, 3u);  // the three keys, as redis-server 7.0.15 counts them
  EXPECT_EQ(h.state.keyspace().total_keys(), 0u);
  EXPECT_EQ(h.call("FLUSHALL ASYNC"), "+OK");
  EXPECT_EQ(h.call("FLUSHALL sync"), "+OK");
  EXPECT_EQ(h.take_propagated(), Strings({"0:FLUSHALL", "0:FLUSHALL ASYNC", "0:FLUSHALL sync"}));
  EXPECT_EQ(h.call("FLUSHALL x"), "-ERR syntax error");
  EXPECT_EQ(h.call("FLUSHALL ASYNC x"), "-ERR syntax error");
}

// --- OBJECT ---------------------------------------------------------------------------------

TEST_F(KeyCommands, ObjectEncodingAndRefcount) {
  set("int", "42");
  set("big", "123456");
  set("neg", "-1");
  set("emb", "hello");
  set("raw", std::string(45, 'r'));
  EXPECT_EQ(h.call("OBJECT ENCODING int"), "\"int\"");
  EXPECT_EQ(h.call("object encoding emb"), "\"embstr\"");
  EXPECT_EQ(h.call("OBJECT ENCODING raw"), "\"raw\"");
  EXPECT_EQ(h.call("OBJECT ENCODING nokey"), "(nil)");
  EXPECT_EQ(h.call("OBJECT REFCOUNT int"), ":2147483647");  // a shared integer
  EXPECT_EQ(h.call("OBJECT REFCOUNT big"), ":1");
  EXPECT_EQ(h.call("OBJECT REFCOUNT neg"), ":1");
  EXPECT_EQ(h.call("OBJECT REFCOUNT emb"), ":1");
  EXPECT_EQ(h.call("OBJECT REFCOUNT nokey"), "(nil)");
  h.session.resp = 3;
  EXPECT_EQ(h.reply("OBJECT ENCODING nokey").type, RespType::kNull);
  EXPECT_EQ(h.last_raw, "_\r\n");
}

TEST_F(KeyCommands, ObjectErrorsAndHelp) {
  EXPECT_EQ(h.call("OBJECT"), "-ERR wrong number of arguments for 'object' command");
  EXPECT_EQ(h.call("OBJECT foo"), "-ERR unknown subcommand 'foo'. Try OBJECT HELP.");
  EXPECT_EQ(h.call("OBJECT ENCODING"),
            "-ERR wrong number of arguments for 'object|encoding' command");
  EXPECT_EQ(h.call("OBJECT IDLETIME a b"),
            "-ERR wrong number of arguments for 'object|idletime' command");
  EXPECT_EQ(h.call("OBJECT HELP x"), "-ERR wrong number of arguments for 'object|help' command");
  RespValue help = h.reply("OBJECT HELP");
  ASSERT_EQ(help.type, RespType::kArray);
  ASSERT_EQ(help.elements.size(), 15u);
  EXPECT_EQ(help.elements[0].type, RespType::kSimpleString);
  EXPECT_EQ(help.elements[0].str,
            "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  EXPECT_EQ(help.elements[14].str, "    Prints this help.");
}

TEST_F(KeyCommands, ObjectIdletimeFollowsReadsAndWrites) {
  h.call("SET k v");
  EXPECT_EQ(h.call("OBJECT IDLETIME k"), ":0");
  h.advance_ms(5000);
  EXPECT_EQ(h.call("OBJECT IDLETIME k"), ":5");
  // Looking without using does not count as an access.
  h.call("TYPE k");
  h.call("EXISTS k");
  h.call("TTL k");
  h.call("OBJECT ENCODING k");
  EXPECT_EQ(h.call("OBJECT IDLETIME k"), ":5");
  h.call("GET k");
  EXPECT_EQ(h.call("OBJECT IDLETIME k"), ":0");
  h.advance_ms(3000);
  h.call("APPEND k x");  // a write lookup
  EXPECT_EQ(h.call("OBJECT IDLETIME k"), ":0");
  h.advance_ms(2000);
  EXPECT_EQ(h.call("TOUCH k"), ":1");
  EXPECT_EQ(h.call("OBJECT IDLETIME k"), ":0");
  EXPECT_EQ(h.call("OBJECT IDLETIME nokey"), "(nil)");
}

TEST_F(KeyCommands, NoTouchClientsLeaveTheAccessClockExceptForTouch) {
  h.call("SET k v");
  h.advance_ms(4000);
  h.session.no_touch = true;
  h.call("GET k");
  EXPECT_EQ(h.call("OBJECT IDLETIME k"), ":4");
  h.call("TOUCH k");
  EXPECT_EQ(h.call("OBJECT IDLETIME k"), ":0");
}

TEST_F(KeyCommands, RenameKeepsTheAccessClockAndCopyStartsAFreshOne) {
  h.call("SET k v");
  h.advance_ms(10'000);
  h.session.no_touch = true;  // so that the lookups below leave k's clock alone
  h.call("COPY k fresh");
  h.call("RENAME k moved");
  EXPECT_EQ(h.call("OBJECT IDLETIME moved"), ":10");
  EXPECT_EQ(h.call("OBJECT IDLETIME fresh"), ":0");
}

TEST_F(KeyCommands, ObjectFreqNeedsAnLfuPolicy) {
  h.call("SET k v");
  EXPECT_EQ(h.call("OBJECT FREQ k"),
            "-ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please "
            "note that when switching between policies at runtime LRU and LFU data will take "
            "some time to adjust.");
  EXPECT_EQ(h.call("OBJECT FREQ nokey"), "(nil)");  // the lookup comes first
  h.state.settings().maxmemory_policy = kMaxmemoryAllKeysLfu;
  EXPECT_EQ(h.call("OBJECT IDLETIME k"),
            "-ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that "
            "when switching between policies at runtime LRU and LFU data will take some time to "
            "adjust.");
  EXPECT_EQ(h.call("OBJECT IDLETIME nokey"), "(nil)");
  h.call("SET fresh v");
  EXPECT_EQ(h.call("OBJECT FREQ fresh"), ":5");  // new keys start at 5
  // Accesses raise the counter, rarely past the first few; idle minutes decay it.
  for (int i = 0; i < 100; ++i) h.call("GET fresh");
  const int64_t raised = h.reply("OBJECT FREQ fresh").integer;
  EXPECT_GT(raised, 5);
  EXPECT_LT(raised, 30);
  h.advance_ms(3 * 60'000);
  EXPECT_EQ(h.reply("OBJECT FREQ fresh").integer, raised - 3);
  h.state.settings().lfu_decay_time = 0;  // no decay
  h.advance_ms(60 * 60'000);
  EXPECT_EQ(h.reply("OBJECT FREQ fresh").integer, raised);
  h.state.settings().maxmemory_policy = kMaxmemoryVolatileLfu;
  EXPECT_EQ(h.reply("OBJECT FREQ fresh").integer, raised);
}

TEST(AccessClock, LruIdleTimeWrapsAround) {
  const int64_t wrap_ms = int64_t{access_clock::kLruMax + 1} * 1000;
  const uint32_t stamp = access_clock::lru_stamp(wrap_ms - 3000);
  EXPECT_EQ(stamp, access_clock::kLruMax - 2);
  EXPECT_EQ(access_clock::lru_idle_ms(stamp, wrap_ms - 1000), 2000);
  // Past the wrap the clock restarts at 0; Redis counts the distance to the maximum.
  EXPECT_EQ(access_clock::lru_idle_ms(stamp, wrap_ms + 1000), 3000);
}

TEST(AccessClock, LfuCounterSaturatesAndDecays) {
  std::mt19937_64 rng(7);
  uint32_t bits = access_clock::lfu_initial(0);
  EXPECT_EQ(bits & 0xff, access_clock::kLfuInitialCount);
  // With log factor 0 every access counts.
  for (int i = 0; i < 300; ++i) bits = access_clock::lfu_accessed(bits, 0, 0, 1, rng);
  EXPECT_EQ(bits & 0xff, 255u);
  EXPECT_EQ(access_clock::lfu_decayed_count(bits, 10 * 60'000, 1), 245u);
  EXPECT_EQ(access_clock::lfu_decayed_count(bits, 10 * 60'000, 2), 250u);
  EXPECT_EQ(access_clock::lfu_decayed_count(bits, 1000 * 60'000, 1), 0u);
}

}  // namespace
}  // namespace keywarden::testing
