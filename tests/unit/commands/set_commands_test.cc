// Set family through the dispatcher: replies in RESP2 and RESP3 (sets where Redis sends sets),
// every option and error text in Redis 7.0's checking order, WRONGTYPE rules, encodings and
// conversions, deletion of emptied sets, the STORE forms, random replies by shape and
// membership, SSCAN's guarantee, dirty counts, WATCH, and what each write propagates.
#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "command_harness.h"

namespace keywarden::testing {
namespace {

using Lines = std::vector<std::string>;
using Strings = std::vector<std::string>;

class SetCommands : public ::testing::Test {
 protected:
  // SADD key with `count` members prefix0, prefix1, …
  std::string fill(std::string_view key, int count, std::string_view prefix = "m") {
    std::string line = "SADD " + std::string(key);
    for (int i = 0; i < count; ++i) line += " " + std::string(prefix) + std::to_string(i);
    return h.call(line);
  }
  // The elements of an aggregate reply, sorted.
  Strings sorted_elements(std::string_view line) {
    RespValue reply = h.reply(line);
    EXPECT_TRUE(reply.is_aggregate()) << line << " -> " << to_debug_string(reply);
    Strings out;
    for (const RespValue& element : reply.elements) out.push_back(element.str);
    std::sort(out.begin(), out.end());
    return out;
  }
  std::set<std::string> members(std::string_view key) {
    Strings all = sorted_elements("SMEMBERS " + std::string(key));
    return {all.begin(), all.end()};
  }
  // Runs `write` between WATCH key and EXEC: true when it aborted the transaction.
  bool touches(std::string_view key, std::string_view write) {
    EXPECT_EQ(h.call("WATCH " + std::string(key)), "+OK");
    h.call(write);
    EXPECT_EQ(h.call("MULTI"), "+OK");
    EXPECT_EQ(h.call("PING"), "+QUEUED");
    return h.call("EXEC") == "(nil)";
  }

  CommandHarness h;
};

// --- SADD, SREM, SISMEMBER, SMISMEMBER, SCARD, SMEMBERS --------------------------------------

TEST_F(SetCommands, AddRemoveAndMembership) {
  EXPECT_EQ(h.call("SADD s 3 1 2 1"), ":3");
  EXPECT_EQ(h.call("SADD s 2 4"), ":1");
  EXPECT_EQ(h.call("SCARD s"), ":4");
  EXPECT_EQ(h.call("SMEMBERS s"), "[\"1\", \"2\", \"3\", \"4\"]");  // an intset replies sorted
  EXPECT_EQ(h.call("SISMEMBER s 2"), ":1");
  EXPECT_EQ(h.call("SISMEMBER s 02"), ":0");
  EXPECT_EQ(h.call("SISMEMBER s x"), ":0");
  EXPECT_EQ(h.call("SMISMEMBER s 1 x 4 4"), "[:1, :0, :1, :1]");
  EXPECT_EQ(h.call("SREM s 1 x 1"), ":1");
  EXPECT_EQ(h.call("SREM s x"), ":0");
  EXPECT_EQ(h.call("SMEMBERS s"), "[\"2\", \"3\", \"4\"]");
  EXPECT_EQ(h.call("TYPE s"), "+set");
  // Strings keep insertion order while the set is a listpack.
  EXPECT_EQ(h.call("SADD w b a \"\" c"), ":4");
  EXPECT_EQ(h.call("SMEMBERS w"), "[\"b\", \"a\", \"\", \"c\"]");
  EXPECT_EQ(h.call("SISMEMBER w \"\""), ":1");
  // Missing keys are empty sets.
  EXPECT_EQ(h.call("SCARD nokey"), ":0");
  EXPECT_EQ(h.call("SISMEMBER nokey a"), ":0");
  EXPECT_EQ(h.call("SMISMEMBER nokey a b"), "[:0, :0]");
  EXPECT_EQ(h.call("SMEMBERS nokey"), "[]");
  EXPECT_EQ(h.call("SREM nokey a"), ":0");
  EXPECT_EQ(h.call("EXISTS nokey"), ":0");
}

TEST_F(SetCommands, RemovingTheLastMemberDeletesTheKey) {
  EXPECT_EQ(h.call("SADD s a b"), ":2");
  EXPECT_EQ(h.call("SREM s a b c"), ":2");
  EXPECT_EQ(h.call("EXISTS s"), ":0");
  EXPECT_EQ(h.call("SADD s 1"), ":1");
  EXPECT_EQ(h.call("SREM s 1 1"), ":1");
  EXPECT_EQ(h.call("EXISTS s"), ":0");
}

TEST_F(SetCommands, Arity) {
  for (const char* line : {"SADD s", "SREM s", "SMEMBERS", "SMEMBERS a b", "SISMEMBER s",
                           "SISMEMBER s a b", "SMISMEMBER s", "SCARD", "SCARD a b", "SPOP",
                           "SRANDMEMBER", "SMOVE a b", "SMOVE a b c d", "SINTER", "SINTERCARD 1",
                           "SINTERSTORE d", "SUNION", "SUNIONSTORE d", "SDIFF", "SDIFFSTORE d",
                           "SSCAN s"}) {
    const std::string_view view(line);
    std::string name(view.substr(0, view.find(' ')));
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    EXPECT_EQ(h.call(line), "-ERR wrong number of arguments for '" + name + "' command") << line;
  }
}

TEST_F(SetCommands, WrongTypeForEveryCommand) {
  EXPECT_EQ(h.call("SET str x"), "+OK");
  EXPECT_EQ(h.call("SADD s a"), ":1");
  for (const char* line :
       {"SADD str a", "SREM str a", "SMEMBERS str", "SISMEMBER str a", "SMISMEMBER str a",
        "SCARD str", "SPOP str", "SPOP str 1", "SPOP str 0", "SRANDMEMBER str",
        "SRANDMEMBER str 2", "SRANDMEMBER str 0", "SRANDMEMBER str -2",
        "SMOVE str s a", "SMOVE s str a", "SINTER s str", "SINTER nokey str", "SINTERCARD 1 str",
        "SINTERCARD 2 nokey str", "SINTERSTORE d nokey str", "SUNION nokey str",
        "SUNIONSTORE d s str", "SDIFF str nokey", "SDIFF nokey str", "SDIFFSTORE d nokey str",
        "SSCAN str 0"}) {
    EXPECT_EQ(h.call(line), kWrongType) << line;
  }
  // Nothing was created or changed.
  EXPECT_EQ(h.call("EXISTS d"), ":0");
  EXPECT_EQ(h.call("GET str"), "\"x\"");
  EXPECT_EQ(h.call("SMEMBERS s"), "[\"a\"]");
  // A missing source is answered before the destination's type is looked at.
  EXPECT_EQ(h.call("SMOVE nokey str a"), ":0");
  // The destination of a STORE form is overwritten whatever it holds.
  EXPECT_EQ(h.call("SUNIONSTORE str s"), ":1");
  EXPECT_EQ(h.call("TYPE str"), "+set");
  // String commands refuse sets.
  EXPECT_EQ(h.call("GET s"), kWrongType);
  EXPECT_EQ(h.call("HGET s a"), kWrongType);
}

// --- RESP3 ---------------------------------------------------------------------------------

TEST_F(SetCommands, Resp3RepliesSetsWhereRedisDoes) {
  EXPECT_EQ(h.call("SADD a 1 2 3"), ":3");
  EXPECT_EQ(h.call("SADD b 2 3 4"), ":3");
  h.call("HELLO 3");
  EXPECT_EQ(h.call("SMEMBERS a"), "~{\"1\", \"2\", \"3\"}");
  EXPECT_EQ(h.call("SMEMBERS nokey"), "~{}");
  EXPECT_EQ(h.call("SINTER a b"), "~{\"2\", \"3\"}");
  EXPECT_EQ(h.call("SINTER a nokey"), "~{}");
  EXPECT_EQ(h.call("SUNION a b"), "~{\"1\", \"2\", \"3\", \"4\"}");
  EXPECT_EQ(h.call("SUNION nokey"), "~{}");
  EXPECT_EQ(h.call("SDIFF a b"), "~{\"1\"}");
  EXPECT_EQ(h.call("SDIFF nokey a"), "~{}");
  EXPECT_EQ(h.call("SPOP nokey 2"), "~{}");
  EXPECT_EQ(h.call("SPOP a 0"), "~{}");
  EXPECT_EQ(h.call("SPOP nokey"), "(nil)");
  EXPECT_EQ(h.last_raw, "_\r\n");
  EXPECT_EQ(h.call("SRANDMEMBER nokey"), "(nil)");
  EXPECT_EQ(h.last_raw, "_\r\n");
  // SRANDMEMBER with a count and SSCAN reply arrays.
  EXPECT_EQ(h.call("SRANDMEMBER nokey 2"), "[]");
  EXPECT_EQ(h.call("SRANDMEMBER a 5"), "[\"1\", \"2\", \"3\"]");
  EXPECT_EQ(h.call("SSCAN a 0"), "[\"0\", [\"1\", \"2\", \"3\"]]");
  EXPECT_EQ(h.call("SMISMEMBER a 1 9"), "[:1, :0]");
  RespValue popped = h.reply("SPOP b 2");
  EXPECT_EQ(popped.type, RespType::kSet);
  EXPECT_EQ(popped.elements.size(), 2u);
  EXPECT_EQ(h.call("SPOP a 10"), "~{\"1\", \"2\", \"3\"}");
}

// --- Encodings -----------------------------------------------------------------------------

// A set holding a string is kept as a listpack while small, but OBJECT ENCODING reports Redis
// 7.0's "hashtable" for it (7.0 has no listpack sets); the layouts are tested in types/.
TEST_F(SetCommands, EncodingsAndConversions) {
  EXPECT_EQ(h.call("SADD s 1 2 3"), ":3");
  EXPECT_EQ(h.encoding("s"), "\"intset\"");
  EXPECT_EQ(h.call("SADD s x"), ":1");
  EXPECT_EQ(h.encoding("s"), "\"hashtable\"");
  EXPECT_EQ(h.call("SREM s x"), ":1");
  EXPECT_EQ(h.encoding("s"), "\"hashtable\"");  // never back to intset
  EXPECT_EQ(h.call("SADD s " + std::string(65, 'y')), ":1");
  EXPECT_EQ(h.encoding("s"), "\"hashtable\"");

  fill("ints", 512, "");
  EXPECT_EQ(h.encoding("ints"), "\"intset\"");
  EXPECT_EQ(h.call("SADD ints 512"), ":1");
  EXPECT_EQ(h.encoding("ints"), "\"hashtable\"");

  fill("words", 128);
  EXPECT_EQ(h.encoding("words"), "\"hashtable\"");
  EXPECT_EQ(h.call("SADD words extra"), ":1");
  EXPECT_EQ(h.encoding("words"), "\"hashtable\"");

  // A first member that is a string.
  EXPECT_EQ(h.call("SADD fresh hello 1"), ":2");
  EXPECT_EQ(h.encoding("fresh"), "\"hashtable\"");
  EXPECT_EQ(h.call("SMEMBERS fresh"), "[\"hello\", \"1\"]");

  // The limits follow the settings (CONFIG SET in the server).
  h.state.settings().set_limits.max_intset_entries = 2;
  h.state.settings().set_limits.max_listpack_entries = 3;
  h.state.settings().set_limits.max_listpack_value = 4;
  EXPECT_EQ(h.call("SADD t 1 2"), ":2");
  EXPECT_EQ(h.encoding("t"), "\"intset\"");
  EXPECT_EQ(h.call("SADD t 3"), ":1");
  EXPECT_EQ(h.encoding("t"), "\"hashtable\"");
  EXPECT_EQ(h.call("SADD u a b c"), ":3");
  EXPECT_EQ(h.encoding("u"), "\"hashtable\"");
  EXPECT_EQ(h.call("SADD u d"), ":1");
  EXPECT_EQ(h.encoding("u"), "\"hashtable\"");
  EXPECT_EQ(h.call("SADD v abcde"), ":1");
  EXPECT_EQ(h.encoding("v"), "\"hashtable\"");
  EXPECT_EQ(h.call("SADD w 12345"), ":1");  // an integer: intset whatever its length
  EXPECT_EQ(h.encoding("w"), "\"intset\"");
  EXPECT_EQ(h.call("SADD w a"), ":1");  // 12345 is too long as listpack text
  EXPECT_EQ(h.encoding("w"), "\"hashtable\"");
}

TEST_F(SetCommands, StoredResultsTakeTheEncodingRedisGivesThem) {
  fill("big", 600, "");  // 600 integers: a hashtable
  EXPECT_EQ(h.encoding("big"), "\"hashtable\"");
  fill("small", 50, "");
  EXPECT_EQ(h.call("SINTERSTORE d big small"), ":50");
  EXPECT_EQ(h.encoding("d"), "\"intset\"");
  EXPECT_EQ(h.call("SUNIONSTORE d big small"), ":600");
  EXPECT_EQ(h.encoding("d"), "\"hashtable\"");
  EXPECT_EQ(h.call("SDIFFSTORE d big small"), ":550");
  EXPECT_EQ(h.encoding("d"), "\"hashtable\"");
  EXPECT_EQ(h.call("SADD word x"), ":1");
  EXPECT_EQ(h.call("SUNIONSTORE d small word"), ":51");
  EXPECT_EQ(h.encoding("d"), "\"hashtable\"");
  // SDIFF's copy-then-remove algorithm passes through a hashtable for a big first set, which
  // stays one even when the result is small (as in Redis).
  for (int part = 0; part < 3; ++part) {
    std::string line = "SADD cut" + std::to_string(part);
    for (int i = part * 100; i < part * 100 + 100; ++i) line += " " + std::to_string(i);
    h.call(line);
  }
  EXPECT_EQ(h.call("SDIFFSTORE d big cut0 cut1 cut2"), ":300");
  EXPECT_EQ(h.encoding("d"), "\"hashtable\"");
  EXPECT_EQ(h.call("SDIFFSTORE d big cut0 cut1"), ":400");
  EXPECT_EQ(h.encoding("d"), "\"hashtable\"");
  // With one set to remove it probes the first set instead, adding only the survivors.
  EXPECT_EQ(h.call("SDIFFSTORE d big cut0"), ":500");
  EXPECT_EQ(h.encoding("d"), "\"intset\"");
  // SPOP that rebuilds the survivors makes them an intset again.
  EXPECT_EQ(h.reply("SPOP big 590").elements.size(), 590u);
  EXPECT_EQ(h.call("SCARD big"), ":10");
  EXPECT_EQ(h.encoding("big"), "\"intset\"");
  // COPY keeps the encoding.
  EXPECT_EQ(h.call("COPY word word2"), ":1");
  EXPECT_EQ(h.encoding("word2"), "\"hashtable\"");
  EXPECT_EQ(h.call("SMEMBERS word2"), "[\"x\"]");
}

// --- SPOP ----------------------------------------------------------------------------------

TEST_F(SetCommands, SpopWithoutCount) {
  EXPECT_EQ(h.call("SPOP nokey"), "(nil)");
  EXPECT_EQ(h.call("SADD s a b"), ":2");
  h.take_propagated();
  const uint64_t before = h.dirty();
  RespValue first = h.reply("SPOP s");
  ASSERT_EQ(first.type, RespType::kBulkString);
  EXPECT_TRUE(first.str == "a" || first.str == "b");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SREM s " + first.str}));
  RespValue second = h.reply("SPOP s");
  EXPECT_NE(second.str, first.str);
  // The last member deletes the key, still propagated as SREM.
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SREM s " + second.str}));
  EXPECT_EQ(h.call("EXISTS s"), ":0");
  EXPECT_EQ(h.dirty() - before, 2u);
  EXPECT_EQ(h.call("SPOP s"), "(nil)");
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(h.call("SPOP s 1 2"), "-ERR syntax error");
}

TEST_F(SetCommands, SpopWithCount) {
  for (const char* bad : {"-1", "abc", "1.5", "", "9223372036854775808"}) {
    EXPECT_EQ(h.call("SPOP s \"" + std::string(bad) + "\""),
              "-ERR value is out of range, must be positive")
        << bad;
  }
  EXPECT_EQ(h.call("SET str x"), "+OK");
  EXPECT_EQ(h.call("SPOP str -1"), "-ERR value is out of range, must be positive");  // first
  EXPECT_EQ(h.call("SPOP nokey 3"), "[]");
  fill("s", 10, "");
  h.take_propagated();
  uint64_t before = h.dirty();
  EXPECT_EQ(h.call("SPOP s 0"), "[]");
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(h.dirty(), before);

  // Few: drawn one by one, each propagated as an SREM, together in MULTI/EXEC.
  Strings popped = sorted_elements("SPOP s 2");
  ASSERT_EQ(popped.size(), 2u);
  EXPECT_NE(popped[0], popped[1]);
  Lines lines = h.take_propagated();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines.front(), "0:MULTI");
  EXPECT_EQ(lines.back(), "0:EXEC");
  Strings srem_members = {lines[1].substr(9), lines[2].substr(9)};
  std::sort(srem_members.begin(), srem_members.end());
  EXPECT_EQ(srem_members, popped);
  EXPECT_EQ(h.call("SCARD s"), ":8");
  EXPECT_EQ(h.dirty() - before, 2u);
  for (const std::string& member : popped) EXPECT_EQ(h.call("SISMEMBER s " + member), ":0");

  // One: a single SREM, no transaction.
  popped = sorted_elements("SPOP s 1");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SREM s " + popped[0]}));

  // Most: the survivors are drawn instead; the popped are still what leaves the set.
  before = h.dirty();
  popped = sorted_elements("SPOP s 6");
  EXPECT_EQ(popped.size(), 6u);
  EXPECT_EQ(h.take_propagated().size(), 8u);
  EXPECT_EQ(h.call("SCARD s"), ":1");
  EXPECT_EQ(h.dirty() - before, 6u);

  // All (or more): the key is deleted and a DEL propagated.
  EXPECT_EQ(h.call("SADD s a"), ":1");
  h.take_propagated();
  before = h.dirty();
  EXPECT_EQ(sorted_elements("SPOP s 100").size(), 2u);
  EXPECT_EQ(h.call("EXISTS s"), ":0");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:DEL s"}));
  EXPECT_EQ(h.dirty() - before, 2u);
  EXPECT_EQ(h.call("SADD s a"), ":1");
  EXPECT_EQ(h.call("SPOP s 1"), "[\"a\"]");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SADD s a", "0:DEL s"}));
}

TEST_F(SetCommands, SpopInsideMultiLeavesTheWrappingToExec) {
  fill("s", 10);
  h.take_propagated();
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SPOP s 2"), "+QUEUED");
  EXPECT_EQ(h.call("SADD t x"), "+QUEUED");
  EXPECT_EQ(h.reply("EXEC").elements.size(), 2u);
  Lines lines = h.take_propagated();
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], "0:MULTI");
  EXPECT_EQ(lines[1].substr(0, 9), "0:SREM s ");
  EXPECT_EQ(lines[2].substr(0, 9), "0:SREM s ");
  EXPECT_EQ(lines[3], "0:SADD t x");
  EXPECT_EQ(lines[4], "0:EXEC");
}

// --- SRANDMEMBER ---------------------------------------------------------------------------

TEST_F(SetCommands, Srandmember) {
  EXPECT_EQ(h.call("SRANDMEMBER nokey"), "(nil)");
  EXPECT_EQ(h.call("SRANDMEMBER nokey 3"), "[]");
  EXPECT_EQ(h.call("SRANDMEMBER nokey -3"), "[]");
  EXPECT_EQ(h.call("SRANDMEMBER s abc"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("SRANDMEMBER s 1.5"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("SRANDMEMBER s -9223372036854775808"),
            "-ERR value is out of range, value must between -9223372036854775807 and "
            "9223372036854775807");
  EXPECT_EQ(h.call("SRANDMEMBER s 1 2"), "-ERR syntax error");
  EXPECT_EQ(h.call("SET str x"), "+OK");
  EXPECT_EQ(h.call("SRANDMEMBER str abc"), "-ERR value is not an integer or out of range");

  for (const int size : {5, 200, 600}) {  // listpack, hashtable, hashtable of integers
    const std::string key = "s" + std::to_string(size);
    fill(key, size, size == 600 ? "" : "m");
    const std::set<std::string> all = members(key);
    RespValue one = h.reply("SRANDMEMBER " + key);
    EXPECT_TRUE(all.count(one.str));
    EXPECT_EQ(h.call("SRANDMEMBER " + key + " 0"), "[]");
    // Positive: distinct members, at most the whole set.
    for (int count : {1, 3, size / 2, size - 1, size, size + 10}) {
      Strings chosen = sorted_elements("SRANDMEMBER " + key + " " + std::to_string(count));
      EXPECT_EQ(chosen.size(), static_cast<size_t>(std::min(count, size))) << key << count;
      EXPECT_EQ(std::set<std::string>(chosen.begin(), chosen.end()).size(), chosen.size());
      for (const std::string& member : chosen) EXPECT_TRUE(all.count(member));
    }
    // Negative: exactly |count| draws, repetitions allowed.
    Strings draws = sorted_elements("SRANDMEMBER " + key + " -" + std::to_string(size * 3));
    EXPECT_EQ(draws.size(), static_cast<size_t>(size * 3));
    for (const std::string& member : draws) EXPECT_TRUE(all.count(member));
    EXPECT_LT(std::set<std::string>(draws.begin(), draws.end()).size(), draws.size());
    // Nothing changes.
    EXPECT_EQ(h.call("SCARD " + key), ":" + std::to_string(size));
  }
  h.take_propagated();
  h.call("SRANDMEMBER s5 3");
  EXPECT_TRUE(h.take_propagated().empty());
}

// --- SMOVE ---------------------------------------------------------------------------------

TEST_F(SetCommands, Smove) {
  EXPECT_EQ(h.call("SADD src a b"), ":2");
  h.take_propagated();
  uint64_t before = h.dirty();
  EXPECT_EQ(h.call("SMOVE src dst a"), ":1");
  EXPECT_EQ(h.call("SMEMBERS src"), "[\"b\"]");
  EXPECT_EQ(h.call("SMEMBERS dst"), "[\"a\"]");
  EXPECT_EQ(h.dirty() - before, 2u);
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SMOVE src dst a"}));
  EXPECT_EQ(h.call("SMOVE src dst zz"), ":0");
  EXPECT_EQ(h.call("SMOVE nokey dst a"), ":0");
  EXPECT_TRUE(h.take_propagated().empty());
  // Into a set that already has it: removed from the source only.
  EXPECT_EQ(h.call("SADD src a"), ":1");
  h.take_propagated();
  before = h.dirty();
  EXPECT_EQ(h.call("SMOVE src dst a"), ":1");
  EXPECT_EQ(h.call("SMEMBERS dst"), "[\"a\"]");
  EXPECT_EQ(h.dirty() - before, 1u);
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SMOVE src dst a"}));
  // Moving the last member deletes the source.
  EXPECT_EQ(h.call("SMOVE src dst b"), ":1");
  EXPECT_EQ(h.call("EXISTS src"), ":0");
  EXPECT_EQ(h.call("SMEMBERS dst"), "[\"a\", \"b\"]");
  // Within one set: a no-op that says whether the member is there.
  before = h.dirty();
  h.take_propagated();
  EXPECT_EQ(h.call("SMOVE dst dst a"), ":1");
  EXPECT_EQ(h.call("SMOVE dst dst zz"), ":0");
  EXPECT_EQ(h.dirty(), before);
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(h.call("SCARD dst"), ":2");
  // An integer moved into a new set makes an intset.
  EXPECT_EQ(h.call("SADD mixed x 7"), ":2");
  EXPECT_EQ(h.call("SMOVE mixed n 7"), ":1");
  EXPECT_EQ(h.encoding("n"), "\"intset\"");
  EXPECT_EQ(h.call("SMOVE mixed n x"), ":1");
  EXPECT_EQ(h.encoding("n"), "\"hashtable\"");
}

TEST_F(SetCommands, SmoveTouchesTheDestinationOnlyWhenItGainsTheMember) {
  EXPECT_EQ(h.call("SADD src a b c"), ":3");
  EXPECT_EQ(h.call("SADD dst a"), ":1");
  EXPECT_FALSE(touches("dst", "SMOVE src dst a"));
  EXPECT_TRUE(touches("src", "SMOVE src dst b"));
  EXPECT_TRUE(touches("dst", "SMOVE src dst c"));
  EXPECT_FALSE(touches("dst", "SMOVE dst dst a"));
  EXPECT_FALSE(touches("src", "SMOVE nokey src a"));
}

// --- SINTER, SINTERCARD, SINTERSTORE ---------------------------------------------------------

TEST_F(SetCommands, Sinter) {
  EXPECT_EQ(h.call("SADD a 1 2 3 x y"), ":5");
  EXPECT_EQ(h.call("SADD b 2 3 4 y"), ":4");
  EXPECT_EQ(h.call("SADD c 3 y z"), ":3");
  EXPECT_EQ(sorted_elements("SINTER a b"), (Strings{"2", "3", "y"}));
  EXPECT_EQ(sorted_elements("SINTER a b c"), (Strings{"3", "y"}));
  EXPECT_EQ(sorted_elements("SINTER a a"), (Strings{"1", "2", "3", "x", "y"}));
  EXPECT_EQ(sorted_elements("SINTER a"), (Strings{"1", "2", "3", "x", "y"}));
  EXPECT_EQ(h.call("SINTER a nokey b"), "[]");
  EXPECT_EQ(h.call("SINTER nokey"), "[]");
  EXPECT_EQ(h.call("SADD i1 1 2 3"), ":3");
  EXPECT_EQ(h.call("SADD i2 3 2 9"), ":3");
  EXPECT_EQ(h.call("SINTER i1 i2"), "[\"2\", \"3\"]");
}

TEST_F(SetCommands, Sintercard) {
  EXPECT_EQ(h.call("SADD a 1 2 3 x y"), ":5");
  EXPECT_EQ(h.call("SADD b 2 3 4 y"), ":4");
  EXPECT_EQ(h.call("SINTERCARD 2 a b"), ":3");
  EXPECT_EQ(h.call("SINTERCARD 1 a"), ":5");
  EXPECT_EQ(h.call("SINTERCARD 2 a b LIMIT 2"), ":2");
  EXPECT_EQ(h.call("SINTERCARD 2 a b limit 0"), ":3");
  EXPECT_EQ(h.call("SINTERCARD 2 a b LIMIT 100"), ":3");
  EXPECT_EQ(h.call("SINTERCARD 2 a b LIMIT 1 LIMIT 2"), ":2");  // the last one counts
  EXPECT_EQ(h.call("SINTERCARD 2 a nokey"), ":0");
  EXPECT_EQ(h.call("SINTERCARD 1 nokey"), ":0");
  // Keys are the first numkeys arguments, even when they look like options.
  EXPECT_EQ(h.call("SINTERCARD 2 a LIMIT"), ":0");
  for (const char* bad : {"0", "-1", "abc", "1.5", "9223372036854775808"}) {
    EXPECT_EQ(h.call("SINTERCARD " + std::string(bad) + " a"),
              "-ERR numkeys should be greater than 0")
        << bad;
  }
  EXPECT_EQ(h.call("SINTERCARD 3 a b"),
            "-ERR Number of keys can't be greater than number of args");
  EXPECT_EQ(h.call("SINTERCARD 9223372036854775807 a"),
            "-ERR Number of keys can't be greater than number of args");
  EXPECT_EQ(h.call("SINTERCARD 1 a LIMIT"), "-ERR syntax error");
  EXPECT_EQ(h.call("SINTERCARD 1 a LIMIT -1"), "-ERR LIMIT can't be negative");
  EXPECT_EQ(h.call("SINTERCARD 1 a LIMIT abc"), "-ERR LIMIT can't be negative");
  EXPECT_EQ(h.call("SINTERCARD 1 a FOO"), "-ERR syntax error");
  EXPECT_EQ(h.call("SINTERCARD 1 a LIMIT 1 FOO"), "-ERR syntax error");
  // Options are read before any key.
  EXPECT_EQ(h.call("SET str x"), "+OK");
  EXPECT_EQ(h.call("SINTERCARD 1 str LIMIT -1"), "-ERR LIMIT can't be negative");
  EXPECT_EQ(h.call("SINTERCARD 1 str"), kWrongType);
  EXPECT_TRUE(h.call("COMMAND INFO sintercard")
                  .starts_with("[[\"sintercard\", :-3, [+readonly, +movablekeys], :0, :0, :0, "
                               "[+@read, +@set, +@slow], []"));
}

TEST_F(SetCommands, Sinterstore) {
  EXPECT_EQ(h.call("SADD a 1 2 3 x"), ":4");
  EXPECT_EQ(h.call("SADD b 2 3 x"), ":3");
  h.take_propagated();
  uint64_t before = h.dirty();
  EXPECT_EQ(h.call("SINTERSTORE d a b"), ":3");
  EXPECT_EQ(sorted_elements("SMEMBERS d"), (Strings{"2", "3", "x"}));
  EXPECT_EQ(h.dirty() - before, 1u);
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SINTERSTORE d a b"}));
  // The destination may be a source.
  EXPECT_EQ(h.call("SINTERSTORE a a d"), ":3");
  EXPECT_EQ(sorted_elements("SMEMBERS a"), (Strings{"2", "3", "x"}));
  // An empty result deletes the destination, propagated only when there was one.
  h.take_propagated();
  EXPECT_EQ(h.call("SINTERSTORE d a nokey"), ":0");
  EXPECT_EQ(h.call("EXISTS d"), ":0");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SINTERSTORE d a nokey"}));
  before = h.dirty();
  EXPECT_EQ(h.call("SINTERSTORE d a nokey"), ":0");
  EXPECT_EQ(h.dirty(), before);
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(h.call("SADD e 9"), ":1");
  EXPECT_EQ(h.call("SADD d 1"), ":1");
  h.take_propagated();
  EXPECT_EQ(h.call("SINTERSTORE d a e"), ":0");  // disjoint
  EXPECT_EQ(h.call("EXISTS d"), ":0");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SINTERSTORE d a e"}));
  EXPECT_EQ(h.call("SINTERSTORE d a e"), ":0");
  EXPECT_TRUE(h.take_propagated().empty());
}

// --- SUNION, SDIFF and their STORE forms -----------------------------------------------------

TEST_F(SetCommands, SunionAndSdiff) {
  EXPECT_EQ(h.call("SADD a 1 2 3 x"), ":4");
  EXPECT_EQ(h.call("SADD b 2 y"), ":2");
  EXPECT_EQ(h.call("SADD c 3 x z"), ":3");
  EXPECT_EQ(sorted_elements("SUNION a b c"), (Strings{"1", "2", "3", "x", "y", "z"}));
  EXPECT_EQ(sorted_elements("SUNION nokey b nokey"), (Strings{"2", "y"}));
  EXPECT_EQ(h.call("SUNION nokey"), "[]");
  EXPECT_EQ(sorted_elements("SDIFF a b"), (Strings{"1", "3", "x"}));
  EXPECT_EQ(sorted_elements("SDIFF a b c"), (Strings{"1"}));
  EXPECT_EQ(sorted_elements("SDIFF a nokey"), (Strings{"1", "2", "3", "x"}));
  EXPECT_EQ(h.call("SDIFF nokey a"), "[]");
  EXPECT_EQ(h.call("SDIFF a a"), "[]");
  EXPECT_EQ(h.call("SDIFF a b a"), "[]");  // the first set given again
  EXPECT_EQ(h.call("SADD i 5 1 3"), ":3");
  EXPECT_EQ(h.call("SADD j 4 2"), ":2");
  EXPECT_EQ(h.call("SUNION i j"), "[\"1\", \"2\", \"3\", \"4\", \"5\"]");  // an intset result
  // Both difference algorithms: a small first set probes; a big one among small ones copies.
  fill("big", 300);
  fill("s1", 10);
  fill("s2", 10, "n");
  fill("s3", 5, "m1");  // m10..m14
  EXPECT_EQ(sorted_elements("SDIFF s1 big").size(), 0u);
  EXPECT_EQ(sorted_elements("SDIFF big s1 s2 s3").size(), 285u);
  EXPECT_EQ(sorted_elements("SDIFF big s1 s1 s1 s1 s1").size(), 290u);
}

TEST_F(SetCommands, StoreFormsReplaceTheDestinationAndDropItsTtl) {
  EXPECT_EQ(h.call("SADD a 1 2"), ":2");
  EXPECT_EQ(h.call("SADD b 2 3"), ":2");
  EXPECT_EQ(h.call("SET d x EX 100"), "+OK");
  h.take_propagated();
  EXPECT_EQ(h.call("SUNIONSTORE d a b"), ":3");
  EXPECT_EQ(h.call("TTL d"), ":-1");
  EXPECT_EQ(h.call("SMEMBERS d"), "[\"1\", \"2\", \"3\"]");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SUNIONSTORE d a b"}));
  EXPECT_EQ(h.call("EXPIRE d 100"), ":1");
  EXPECT_EQ(h.call("SDIFFSTORE d a b"), ":1");
  EXPECT_EQ(h.call("TTL d"), ":-1");
  EXPECT_EQ(h.call("SMEMBERS d"), "[\"1\"]");
  EXPECT_EQ(h.call("EXPIRE d 100"), ":1");
  EXPECT_EQ(h.call("SINTERSTORE d a b"), ":1");
  EXPECT_EQ(h.call("TTL d"), ":-1");
  // Empty results delete.
  h.take_propagated();
  EXPECT_EQ(h.call("SDIFFSTORE d a a"), ":0");
  EXPECT_EQ(h.call("EXISTS d"), ":0");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SDIFFSTORE d a a"}));
  EXPECT_EQ(h.call("SUNIONSTORE d nokey"), ":0");
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(h.call("SET d x"), "+OK");
  EXPECT_EQ(h.call("SUNIONSTORE d nokey nokey2"), ":0");
  EXPECT_EQ(h.call("EXISTS d"), ":0");
  // Into the source itself.
  EXPECT_EQ(h.call("SUNIONSTORE a a b"), ":3");
  EXPECT_EQ(h.call("SMEMBERS a"), "[\"1\", \"2\", \"3\"]");
  EXPECT_EQ(h.call("SDIFFSTORE a a b"), ":1");
  EXPECT_EQ(h.call("SMEMBERS a"), "[\"1\"]");
}

TEST_F(SetCommands, EmptyResultDeletesAnExpiredDestinationLikeRedis) {
  // Redis deletes the destination without an expiry check when the result is empty, so the
  // command itself is what propagates.
  EXPECT_EQ(h.call("SADD d 1"), ":1");
  EXPECT_EQ(h.call("PEXPIRE d 10"), ":1");
  h.advance_ms(50);
  h.take_propagated();
  EXPECT_EQ(h.call("SINTERSTORE d nokey"), ":0");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SINTERSTORE d nokey"}));
  EXPECT_EQ(h.call("EXISTS d"), ":0");
}

// --- SSCAN ---------------------------------------------------------------------------------

TEST_F(SetCommands, Sscan) {
  EXPECT_EQ(h.call("SSCAN nokey 0"), "[\"0\", []]");
  EXPECT_EQ(h.call("SSCAN nokey 0 COUNT 0"), "[\"0\", []]");  // options unread for no key
  EXPECT_EQ(h.call("SSCAN s abc"), "-ERR invalid cursor");
  EXPECT_EQ(h.call("SADD s a b c 1"), ":4");
  EXPECT_EQ(h.call("SSCAN s 0"), "[\"0\", [\"a\", \"b\", \"c\", \"1\"]]");
  EXPECT_EQ(h.call("SSCAN s 0 MATCH ?"), "[\"0\", [\"a\", \"b\", \"c\", \"1\"]]");
  EXPECT_EQ(h.call("SSCAN s 0 MATCH [ab] COUNT 1"), "[\"0\", [\"a\", \"b\"]]");
  EXPECT_EQ(h.call("SSCAN s 123 match c"), "[\"0\", [\"c\"]]");  // flat sets ignore the cursor
  EXPECT_EQ(h.call("SSCAN s 0 COUNT 0"), "-ERR syntax error");
  EXPECT_EQ(h.call("SSCAN s 0 COUNT -1"), "-ERR syntax error");
  EXPECT_EQ(h.call("SSCAN s 0 COUNT abc"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("SSCAN s 0 MATCH"), "-ERR syntax error");
  EXPECT_EQ(h.call("SSCAN s 0 TYPE set"), "-ERR syntax error");
  EXPECT_EQ(h.call("SSCAN s 0 FOO bar"), "-ERR syntax error");
  EXPECT_EQ(h.call("SADD i 3 1 2"), ":3");
  EXPECT_EQ(h.call("SSCAN i 0"), "[\"0\", [\"1\", \"2\", \"3\"]]");
}

TEST_F(SetCommands, SscanOfAHashtableReturnsEveryMemberAcrossResizes) {
  fill("s", 1000);
  int steps = 0;
  const std::vector<std::string> items = h.scan_all(
      "SSCAN s", "COUNT 20",
      [&](int step) {
        if (step == 5) fill("s", 3000, "grow");
        if (step == 30) {
          for (int i = 0; i < 3000; i += 100) {
            std::string line = "SREM s";
            for (int j = i; j < i + 100; ++j) line += " grow" + std::to_string(j);
            h.call(line);
          }
        }
      },
      &steps);
  EXPECT_GT(steps, 10);
  std::set<std::string> seen(items.begin(), items.end());
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.count("m" + std::to_string(i))) << i;
  // MATCH filters what the walk collects.
  const std::vector<std::string> matched = h.scan_all("SSCAN s", "MATCH m99*");
  EXPECT_EQ(std::set<std::string>(matched.begin(), matched.end()),
            (std::set<std::string>{"m99", "m990", "m991", "m992", "m993", "m994", "m995", "m996",
                                   "m997", "m998", "m999"}));
}

// --- Bookkeeping ---------------------------------------------------------------------------

TEST_F(SetCommands, DirtyCountsAndPropagation) {
  uint64_t before = h.dirty();
  EXPECT_EQ(h.call("SADD s a b a"), ":2");
  EXPECT_EQ(h.dirty() - before, 2u);
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SADD s a b a"}));
  EXPECT_EQ(h.call("SADD s a"), ":0");
  EXPECT_TRUE(h.take_propagated().empty());
  before = h.dirty();
  EXPECT_EQ(h.call("SREM s a zz b"), ":2");
  EXPECT_EQ(h.dirty() - before, 2u);
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SREM s a zz b"}));
  EXPECT_EQ(h.call("SREM s a"), ":0");
  EXPECT_TRUE(h.take_propagated().empty());
  // Reads propagate nothing.
  EXPECT_EQ(h.call("SADD r 1"), ":1");
  h.take_propagated();
  for (const char* read : {"SMEMBERS r", "SISMEMBER r 1", "SMISMEMBER r 1", "SCARD r",
                           "SRANDMEMBER r", "SINTER r", "SINTERCARD 1 r", "SUNION r", "SDIFF r",
                           "SSCAN r 0"}) {
    h.call(read);
  }
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(h.call("SELECT 3"), "+OK");
  EXPECT_EQ(h.call("SADD s x"), ":1");
  EXPECT_EQ(h.take_propagated(), (Lines{"3:SADD s x"}));
}

TEST_F(SetCommands, WritesTouchWatchedKeys) {
  // Each write starts from the same sets: s = {a..f}, o = {1}.
  auto reset = [&] {
    h.call("DEL s o fresh gone");
    EXPECT_EQ(h.call("SADD s a b c d e f"), ":6");
    EXPECT_EQ(h.call("SADD o 1"), ":1");
  };
  for (const char* write : {"SADD s x", "SREM s a", "SPOP s", "SPOP s 2", "SPOP s 6",
                            "SMOVE s o a", "SINTERSTORE s s", "SUNIONSTORE s s o",
                            "SDIFFSTORE s s o", "SINTERSTORE s nokey", "SMOVE o s 1"}) {
    reset();
    EXPECT_TRUE(touches("s", write)) << write;
  }
  reset();
  EXPECT_TRUE(touches("fresh", "SADD fresh 1"));
  EXPECT_TRUE(touches("gone", "SMOVE s gone b"));
  for (const char* noop : {"SADD s b", "SREM s zz", "SREM nokey a", "SPOP s 0", "SPOP nokey",
                           "SMEMBERS s", "SRANDMEMBER s 2", "SINTERSTORE nokey2 nokey",
                           "SMOVE s s b", "SMOVE o s zz", "SUNIONSTORE d s"}) {
    reset();
    EXPECT_FALSE(touches("s", noop)) << noop;
  }
  EXPECT_FALSE(touches("nokey2", "SINTERSTORE nokey2 nokey"));
}

TEST_F(SetCommands, CommandInfo) {
  auto info = [&](std::string_view name) { return h.call("COMMAND INFO " + std::string(name)); };
  EXPECT_TRUE(info("sadd").starts_with(
      "[[\"sadd\", :-3, [+write, +denyoom, +fast], :1, :1, :1, [+@write, +@set, +@fast], []"));
  EXPECT_TRUE(info("smove").starts_with(
      "[[\"smove\", :4, [+write, +fast], :1, :2, :1, [+@write, +@set, +@fast], []"));
  EXPECT_TRUE(info("sunionstore").starts_with(
      "[[\"sunionstore\", :-3, [+write, +denyoom], :1, :-1, :1, [+@write, +@set, +@slow], []"));
  // Random replies carry Redis 7.0's nondeterministic_output tip.
  EXPECT_TRUE(info("srandmember").starts_with(
      "[[\"srandmember\", :-2, [+readonly], :1, :1, :1, [+@read, +@set, +@slow], "
      "[\"nondeterministic_output\"]"));
  EXPECT_TRUE(info("spop").starts_with(
      "[[\"spop\", :-2, [+write, +fast], :1, :1, :1, [+@write, +@set, +@fast], "
      "[\"nondeterministic_output\"]"));
  EXPECT_EQ(h.call("COMMAND DOCS scard"),
            "[\"scard\", [\"summary\", \"Get the number of members in a set\", \"since\", "
            "\"1.0.0\", \"group\", \"set\", \"complexity\", \"O(1)\", \"arguments\", "
            "[[\"name\", \"key\", \"type\", \"key\", \"key_spec_index\", :0]]]]");
}

}  // namespace
}  // namespace keywarden::testing
