// List family through the dispatcher: replies in RESP2 and RESP3, error texts and their order
// as Redis 7.0.15 reports them, deletion of emptied lists, WRONGTYPE both ways, dirty counts,
// WATCH, what each write hands to the propagation path, and the blocking commands with several
// clients (FIFO service, several keys, the writes that wake a waiter, timeouts, MULTI, BLMOVE
// chains and how served commands are propagated).
#include <string>
#include <string_view>
#include <vector>

#include "command_harness.h"
#include "types/list_value.h"

namespace keywarden::testing {
namespace {

using Lines = std::vector<std::string>;

class ListCommands : public ::testing::Test {
 protected:
  // The raw bytes `client` received since the last look.
  std::string raw_of(HarnessClient& client) {
    std::string raw = std::move(client.pending);
    client.pending.clear();
    return raw;
  }
  size_t blocked_clients() { return h.state.blocking().blocked_count(); }

  CommandHarness h;
};

// --- pushes and pops -----------------------------------------------------------------------

TEST_F(ListCommands, PushesInOrderAndReportTheLength) {
  EXPECT_EQ(h.call("RPUSH l a b c"), ":3");
  EXPECT_EQ(h.call("LPUSH l x y"), ":5");
  EXPECT_EQ(h.call("LRANGE l 0 -1"), "[\"y\", \"x\", \"a\", \"b\", \"c\"]");
  EXPECT_EQ(h.call("LPUSHX l 1 2"), ":7");
  EXPECT_EQ(h.call("RPUSHX l 9"), ":8");
  EXPECT_EQ(h.call("LRANGE l 0 -1"),
            "[\"2\", \"1\", \"y\", \"x\", \"a\", \"b\", \"c\", \"9\"]");
  EXPECT_EQ(h.call("LPUSHX nokey a"), ":0");
  EXPECT_EQ(h.call("RPUSHX nokey a b"), ":0");
  EXPECT_EQ(h.call("EXISTS nokey"), ":0");
  EXPECT_EQ(h.call("TYPE l"), "+list");
  EXPECT_EQ(h.call("OBJECT ENCODING l"), "\"quicklist\"");
  EXPECT_EQ(h.call("RPUSH bin \"a\\x00b\" \"\""), ":2");
  EXPECT_EQ(h.call("LRANGE bin 0 -1"), "[\"a\\x00b\", \"\"]");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:RPUSH l a b c", "0:LPUSH l x y", "0:LPUSHX l 1 2",
                                        "0:RPUSHX l 9", std::string("0:RPUSH bin a\0b ", 16)}));
  EXPECT_EQ(h.dirty(), 10u);
}

TEST_F(ListCommands, ArityAndWrongType) {
  EXPECT_EQ(h.call("LPUSH l"), "-ERR wrong number of arguments for 'lpush' command");
  EXPECT_EQ(h.call("RPUSHX l"), "-ERR wrong number of arguments for 'rpushx' command");
  EXPECT_EQ(h.call("LPOP"), "-ERR wrong number of arguments for 'lpop' command");
  EXPECT_EQ(h.call("LPOP l 1 2"), "-ERR wrong number of arguments for 'lpop' command");
  EXPECT_EQ(h.call("RPOP l 1 2"), "-ERR wrong number of arguments for 'rpop' command");
  EXPECT_EQ(h.call("LINSERT l before a"), "-ERR wrong number of arguments for 'linsert' command");
  EXPECT_EQ(h.call("LMPOP 1 l"), "-ERR wrong number of arguments for 'lmpop' command");
  EXPECT_EQ(h.call("BLMPOP 0 1 l"), "-ERR wrong number of arguments for 'blmpop' command");
  EXPECT_EQ(h.call("BLPOP l"), "-ERR wrong number of arguments for 'blpop' command");
  EXPECT_EQ(h.call("BLMOVE a b LEFT RIGHT"),
            "-ERR wrong number of arguments for 'blmove' command");

  EXPECT_EQ(h.call("SET s x"), "+OK");
  for (const char* command :
       {"LPUSH s a", "RPUSH s a", "LPUSHX s a", "RPUSHX s a", "LPOP s", "RPOP s", "LPOP s 0",
        "LLEN s", "LRANGE s 0 -1", "LINDEX s 0", "LINDEX s abc", "LSET s 0 a",
        "LINSERT s BEFORE a b", "LREM s 0 a", "LTRIM s 0 1", "LPOS s a", "LMOVE s l LEFT LEFT",
        "RPOPLPUSH s l", "LMPOP 1 s LEFT", "BLPOP s 0", "BRPOP nokey s 0", "BLMOVE s l LEFT LEFT 0",
        "BRPOPLPUSH s l 0", "BLMPOP 0 2 nokey s LEFT"}) {
    EXPECT_EQ(h.call(command), kWrongType) << command;
  }
  EXPECT_EQ(h.call("RPUSH l a"), ":1");
  EXPECT_EQ(h.call("GET l"), kWrongType);
  EXPECT_EQ(h.call("GET s"), "\"x\"");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SET s x", "0:RPUSH l a"}));
  EXPECT_EQ(blocked_clients(), 0u);
}

TEST_F(ListCommands, PopSingleAndCounted) {
  EXPECT_EQ(h.call("RPUSH l a b c d e"), ":5");
  const uint64_t before = h.dirty();
  EXPECT_EQ(h.call("LPOP l"), "\"a\"");
  EXPECT_EQ(h.call("RPOP l"), "\"e\"");
  EXPECT_EQ(h.call("LPOP l 0"), "[]");
  EXPECT_EQ(h.call("RPOP l 2"), "[\"d\", \"c\"]");
  EXPECT_EQ(h.dirty(), before + 4);
  EXPECT_EQ(h.call("LPOP l 100"), "[\"b\"]");
  EXPECT_EQ(h.call("EXISTS l"), ":0");
  EXPECT_EQ(h.call("LPOP l"), "(nil)");
  EXPECT_EQ(h.last_raw, "$-1\r\n");
  EXPECT_EQ(h.call("LPOP l 1"), "(nil)");
  EXPECT_EQ(h.last_raw, "*-1\r\n");
  EXPECT_EQ(h.call("RPOP l 0"), "(nil)");
  EXPECT_EQ(h.last_raw, "*-1\r\n");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:RPUSH l a b c d e", "0:LPOP l", "0:RPOP l", "0:RPOP l 2", "0:LPOP l 100"}));
}

TEST_F(ListCommands, PopCountErrors) {
  EXPECT_EQ(h.call("RPUSH l a"), ":1");
  for (const char* command : {"LPOP l -1", "LPOP l abc", "RPOP l 1.5", "LPOP nokey -1",
                              "RPOP l -9223372036854775808", "LPOP l 9223372036854775808"}) {
    EXPECT_EQ(h.call(command), "-ERR value is out of range, must be positive") << command;
  }
  EXPECT_EQ(h.call("LPOP l 9223372036854775807"), "[\"a\"]");
}

TEST_F(ListCommands, Resp3NullForms) {
  h.session.resp = 3;
  for (const char* command :
       {"LPOP nokey", "LPOP nokey 2", "RPOP nokey 0", "LINDEX nokey 0", "LPOS nokey a",
        "LMOVE nokey x LEFT LEFT", "RPOPLPUSH nokey x", "LMPOP 1 nokey LEFT"}) {
    EXPECT_EQ(h.call(command), "(nil)") << command;
    EXPECT_EQ(h.last_raw, "_\r\n") << command;
  }
  // Blocking commands answer inside MULTI at once, in RESP3 with the one null.
  for (const char* command : {"BLPOP nokey 0", "BRPOP nokey 0", "BLMOVE nokey x LEFT LEFT 0",
                              "BRPOPLPUSH nokey x 0", "BLMPOP 0 1 nokey LEFT"}) {
    EXPECT_EQ(h.call("MULTI"), "+OK");
    EXPECT_EQ(h.call(command), "+QUEUED");
    h.call("EXEC");
    EXPECT_EQ(h.last_raw, "*1\r\n_\r\n") << command;
  }
  EXPECT_EQ(h.call("RPUSH l a"), ":1");
  EXPECT_EQ(h.call("LPOP l 0"), "[]");
  EXPECT_EQ(h.last_raw, "*0\r\n");
  EXPECT_EQ(h.call("LPOS nokey a COUNT 1"), "[]");
  EXPECT_EQ(h.last_raw, "*0\r\n");
}

// --- reads ---------------------------------------------------------------------------------

TEST_F(ListCommands, LlenLindexLrange) {
  EXPECT_EQ(h.call("RPUSH l a b c d e f g"), ":7");
  EXPECT_EQ(h.call("LLEN l"), ":7");
  EXPECT_EQ(h.call("LLEN nokey"), ":0");
  EXPECT_EQ(h.call("LINDEX l 0"), "\"a\"");
  EXPECT_EQ(h.call("LINDEX l -1"), "\"g\"");
  EXPECT_EQ(h.call("LINDEX l -7"), "\"a\"");
  EXPECT_EQ(h.call("LINDEX l -8"), "(nil)");
  EXPECT_EQ(h.call("LINDEX l 7"), "(nil)");
  EXPECT_EQ(h.call("LINDEX l 9223372036854775807"), "(nil)");
  EXPECT_EQ(h.call("LINDEX l -9223372036854775808"), "(nil)");
  EXPECT_EQ(h.call("LINDEX l abc"), "-ERR value is not an integer or out of range");
  // The key is looked up before the index is read.
  EXPECT_EQ(h.call("LINDEX nokey abc"), "(nil)");

  EXPECT_EQ(h.call("LRANGE l 0 2"), "[\"a\", \"b\", \"c\"]");
  EXPECT_EQ(h.call("LRANGE l -2 -1"), "[\"f\", \"g\"]");
  EXPECT_EQ(h.call("LRANGE l -100 100"), "[\"a\", \"b\", \"c\", \"d\", \"e\", \"f\", \"g\"]");
  EXPECT_EQ(h.call("LRANGE l 2 1"), "[]");
  EXPECT_EQ(h.call("LRANGE l 7 10"), "[]");
  EXPECT_EQ(h.call("LRANGE l 5 -9223372036854775808"), "[]");
  EXPECT_EQ(h.call("LRANGE l -9223372036854775808 9223372036854775807"),
            "[\"a\", \"b\", \"c\", \"d\", \"e\", \"f\", \"g\"]");
  EXPECT_EQ(h.call("LRANGE nokey 0 -1"), "[]");
  // Indexes are read before the key.
  EXPECT_EQ(h.call("LRANGE nokey abc 1"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("LRANGE l 0 1.0"), "-ERR value is not an integer or out of range");
  EXPECT_TRUE(h.take_propagated().size() == 1);
}

TEST_F(ListCommands, LargeListsSpanManyNodes) {
  h.state.settings().list_max_listpack_size = 3;
  std::string push = "RPUSH big";
  for (int i = 0; i < 100; ++i) push += " " + std::to_string(i);
  EXPECT_EQ(h.call(push), ":100");
  EXPECT_EQ(h.call("OBJECT ENCODING big"), "\"quicklist\"");
  Entry* entry = h.state.keyspace().db(0).find_raw("big");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->value.as<ListValue>().node_count(), 34u);
  EXPECT_EQ(h.call("LINDEX big 50"), "\"50\"");
  EXPECT_EQ(h.call("LRANGE big 48 51"), "[\"48\", \"49\", \"50\", \"51\"]");
  EXPECT_EQ(h.call("LINSERT big AFTER 50 x"), ":101");
  EXPECT_EQ(h.call("LSET big 20 y"), "+OK");
  EXPECT_EQ(h.call("LRANGE big 19 21"), "[\"19\", \"y\", \"21\"]");
  EXPECT_EQ(h.call("LRANGE big 50 52"), "[\"50\", \"x\", \"51\"]");
  EXPECT_EQ(h.call("LTRIM big 10 -10"), "+OK");
  EXPECT_EQ(h.call("LLEN big"), ":82");
  EXPECT_EQ(h.call("LPOS big 50"), ":40");
  EXPECT_TRUE(entry->value.as<ListValue>().valid());
}

// --- LSET, LINSERT, LREM, LTRIM ------------------------------------------------------------

TEST_F(ListCommands, Lset) {
  EXPECT_EQ(h.call("RPUSH l a b c"), ":3");
  EXPECT_EQ(h.call("LSET l 0 A"), "+OK");
  EXPECT_EQ(h.call("LSET l -1 C"), "+OK");
  EXPECT_EQ(h.call("LRANGE l 0 -1"), "[\"A\", \"b\", \"C\"]");
  EXPECT_EQ(h.call("LSET l 3 x"), "-ERR index out of range");
  EXPECT_EQ(h.call("LSET l -4 x"), "-ERR index out of range");
  EXPECT_EQ(h.call("LSET l abc x"), "-ERR value is not an integer or out of range");
  // The key is checked before the index.
  EXPECT_EQ(h.call("LSET nokey abc x"), "-ERR no such key");
  EXPECT_EQ(h.call("LSET nokey 0 x"), "-ERR no such key");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:RPUSH l a b c", "0:LSET l 0 A", "0:LSET l -1 C"}));
}

TEST_F(ListCommands, Linsert) {
  EXPECT_EQ(h.call("RPUSH l a b a"), ":3");
  EXPECT_EQ(h.call("LINSERT l BEFORE a x"), ":4");
  EXPECT_EQ(h.call("LINSERT l after a y"), ":5");
  EXPECT_EQ(h.call("LINSERT l After b z"), ":6");
  EXPECT_EQ(h.call("LRANGE l 0 -1"), "[\"x\", \"a\", \"y\", \"b\", \"z\", \"a\"]");
  EXPECT_EQ(h.call("LINSERT l BEFORE nope w"), ":-1");
  EXPECT_EQ(h.call("LINSERT nokey BEFORE a w"), ":0");
  EXPECT_EQ(h.call("EXISTS nokey"), ":0");
  // The position word is checked before the key.
  EXPECT_EQ(h.call("LINSERT nokey middle a w"), "-ERR syntax error");
  EXPECT_EQ(h.call("LINSERT l middle a w"), "-ERR syntax error");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:RPUSH l a b a", "0:LINSERT l BEFORE a x",
                                        "0:LINSERT l after a y", "0:LINSERT l After b z"}));
}

TEST_F(ListCommands, Lrem) {
  EXPECT_EQ(h.call("RPUSH l a x b x c x d"), ":7");
  EXPECT_EQ(h.call("LREM l 1 x"), ":1");
  EXPECT_EQ(h.call("LREM l -1 x"), ":1");
  EXPECT_EQ(h.call("LRANGE l 0 -1"), "[\"a\", \"b\", \"x\", \"c\", \"d\"]");
  EXPECT_EQ(h.call("LREM l 0 nope"), ":0");
  EXPECT_EQ(h.call("LREM l 0 x"), ":1");
  EXPECT_EQ(h.call("RPUSH m z z z"), ":3");
  EXPECT_EQ(h.call("LREM m -9223372036854775808 z"), ":3");
  EXPECT_EQ(h.call("EXISTS m"), ":0");
  EXPECT_EQ(h.call("LREM nokey 0 a"), ":0");
  EXPECT_EQ(h.call("LREM nokey abc a"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:RPUSH l a x b x c x d", "0:LREM l 1 x", "0:LREM l -1 x", "0:LREM l 0 x",
                   "0:RPUSH m z z z", "0:LREM m -9223372036854775808 z"}));
}

TEST_F(ListCommands, Ltrim) {
  EXPECT_EQ(h.call("RPUSH l a b c d e"), ":5");
  const uint64_t before = h.dirty();
  EXPECT_EQ(h.call("LTRIM l 0 -1"), "+OK");  // nothing to trim: not propagated
  EXPECT_EQ(h.call("LTRIM l 1 -2"), "+OK");
  EXPECT_EQ(h.dirty(), before + 2);
  EXPECT_EQ(h.call("LRANGE l 0 -1"), "[\"b\", \"c\", \"d\"]");
  EXPECT_EQ(h.call("LTRIM l -100 100"), "+OK");
  EXPECT_EQ(h.call("LTRIM l -1 -1"), "+OK");
  EXPECT_EQ(h.call("LRANGE l 0 -1"), "[\"d\"]");
  EXPECT_EQ(h.call("LTRIM l 5 2"), "+OK");
  EXPECT_EQ(h.call("EXISTS l"), ":0");
  EXPECT_EQ(h.call("RPUSH l a"), ":1");
  EXPECT_EQ(h.call("LTRIM l 9223372036854775807 -9223372036854775808"), "+OK");
  EXPECT_EQ(h.call("EXISTS l"), ":0");
  EXPECT_EQ(h.call("LTRIM nokey 0 1"), "+OK");
  EXPECT_EQ(h.call("LTRIM nokey abc 1"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:RPUSH l a b c d e", "0:LTRIM l 1 -2", "0:LTRIM l -1 -1", "0:LTRIM l 5 2",
                   "0:RPUSH l a", "0:LTRIM l 9223372036854775807 -9223372036854775808"}));
}

// --- LPOS ----------------------------------------------------------------------------------

TEST_F(ListCommands, LposOptions) {
  EXPECT_EQ(h.call("RPUSH l a b a c a"), ":5");
  EXPECT_EQ(h.call("LPOS l a"), ":0");
  EXPECT_EQ(h.call("LPOS l c"), ":3");
  EXPECT_EQ(h.call("LPOS l z"), "(nil)");
  EXPECT_EQ(h.call("LPOS l a RANK 2"), ":2");
  EXPECT_EQ(h.call("LPOS l a RANK -1"), ":4");
  EXPECT_EQ(h.call("LPOS l a RANK -3"), ":0");
  EXPECT_EQ(h.call("LPOS l a RANK 4"), "(nil)");
  EXPECT_EQ(h.call("LPOS l a COUNT 0"), "[:0, :2, :4]");
  EXPECT_EQ(h.call("LPOS l a COUNT 2"), "[:0, :2]");
  EXPECT_EQ(h.call("LPOS l a RANK 2 COUNT 1"), "[:2]");
  EXPECT_EQ(h.call("LPOS l a RANK -2 COUNT 2"), "[:2, :0]");
  EXPECT_EQ(h.call("LPOS l z COUNT 0"), "[]");
  EXPECT_EQ(h.call("LPOS l a MAXLEN 1"), ":0");
  EXPECT_EQ(h.call("LPOS l c MAXLEN 3"), "(nil)");
  EXPECT_EQ(h.call("LPOS l a RANK 1 COUNT 5 MAXLEN 3"), "[:0, :2]");
  EXPECT_EQ(h.call("LPOS l a RANK -1 COUNT 5 MAXLEN 2"), "[:4]");
  EXPECT_EQ(h.call("LPOS l a RANK 2 COUNT 5 MAXLEN 2"), "[]");
  EXPECT_EQ(h.call("LPOS l a rank 1 RANK 2"), ":2");  // the last one counts
  EXPECT_EQ(h.call("LPOS l a RANK 9223372036854775807 COUNT 0"), "[]");
  EXPECT_EQ(h.call("LPOS l a RANK -9223372036854775807"), "(nil)");
  // Redis 7.0.15 negates RANK INT64_MIN into itself: a search from the tail where every match
  // qualifies and COUNT never stops it.
  EXPECT_EQ(h.call("LPOS l a RANK -9223372036854775808"), ":4");
  EXPECT_EQ(h.call("LPOS l a RANK -9223372036854775808 COUNT 1"), "[:4, :2, :0]");
  EXPECT_EQ(h.call("LPOS l a RANK -9223372036854775808 MAXLEN 2"), ":4");
  EXPECT_EQ(h.call("LPOS nokey a"), "(nil)");
  EXPECT_EQ(h.call("LPOS nokey a COUNT 0"), "[]");
}

TEST_F(ListCommands, LposErrors) {
  EXPECT_EQ(h.call("RPUSH l a"), ":1");
  const std::string rank_zero =
      "-ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or "
      "use negative to start from the end of the list";
  EXPECT_EQ(h.call("LPOS l a RANK 0"), rank_zero);
  EXPECT_EQ(h.call("LPOS nokey a RANK 0"), rank_zero);  // options come before the key
  EXPECT_EQ(h.call("LPOS l a RANK abc"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("LPOS l a COUNT -1"), "-ERR COUNT can't be negative");
  EXPECT_EQ(h.call("LPOS l a COUNT abc"), "-ERR COUNT can't be negative");
  EXPECT_EQ(h.call("LPOS l a MAXLEN -1"), "-ERR MAXLEN can't be negative");
  EXPECT_EQ(h.call("LPOS l a MAXLEN abc"), "-ERR MAXLEN can't be negative");
  EXPECT_EQ(h.call("LPOS l a FOO"), "-ERR syntax error");
  EXPECT_EQ(h.call("LPOS l a RANK"), "-ERR syntax error");
  EXPECT_EQ(h.call("LPOS l a COUNT 1 MAXLEN"), "-ERR syntax error");
  EXPECT_EQ(h.call("LPOS l"), "-ERR wrong number of arguments for 'lpos' command");
}

// --- LMOVE, RPOPLPUSH ----------------------------------------------------------------------

TEST_F(ListCommands, LmoveAllDirections) {
  EXPECT_EQ(h.call("RPUSH src a b c d"), ":4");
  EXPECT_EQ(h.call("LMOVE src dst LEFT RIGHT"), "\"a\"");
  EXPECT_EQ(h.call("LMOVE src dst right left"), "\"d\"");
  EXPECT_EQ(h.call("LMOVE src dst Left Left"), "\"b\"");
  EXPECT_EQ(h.call("RPOPLPUSH src dst"), "\"c\"");
  EXPECT_EQ(h.call("EXISTS src"), ":0");
  EXPECT_EQ(h.call("LRANGE dst 0 -1"), "[\"c\", \"b\", \"d\", \"a\"]");
  EXPECT_EQ(h.call("LMOVE src dst LEFT RIGHT"), "(nil)");
  EXPECT_EQ(h.call("RPOPLPUSH src dst"), "(nil)");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:RPUSH src a b c d", "0:LMOVE src dst LEFT RIGHT",
                                        "0:LMOVE src dst right left", "0:LMOVE src dst Left Left",
                                        "0:RPOPLPUSH src dst"}));
}

TEST_F(ListCommands, LmoveRotatesTheSameList) {
  EXPECT_EQ(h.call("RPUSH l a b c"), ":3");
  EXPECT_EQ(h.call("LMOVE l l LEFT RIGHT"), "\"a\"");
  EXPECT_EQ(h.call("LRANGE l 0 -1"), "[\"b\", \"c\", \"a\"]");
  EXPECT_EQ(h.call("RPOPLPUSH l l"), "\"a\"");
  EXPECT_EQ(h.call("LRANGE l 0 -1"), "[\"a\", \"b\", \"c\"]");
  EXPECT_EQ(h.call("LMOVE l l LEFT LEFT"), "\"a\"");
  EXPECT_EQ(h.call("LRANGE l 0 -1"), "[\"a\", \"b\", \"c\"]");
  EXPECT_EQ(h.call("RPUSH one x"), ":1");
  EXPECT_EQ(h.call("LMOVE one one RIGHT LEFT"), "\"x\"");
  EXPECT_EQ(h.call("LRANGE one 0 -1"), "[\"x\"]");
}

TEST_F(ListCommands, LmoveChecksTheDestinationBeforePopping) {
  EXPECT_EQ(h.call("RPUSH src a"), ":1");
  EXPECT_EQ(h.call("SET str x"), "+OK");
  EXPECT_EQ(h.call("LMOVE src str LEFT RIGHT"), kWrongType);
  EXPECT_EQ(h.call("RPOPLPUSH src str"), kWrongType);
  EXPECT_EQ(h.call("LRANGE src 0 -1"), "[\"a\"]");
  // A missing source answers nil before the destination is looked at.
  EXPECT_EQ(h.call("LMOVE nokey str LEFT RIGHT"), "(nil)");
  EXPECT_EQ(h.call("RPOPLPUSH nokey str"), "(nil)");
  // Direction words are checked before the keys.
  EXPECT_EQ(h.call("LMOVE nokey str LEFT MIDDLE"), "-ERR syntax error");
  EXPECT_EQ(h.call("LMOVE src dst UP LEFT"), "-ERR syntax error");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:RPUSH src a", "0:SET str x"}));
}

// --- LMPOP ---------------------------------------------------------------------------------

TEST_F(ListCommands, Lmpop) {
  EXPECT_EQ(h.call("RPUSH b 1 2 3"), ":3");
  EXPECT_EQ(h.call("LMPOP 2 a b LEFT"), "[\"b\", [\"1\"]]");
  EXPECT_EQ(h.call("LMPOP 2 a b right COUNT 5"), "[\"b\", [\"3\", \"2\"]]");
  EXPECT_EQ(h.call("EXISTS b"), ":0");
  EXPECT_EQ(h.call("LMPOP 2 a b LEFT"), "(nil)");
  EXPECT_EQ(h.last_raw, "*-1\r\n");
  EXPECT_EQ(h.call("RPUSH a x y"), ":2");
  EXPECT_EQ(h.call("LMPOP 1 a LEFT count 9223372036854775807"), "[\"a\", [\"x\", \"y\"]]");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:RPUSH b 1 2 3", "0:LPOP b 1", "0:RPOP b 2", "0:RPUSH a x y", "0:LPOP a 2"}));
}

TEST_F(ListCommands, LmpopErrors) {
  EXPECT_EQ(h.call("RPUSH l a"), ":1");
  EXPECT_EQ(h.call("SET s x"), "+OK");
  for (const char* command : {"LMPOP 0 l LEFT", "LMPOP -1 l LEFT", "LMPOP abc l LEFT"}) {
    EXPECT_EQ(h.call(command), "-ERR numkeys should be greater than 0") << command;
  }
  for (const char* command :
       {"LMPOP 2 l LEFT", "LMPOP 1 l MIDDLE", "LMPOP 1 l LEFT COUNT 1 COUNT 1",
        "LMPOP 1 l LEFT COUNT", "LMPOP 1 l LEFT junk", "LMPOP 9223372036854775807 l LEFT",
        "LMPOP 1 nokey LEFT junk"}) {
    EXPECT_EQ(h.call(command), "-ERR syntax error") << command;
  }
  for (const char* command :
       {"LMPOP 1 l LEFT COUNT 0", "LMPOP 1 l LEFT COUNT -1", "LMPOP 1 l LEFT COUNT abc"}) {
    EXPECT_EQ(h.call(command), "-ERR count should be greater than 0") << command;
  }
  // Keys are tried in order: a list before the string is served, a string first is an error.
  EXPECT_EQ(h.call("LMPOP 2 s l LEFT"), kWrongType);
  EXPECT_EQ(h.call("LMPOP 2 nokey s LEFT"), kWrongType);
  EXPECT_EQ(h.call("LMPOP 2 l s LEFT"), "[\"l\", [\"a\"]]");
}

// --- WATCH ---------------------------------------------------------------------------------

TEST_F(ListCommands, WritesTouchWatchedKeysOnlyWhenRedisDoes) {
  auto& other = h.new_client();
  auto touched_by = [&](std::string_view command) {
    h.call("DEL l");
    h.call("RPUSH l a b c");
    EXPECT_EQ(h.call("WATCH l"), "+OK");
    h.call_as(other, command);
    h.call("MULTI");
    h.call("PING");
    const std::string reply = h.call("EXEC");
    return reply != "[+PONG]";
  };
  EXPECT_TRUE(touched_by("LTRIM l 0 -1"));  // even when nothing is trimmed
  EXPECT_TRUE(touched_by("LTRIM l 5 2"));
  EXPECT_TRUE(touched_by("LSET l 0 a"));
  EXPECT_TRUE(touched_by("LMOVE l l LEFT RIGHT"));
  EXPECT_TRUE(touched_by("LMPOP 1 l LEFT"));
  EXPECT_TRUE(touched_by("RPUSHX l z"));
  EXPECT_TRUE(touched_by("LINSERT l BEFORE b x"));
  EXPECT_TRUE(touched_by("LREM l 1 b"));
  EXPECT_TRUE(touched_by("BLPOP l 0"));
  EXPECT_TRUE(touched_by("LMOVE l other LEFT RIGHT"));
  EXPECT_FALSE(touched_by("LMOVE other2 l LEFT RIGHT"));
  EXPECT_FALSE(touched_by("LPOP l 0"));
  EXPECT_FALSE(touched_by("LINSERT l BEFORE zz x"));
  EXPECT_FALSE(touched_by("LREM l 0 zz"));
  EXPECT_FALSE(touched_by("LSET l 9 x"));
  EXPECT_FALSE(touched_by("LPOS l a"));
  EXPECT_FALSE(touched_by("LRANGE l 0 -1"));
}

// --- blocking commands ---------------------------------------------------------------------

TEST_F(ListCommands, BlockingServedAtOnceWhenDataIsThere) {
  EXPECT_EQ(h.call("RPUSH l a b c d"), ":4");
  EXPECT_EQ(h.call("BLPOP nokey l 0"), "[\"l\", \"a\"]");
  EXPECT_EQ(h.call("BRPOP l 0"), "[\"l\", \"d\"]");
  EXPECT_EQ(h.call("BLMOVE l dst left RIGHT 0"), "\"b\"");
  EXPECT_EQ(h.call("BRPOPLPUSH l dst 0"), "\"c\"");
  EXPECT_EQ(h.call("EXISTS l"), ":0");
  EXPECT_EQ(h.call("BLMPOP 0 2 nokey dst RIGHT COUNT 10"), "[\"dst\", [\"b\", \"c\"]]");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:RPUSH l a b c d", "0:LPOP l", "0:RPOP l", "0:LMOVE l dst left RIGHT",
                   "0:RPOPLPUSH l dst", "0:RPOP dst 2"}));
  EXPECT_EQ(blocked_clients(), 0u);
}

TEST_F(ListCommands, BlockingArgumentErrors) {
  EXPECT_EQ(h.call("BLPOP l -1"), "-ERR timeout is negative");
  EXPECT_EQ(h.call("BLPOP l abc"), "-ERR timeout is not a float or out of range");
  EXPECT_EQ(h.call("BRPOP l inf"), "-ERR timeout is negative");
  EXPECT_EQ(h.call("BLMOVE a b middle RIGHT abc"), "-ERR syntax error");
  EXPECT_EQ(h.call("BLMOVE a b LEFT RIGHT abc"), "-ERR timeout is not a float or out of range");
  EXPECT_EQ(h.call("BRPOPLPUSH a b -0.5"), "-ERR timeout is negative");
  EXPECT_EQ(h.call("BLMPOP -1 1 l LEFT"), "-ERR timeout is negative");
  // BLMPOP reads its timeout after the other arguments.
  EXPECT_EQ(h.call("BLMPOP abc 1 l LEFT COUNT 0"), "-ERR count should be greater than 0");
  EXPECT_EQ(h.call("BLMPOP abc 0 l LEFT"), "-ERR numkeys should be greater than 0");
  EXPECT_EQ(h.call("BLMPOP abc 2 l LEFT"), "-ERR syntax error");
  EXPECT_EQ(h.call("BLMPOP abc 1 l LEFT"), "-ERR timeout is not a float or out of range");
  EXPECT_EQ(blocked_clients(), 0u);
}

TEST_F(ListCommands, InsideMultiTheyAnswerAsOnATimeout) {
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("BLPOP l 0"), "+QUEUED");
  EXPECT_EQ(h.call("BRPOP l 0"), "+QUEUED");
  EXPECT_EQ(h.call("BLMOVE l d LEFT LEFT 0"), "+QUEUED");
  EXPECT_EQ(h.call("BRPOPLPUSH l d 0"), "+QUEUED");
  EXPECT_EQ(h.call("BLMPOP 0 1 l LEFT"), "+QUEUED");
  EXPECT_EQ(h.call("RPUSH l a"), "+QUEUED");
  EXPECT_EQ(h.call("BLPOP l 0"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC"), "[(nil), (nil), (nil), (nil), (nil), :1, [\"l\", \"a\"]]");
  EXPECT_EQ(h.last_raw,
            "*7\r\n*-1\r\n*-1\r\n$-1\r\n$-1\r\n*-1\r\n:1\r\n*2\r\n$1\r\nl\r\n$1\r\na\r\n");
  EXPECT_EQ(blocked_clients(), 0u);
}

TEST_F(ListCommands, WaitersAreServedFirstComeFirstServed) {
  auto& c2 = h.new_client();
  auto& c3 = h.new_client();
  auto& c4 = h.new_client();
  EXPECT_EQ(h.call_as(c2, "BLPOP l 0"), "(blocked)");
  EXPECT_EQ(h.call_as(c3, "BRPOP l 0"), "(blocked)");
  EXPECT_EQ(h.call_as(c4, "BLPOP l 0"), "(blocked)");
  EXPECT_EQ(blocked_clients(), 3u);
  EXPECT_EQ(h.call("RPUSH l a b"), ":2");
  EXPECT_EQ(h.replies_of(c2), "[\"l\", \"a\"]");
  EXPECT_EQ(h.replies_of(c3), "[\"l\", \"b\"]");
  EXPECT_EQ(h.replies_of(c4), "");
  EXPECT_EQ(h.call("EXISTS l"), ":0");
  EXPECT_EQ(h.call("LPUSH l c"), ":1");
  EXPECT_EQ(h.replies_of(c4), "[\"l\", \"c\"]");
  EXPECT_EQ(blocked_clients(), 0u);
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:RPUSH l a b", "0:LPOP l", "0:RPOP l", "0:LPUSH l c", "0:LPOP l"}));
}

TEST_F(ListCommands, OneWaiterOnSeveralKeys) {
  auto& c2 = h.new_client();
  EXPECT_EQ(h.call_as(c2, "BLPOP k1 k2 k3 0"), "(blocked)");
  EXPECT_EQ(h.call("RPUSH k3 x y"), ":2");
  EXPECT_EQ(h.replies_of(c2), "[\"k3\", \"x\"]");
  EXPECT_EQ(h.call("LRANGE k3 0 -1"), "[\"y\"]");
  // Served once: a second push goes unclaimed.
  EXPECT_EQ(h.call("RPUSH k1 z"), ":1");
  EXPECT_EQ(h.replies_of(c2), "");
  EXPECT_EQ(h.call("LLEN k1"), ":1");
  EXPECT_EQ(blocked_clients(), 0u);
}

TEST_F(ListCommands, WokenByPushesOfEveryKind) {
  auto& c2 = h.new_client();
  const std::pair<const char*, const char*> wakers[] = {
      {"LPUSH l a", "[\"l\", \"a\"]"},
      {"RPUSH l a", "[\"l\", \"a\"]"},
      {"LMOVE src l LEFT RIGHT", "[\"l\", \"s\"]"},
      {"RPOPLPUSH src l", "[\"l\", \"s\"]"},
      {"LMPOP 1 src LEFT", ""},  // pops only: no push to l
      {"RENAME src l", "[\"l\", \"s\"]"},
      {"COPY src l", "[\"l\", \"s\"]"},
  };
  for (const auto& [waker, served] : wakers) {
    h.call("FLUSHALL");
    h.call("RPUSH src s");
    EXPECT_EQ(h.call_as(c2, "BLPOP l 0"), "(blocked)") << waker;
    h.call(waker);
    EXPECT_EQ(h.replies_of(c2), served) << waker;
    if (std::string_view(served).empty()) {
      h.call("LPUSH l unblock");
      EXPECT_EQ(h.replies_of(c2), "[\"l\", \"unblock\"]");
    }
    EXPECT_EQ(blocked_clients(), 0u) << waker;
  }
}

TEST_F(ListCommands, WokenByMoveFromAnotherDatabaseAndSwapdb) {
  auto& c2 = h.new_client();
  EXPECT_EQ(h.call_as(c2, "BLPOP l 0"), "(blocked)");
  EXPECT_EQ(h.call("SELECT 1"), "+OK");
  EXPECT_EQ(h.call("RPUSH l a"), ":1");  // another database: no wake
  EXPECT_EQ(h.replies_of(c2), "");
  EXPECT_EQ(h.call("MOVE l 0"), ":1");
  EXPECT_EQ(h.replies_of(c2), "[\"l\", \"a\"]");
  EXPECT_EQ(h.call_as(c2, "BLPOP l 0"), "(blocked)");
  EXPECT_EQ(h.call("RPUSH l b"), ":1");
  EXPECT_EQ(h.call("SWAPDB 0 1"), "+OK");
  EXPECT_EQ(h.replies_of(c2), "[\"l\", \"b\"]");
}

TEST_F(ListCommands, WokenAfterATransaction) {
  auto& c2 = h.new_client();
  auto& c3 = h.new_client();
  EXPECT_EQ(h.call_as(c2, "BLPOP l 0"), "(blocked)");
  EXPECT_EQ(h.call_as(c3, "BLPOP l 0"), "(blocked)");
  // Pushed and popped inside the same transaction: nothing left to serve.
  EXPECT_EQ(h.call("MULTI"), "+OK");
  h.call("RPUSH l a");
  h.call("LPOP l");
  EXPECT_EQ(h.call("EXEC"), "[:1, \"a\"]");
  EXPECT_EQ(h.replies_of(c2), "");
  // The waiters see the state after EXEC, not the pushes one by one.
  EXPECT_EQ(h.call("MULTI"), "+OK");
  h.call("RPUSH l a");
  h.call("RPUSH l b");
  h.call("RPUSH l c");
  EXPECT_EQ(h.call("EXEC"), "[:1, :2, :3]");
  EXPECT_EQ(h.replies_of(c2), "[\"l\", \"a\"]");
  EXPECT_EQ(h.replies_of(c3), "[\"l\", \"b\"]");
  EXPECT_EQ(h.call("LRANGE l 0 -1"), "[\"c\"]");
}

TEST_F(ListCommands, KeyOfAnotherTypeKeepsWaitersBlocked) {
  auto& c2 = h.new_client();
  EXPECT_EQ(h.call_as(c2, "BLPOP l 0"), "(blocked)");
  EXPECT_EQ(h.call("SET l x"), "+OK");
  EXPECT_EQ(h.replies_of(c2), "");
  EXPECT_EQ(blocked_clients(), 1u);
  EXPECT_EQ(h.call("DEL l"), ":1");
  EXPECT_EQ(h.call("RPUSH l a"), ":1");
  EXPECT_EQ(h.replies_of(c2), "[\"l\", \"a\"]");
  // Waiting on two keys, one of which turns into a string: the other still serves.
  EXPECT_EQ(h.call_as(c2, "BLPOP k1 k2 0"), "(blocked)");
  EXPECT_EQ(h.call("SET k1 str"), "+OK");
  EXPECT_EQ(h.call("RPUSH k2 b"), ":1");
  EXPECT_EQ(h.replies_of(c2), "[\"k2\", \"b\"]");
}

TEST_F(ListCommands, TimeoutsIncludingSubSecond) {
  auto& c2 = h.new_client();
  auto& c3 = h.new_client();
  auto& c4 = h.new_client();
  EXPECT_EQ(h.call_as(c2, "BLPOP l 0.25"), "(blocked)");
  EXPECT_EQ(h.call_as(c3, "BLMOVE l d LEFT RIGHT 0.5"), "(blocked)");
  EXPECT_EQ(h.call_as(c4, "BLMPOP 1.5 1 l LEFT"), "(blocked)");
  h.advance_ms(200);
  h.time_out_blocked();
  EXPECT_EQ(h.replies_of(c2), "");
  h.advance_ms(51);
  h.time_out_blocked();
  EXPECT_EQ(raw_of(c2), "*-1\r\n");
  h.advance_ms(250);
  h.time_out_blocked();
  // Redis 7.0.15 times BLMOVE out with a null array too.
  EXPECT_EQ(raw_of(c3), "*-1\r\n");
  EXPECT_EQ(blocked_clients(), 1u);
  c4.session.resp = 3;
  h.advance_ms(1000);
  h.time_out_blocked();
  EXPECT_EQ(raw_of(c4), "_\r\n");
  EXPECT_EQ(blocked_clients(), 0u);
  // Timeout 0 waits forever.
  EXPECT_EQ(h.call_as(c2, "BRPOP l 0"), "(blocked)");
  h.advance_ms(1'000'000'000);
  h.time_out_blocked();
  EXPECT_EQ(h.replies_of(c2), "");
  EXPECT_EQ(h.call("RPUSH l z"), ":1");
  EXPECT_EQ(h.replies_of(c2), "[\"l\", \"z\"]");
  EXPECT_TRUE(h.take_propagated() == (Lines{"0:RPUSH l z", "0:RPOP l"}));
}

TEST_F(ListCommands, ServedCommandsPropagateAsRedisRewritesThem) {
  auto& c2 = h.new_client();
  auto& c3 = h.new_client();
  auto& c4 = h.new_client();
  auto& c5 = h.new_client();
  EXPECT_EQ(h.call_as(c2, "BRPOP a 0"), "(blocked)");
  EXPECT_EQ(h.call_as(c3, "BLMPOP 0 2 x b right COUNT 5"), "(blocked)");
  EXPECT_EQ(h.call_as(c4, "BLMOVE c dst left right 0"), "(blocked)");
  EXPECT_EQ(h.call_as(c5, "BRPOPLPUSH d dst2 0"), "(blocked)");
  EXPECT_EQ(h.call("RPUSH a 1 2"), ":2");
  EXPECT_EQ(h.call("RPUSH b 1 2 3"), ":3");
  EXPECT_EQ(h.call("RPUSH c p q"), ":2");
  EXPECT_EQ(h.call("RPUSH d p q"), ":2");
  EXPECT_EQ(h.replies_of(c2), "[\"a\", \"2\"]");
  EXPECT_EQ(h.replies_of(c3), "[\"b\", [\"3\", \"2\", \"1\"]]");
  EXPECT_EQ(h.replies_of(c4), "\"p\"");
  EXPECT_EQ(h.replies_of(c5), "\"q\"");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:RPUSH a 1 2", "0:RPOP a", "0:RPUSH b 1 2 3", "0:RPOP b 3", "0:RPUSH c p q",
                   "0:LMOVE c dst left right", "0:RPUSH d p q", "0:RPOPLPUSH d dst2"}));
}

TEST_F(ListCommands, BlmoveChainsToAnotherBlockedClient) {
  auto& c2 = h.new_client();
  auto& c3 = h.new_client();
  auto& c4 = h.new_client();
  EXPECT_EQ(h.call_as(c2, "BLMOVE a b LEFT RIGHT 0"), "(blocked)");
  EXPECT_EQ(h.call_as(c3, "BRPOPLPUSH b c 0"), "(blocked)");
  EXPECT_EQ(h.call_as(c4, "BLPOP c 0"), "(blocked)");
  EXPECT_EQ(h.call("RPUSH a x"), ":1");
  EXPECT_EQ(h.replies_of(c2), "\"x\"");
  EXPECT_EQ(h.replies_of(c3), "\"x\"");
  EXPECT_EQ(h.replies_of(c4), "[\"c\", \"x\"]");
  EXPECT_EQ(h.call("DBSIZE"), ":0");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:RPUSH a x", "0:LMOVE a b LEFT RIGHT", "0:RPOPLPUSH b c", "0:LPOP c"}));
  EXPECT_EQ(blocked_clients(), 0u);
}

TEST_F(ListCommands, BlmoveOntoAWrongTypeWhenServed) {
  auto& c2 = h.new_client();
  // Blocking only looks at the source.
  EXPECT_EQ(h.call("SET dst str"), "+OK");
  EXPECT_EQ(h.call_as(c2, "BLMOVE src dst LEFT RIGHT 0"), "(blocked)");
  EXPECT_EQ(h.call("RPUSH src a"), ":1");
  EXPECT_EQ(h.replies_of(c2), std::string(kWrongType));
  EXPECT_EQ(blocked_clients(), 0u);
  EXPECT_EQ(h.call("LRANGE src 0 -1"), "[\"a\"]");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SET dst str", "0:RPUSH src a"}));
}

TEST_F(ListCommands, BlmpopServesUpToCount) {
  auto& c2 = h.new_client();
  auto& c3 = h.new_client();
  EXPECT_EQ(h.call_as(c2, "BLMPOP 0 1 l LEFT COUNT 2"), "(blocked)");
  EXPECT_EQ(h.call_as(c3, "BLMPOP 0 1 l RIGHT COUNT 2"), "(blocked)");
  EXPECT_EQ(h.call("RPUSH l a b c"), ":3");
  EXPECT_EQ(h.replies_of(c2), "[\"l\", [\"a\", \"b\"]]");
  EXPECT_EQ(h.replies_of(c3), "[\"l\", [\"c\"]]");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:RPUSH l a b c", "0:LPOP l 2", "0:RPOP l 1"}));
}

TEST_F(ListCommands, BlockedClientsInOtherDatabases) {
  auto& c2 = h.new_client();
  EXPECT_EQ(h.call_as(c2, "SELECT 2"), "+OK");
  EXPECT_EQ(h.call_as(c2, "BLPOP l 0"), "(blocked)");
  EXPECT_EQ(h.call("RPUSH l a"), ":1");
  EXPECT_EQ(h.replies_of(c2), "");
  EXPECT_EQ(h.call("SELECT 2"), "+OK");
  EXPECT_EQ(h.call("RPUSH l b"), ":1");
  EXPECT_EQ(h.replies_of(c2), "[\"l\", \"b\"]");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:RPUSH l a", "2:RPUSH l b", "2:LPOP l"}));
}

// --- the command table ---------------------------------------------------------------------

TEST_F(ListCommands, CommandInfoMatchesRedis) {
  const std::pair<const char*, const char*> rows[] = {
      {"lpush", "[\"lpush\", :-3, [+write, +denyoom, +fast], :1, :1, :1"},
      {"lpop", "[\"lpop\", :-2, [+write, +fast], :1, :1, :1"},
      {"lrange", "[\"lrange\", :4, [+readonly], :1, :1, :1"},
      {"lmove", "[\"lmove\", :5, [+write, +denyoom], :1, :2, :1"},
      {"lmpop", "[\"lmpop\", :-4, [+write, +movablekeys], :0, :0, :0"},
      {"blpop", "[\"blpop\", :-3, [+write, +noscript, +blocking], :1, :-2, :1"},
      {"blmove", "[\"blmove\", :6, [+write, +denyoom, +noscript, +blocking], :1, :2, :1"},
      {"blmpop", "[\"blmpop\", :-5, [+write, +blocking, +movablekeys], :0, :0, :0"},
  };
  for (const auto& [name, prefix] : rows) {
    const std::string info = h.call(std::string("COMMAND INFO ") + name);
    EXPECT_EQ(info.substr(1, std::string_view(prefix).size()), prefix) << info;
  }
  EXPECT_NE(h.call("COMMAND INFO blpop").find("@blocking"), std::string::npos);
  EXPECT_NE(h.call("COMMAND INFO lpush").find("@list"), std::string::npos);
}

}  // namespace
}  // namespace keywarden::testing
