// Sorted set family through the dispatcher: replies in RESP2 and RESP3, every option and error
// path with Redis 7.0's texts and checking order, encodings and their conversions, deletion of
// emptied sets, WRONGTYPE, dirty counts, WATCH, what each write propagates, and the blocking
// pops served by writes from other clients, MULTI and store commands, or timing out.
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "command_harness.h"

namespace keywarden::testing {
namespace {

using Lines = std::vector<std::string>;

constexpr std::string_view kSyntax = "-ERR syntax error";
constexpr std::string_view kNotInteger = "-ERR value is not an integer or out of range";
constexpr std::string_view kNotFloat = "-ERR value is not a valid float";
constexpr std::string_view kMinMaxNotFloat = "-ERR min or max is not a float";
constexpr std::string_view kMinMaxNotLex = "-ERR min or max not valid string range item";

class ZSetCommands : public ::testing::Test {
 protected:
  // ZADD key with members m0..m<n-1> scored 0..n-1.
  std::string fill(std::string_view key, int members, std::string_view prefix = "m") {
    std::string line = "ZADD " + std::string(key);
    for (int i = 0; i < members; ++i) {
      line += " " + std::to_string(i) + " " + std::string(prefix) + std::to_string(i);
    }
    return h.call(line);
  }
  void use_skiplist() { h.state.settings().zset_limits.max_listpack_entries = 0; }

  CommandHarness h;
};

// --- ZADD, ZINCRBY -------------------------------------------------------------------------

TEST_F(ZSetCommands, ZaddBasics) {
  EXPECT_EQ(h.call("ZADD z 1 a 2 b 3 c"), ":3");
  EXPECT_EQ(h.call("ZADD z 10 a 4 d"), ":1");
  EXPECT_EQ(h.call("ZADD z 10 a"), ":0");
  EXPECT_EQ(h.call("ZRANGE z 0 -1 WITHSCORES"),
            "[\"b\", \"2\", \"c\", \"3\", \"d\", \"4\", \"a\", \"10\"]");
  EXPECT_EQ(h.call("TYPE z"), "+zset");
  EXPECT_EQ(h.encoding("z"), "\"listpack\"");
  // The same member twice in one call: the last score wins, counted once.
  EXPECT_EQ(h.call("ZADD y 1 a 2 a"), ":1");
  EXPECT_EQ(h.call("ZSCORE y a"), "\"2\"");
  EXPECT_EQ(h.call("ZADD y 1.5 \"\" -inf lo +inf hi 0x10 hex \" 5\" sp"),
            "-ERR value is not a valid float");
  EXPECT_EQ(h.call("ZADD y 1.5 \"\" -inf lo +inf hi 0x10 hex 1e3 e"), ":5");
  EXPECT_EQ(h.call("ZRANGE y 0 -1 WITHSCORES"),
            "[\"lo\", \"-inf\", \"\", \"1.5\", \"a\", \"2\", \"hex\", \"16\", \"e\", \"1000\", "
            "\"hi\", \"inf\"]");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:ZADD z 1 a 2 b 3 c", "0:ZADD z 10 a 4 d", "0:ZADD y 1 a 2 a",
                   "0:ZADD y 1.5  -inf lo +inf hi 0x10 hex 1e3 e"}));
}

TEST_F(ZSetCommands, ZaddOptions) {
  EXPECT_EQ(h.call("ZADD z XX 1 a"), ":0");
  EXPECT_EQ(h.call("EXISTS z"), ":0");
  EXPECT_EQ(h.call("ZADD z NX 1 a 2 b"), ":2");
  EXPECT_EQ(h.call("ZADD z NX 5 a 3 c"), ":1");
  EXPECT_EQ(h.call("ZSCORE z a"), "\"1\"");
  EXPECT_EQ(h.call("ZADD z XX 5 a 4 d"), ":0");
  EXPECT_EQ(h.call("ZSCORE z a"), "\"5\"");
  EXPECT_EQ(h.call("ZSCORE z d"), "(nil)");
  EXPECT_EQ(h.call("ZADD z XX CH 6 a 4 d"), ":1");
  EXPECT_EQ(h.call("ZADD z CH 6 a 7 b 1 e"), ":2");
  EXPECT_EQ(h.call("ZADD z GT CH 1 a 8 b 2 f"), ":2");
  EXPECT_EQ(h.call("ZRANGE z 0 -1 WITHSCORES"),
            "[\"e\", \"1\", \"f\", \"2\", \"c\", \"3\", \"a\", \"6\", \"b\", \"8\"]");
  EXPECT_EQ(h.call("ZADD z LT CH 0 a 9 b 0 g"), ":2");
  EXPECT_EQ(h.call("ZADD z lt xx ch 10 g -1 g"), ":1");
  EXPECT_EQ(h.call("ZSCORE z g"), "\"-1\"");
  EXPECT_EQ(h.call("ZSCORE z a"), "\"0\"");
  // Option order does not matter and they are case-insensitive.
  EXPECT_EQ(h.call("ZADD z ch gt 100 a"), ":1");
  EXPECT_EQ(h.call("ZADD z GT 50 a"), ":0");
}

TEST_F(ZSetCommands, ZaddErrors) {
  EXPECT_EQ(h.call("ZADD z 1"), "-ERR wrong number of arguments for 'zadd' command");
  EXPECT_EQ(h.call("ZADD z NX"), "-ERR wrong number of arguments for 'zadd' command");
  EXPECT_EQ(h.call("ZADD z NX 1"), kSyntax);
  EXPECT_EQ(h.call("ZADD z 1 a 2"), kSyntax);
  EXPECT_EQ(h.call("ZADD z NX XX 1 a"),
            "-ERR XX and NX options at the same time are not compatible");
  EXPECT_EQ(h.call("ZADD z NX GT 1 a"),
            "-ERR GT, LT, and/or NX options at the same time are not compatible");
  EXPECT_EQ(h.call("ZADD z NX LT 1 a"),
            "-ERR GT, LT, and/or NX options at the same time are not compatible");
  EXPECT_EQ(h.call("ZADD z GT LT 1 a"),
            "-ERR GT, LT, and/or NX options at the same time are not compatible");
  EXPECT_EQ(h.call("ZADD z INCR 1 a 2 b"),
            "-ERR INCR option supports a single increment-element pair");
  // XX+NX is reported before GT+LT, and both before the scores are read.
  EXPECT_EQ(h.call("ZADD z NX XX GT LT x a"),
            "-ERR XX and NX options at the same time are not compatible");
  EXPECT_EQ(h.call("ZADD z GT LT INCR x a 2 b"),
            "-ERR GT, LT, and/or NX options at the same time are not compatible");
  for (const char* bad : {"abc", "nan", "NaN", "\"\"", "\" 1\"", "1x", "1e400", "--1"}) {
    EXPECT_EQ(h.call(std::string("ZADD z ") + bad + " a"), kNotFloat) << bad;
  }
  // Every score is checked before anything changes.
  EXPECT_EQ(h.call("ZADD z 1 a x b"), kNotFloat);
  EXPECT_EQ(h.call("EXISTS z"), ":0");
  EXPECT_EQ(h.call("SET s v"), "+OK");
  EXPECT_EQ(h.call("ZADD s 1 a"), kWrongType);
  EXPECT_EQ(h.call("ZADD s x a"), kNotFloat);  // the score is read before the key
  EXPECT_EQ(h.call("ZADD s XX 1 a"), kWrongType);
  EXPECT_TRUE(h.take_propagated().size() == 1);  // the SET
}

TEST_F(ZSetCommands, ZaddIncrAndZincrby) {
  EXPECT_EQ(h.call("ZADD z INCR 1.5 a"), "\"1.5\"");
  EXPECT_EQ(h.call("ZADD z INCR 1 a"), "\"2.5\"");
  EXPECT_EQ(h.call("ZINCRBY z 0.1 a"), "\"2.6000000000000001\"");
  EXPECT_EQ(h.call("ZINCRBY z -3 b"), "\"-3\"");
  EXPECT_EQ(h.call("ZADD z NX INCR 1 a"), "(nil)");
  EXPECT_EQ(h.call("ZADD z XX INCR 1 nope"), "(nil)");
  EXPECT_EQ(h.call("ZADD z GT INCR -1 a"), "(nil)");
  EXPECT_EQ(h.call("ZADD z LT INCR 1 a"), "(nil)");
  EXPECT_EQ(h.call("ZADD z LT INCR -1 a"), "\"1.6000000000000001\"");
  EXPECT_EQ(h.call("ZADD z INCR 0 a"), "\"1.6000000000000001\"");  // processed, unchanged
  EXPECT_EQ(h.call("ZINCRBY z inf a"), "\"inf\"");
  EXPECT_EQ(h.call("ZINCRBY z -inf a"), "-ERR resulting score is not a number (NaN)");
  EXPECT_EQ(h.call("ZSCORE z a"), "\"inf\"");
  EXPECT_EQ(h.call("ZINCRBY z nan a"), kNotFloat);
  EXPECT_EQ(h.call("ZINCRBY z abc a"), kNotFloat);
  // ZINCRBY reads options too, which leaves it without a pair.
  EXPECT_EQ(h.call("ZINCRBY z nx a"), kSyntax);
  EXPECT_EQ(h.call("ZINCRBY z incr 5"), kSyntax);
  EXPECT_EQ(h.call("ZINCRBY z 1"), "-ERR wrong number of arguments for 'zincrby' command");
  EXPECT_EQ(h.call("ZINCRBY z 1 a b"), "-ERR wrong number of arguments for 'zincrby' command");
  // ZINCRBY and ZADD INCR propagate as sent, only when they changed something.
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:ZADD z INCR 1.5 a", "0:ZADD z INCR 1 a", "0:ZINCRBY z 0.1 a",
                   "0:ZINCRBY z -3 b", "0:ZADD z LT INCR -1 a", "0:ZINCRBY z inf a"}));
  h.session.resp = 3;
  EXPECT_EQ(h.call("ZINCRBY z 1 b"), ",-2");
  EXPECT_EQ(h.call("ZADD z NX INCR 1 b"), "(nil)");
  EXPECT_EQ(h.last_raw, "_\r\n");
}

TEST_F(ZSetCommands, ZaddDirtyAndWatch) {
  uint64_t before = h.dirty();
  EXPECT_EQ(h.call("ZADD z 1 a 2 b"), ":2");
  EXPECT_EQ(h.dirty() - before, 2u);
  before = h.dirty();
  EXPECT_EQ(h.call("ZADD z 1 a 3 b 4 c"), ":1");
  EXPECT_EQ(h.dirty() - before, 2u);  // one added, one updated
  before = h.dirty();
  EXPECT_EQ(h.call("ZADD z 1 a"), ":0");
  EXPECT_EQ(h.dirty() - before, 0u);
  // A no-op does not touch WATCH; a change does.
  auto& other = h.new_client();
  EXPECT_EQ(h.call("WATCH z"), "+OK");
  EXPECT_EQ(h.call_as(other, "ZADD z 1 a"), ":0");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("ZCARD z"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC"), "[:3]");
  EXPECT_EQ(h.call("WATCH z"), "+OK");
  EXPECT_EQ(h.call_as(other, "ZADD z 5 a"), ":0");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("ZCARD z"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC"), "(nil)");
}

TEST_F(ZSetCommands, NegativeZero) {
  // A listpack stores an integral score as an integer: -0 comes back as 0. The skiplist keeps
  // it. ZADD INCR replies the score before it is stored.
  EXPECT_EQ(h.call("ZADD z INCR -0 m"), "\"-0\"");
  EXPECT_EQ(h.call("ZSCORE z m"), "\"0\"");
  use_skiplist();
  EXPECT_EQ(h.call("ZADD s -0 m"), ":1");
  EXPECT_EQ(h.encoding("s"), "\"skiplist\"");
  EXPECT_EQ(h.call("ZSCORE s m"), "\"-0\"");
  EXPECT_EQ(h.call("ZADD s 0 m"), ":0");  // 0 == -0: no change
  EXPECT_EQ(h.call("ZSCORE s m"), "\"-0\"");
  EXPECT_EQ(h.call("ZSCAN s 0"), "[\"0\", [\"m\", \"-0\"]]");
  h.state.settings().zset_limits.max_listpack_entries = 128;
  EXPECT_EQ(h.call("ZUNIONSTORE u 1 s"), ":1");
  EXPECT_EQ(h.encoding("u"), "\"listpack\"");
  EXPECT_EQ(h.call("ZSCORE u m"), "\"0\"");
  // ZRANGESTORE builds its result element by element in the walk's order: a score range
  // starts as a listpack, so its first 128 elements lose the sign; a rank range known to be
  // long starts as a skiplist and keeps it.
  h.state.settings().zset_limits.max_listpack_entries = 0;
  std::string line = "ZADD src";
  for (int i = 100; i < 300; ++i) line += " -0 m" + std::to_string(i);
  EXPECT_EQ(h.call(line), ":200");
  h.state.settings().zset_limits.max_listpack_entries = 128;
  EXPECT_EQ(h.call("ZRANGESTORE d1 src 0 -1"), ":200");
  EXPECT_EQ(h.call("ZRANGESTORE d2 src -inf +inf BYSCORE"), ":200");
  EXPECT_EQ(h.call("ZRANGESTORE d3 src +inf -inf BYSCORE REV"), ":200");
  EXPECT_EQ(h.call("ZMSCORE d1 m100 m227 m228 m299"), "[\"-0\", \"-0\", \"-0\", \"-0\"]");
  EXPECT_EQ(h.call("ZMSCORE d2 m100 m227 m228 m299"), "[\"0\", \"0\", \"-0\", \"-0\"]");
  EXPECT_EQ(h.call("ZMSCORE d3 m100 m171 m172 m299"), "[\"-0\", \"-0\", \"0\", \"0\"]");
  EXPECT_EQ(h.encoding("d2"), "\"skiplist\"");
}

// --- Encodings -----------------------------------------------------------------------------

TEST_F(ZSetCommands, EncodingThresholds) {
  EXPECT_EQ(fill("z", 128), ":128");
  EXPECT_EQ(h.encoding("z"), "\"listpack\"");
  EXPECT_EQ(h.call("ZADD z 1000 m5"), ":0");
  EXPECT_EQ(h.encoding("z"), "\"listpack\"");
  EXPECT_EQ(h.call("ZADD z 1 extra"), ":1");
  EXPECT_EQ(h.encoding("z"), "\"skiplist\"");
  // Never back: not even when emptied down to one member.
  EXPECT_EQ(h.call("ZREMRANGEBYRANK z 1 -1"), ":128");
  EXPECT_EQ(h.encoding("z"), "\"skiplist\"");

  EXPECT_EQ(h.call("ZADD v 1 " + std::string(64, 'x')), ":1");
  EXPECT_EQ(h.encoding("v"), "\"listpack\"");
  EXPECT_EQ(h.call("ZADD v 1 " + std::string(65, 'y')), ":1");
  EXPECT_EQ(h.encoding("v"), "\"skiplist\"");
  // A new set whose first member is too long starts as a skiplist.
  EXPECT_EQ(h.call("ZADD w 1 " + std::string(65, 'y') + " 2 b"), ":2");
  EXPECT_EQ(h.encoding("w"), "\"skiplist\"");
  // XX on a missing member of a listpack never converts.
  EXPECT_EQ(h.call("ZADD x 1 a"), ":1");
  EXPECT_EQ(h.call("ZADD x XX 1 " + std::string(65, 'y')), ":0");
  EXPECT_EQ(h.encoding("x"), "\"listpack\"");

  // The limits follow the settings (CONFIG SET zset-max-listpack-*).
  h.state.settings().zset_limits.max_listpack_entries = 2;
  h.state.settings().zset_limits.max_listpack_value = 3;
  EXPECT_EQ(h.call("ZADD s 1 a 2 b"), ":2");
  EXPECT_EQ(h.encoding("s"), "\"listpack\"");
  EXPECT_EQ(h.call("ZADD s 3 c"), ":1");
  EXPECT_EQ(h.encoding("s"), "\"skiplist\"");
  EXPECT_EQ(h.call("ZADD t 1 abcd"), ":1");
  EXPECT_EQ(h.encoding("t"), "\"skiplist\"");
  h.state.settings().zset_limits.max_listpack_entries = 0;
  EXPECT_EQ(h.call("ZADD u 1 a"), ":1");
  EXPECT_EQ(h.encoding("u"), "\"skiplist\"");
}

TEST_F(ZSetCommands, StoreCommandsPickTheEncodingForTheResult) {
  EXPECT_EQ(fill("big", 200), ":200");
  EXPECT_EQ(h.encoding("big"), "\"skiplist\"");
  EXPECT_EQ(h.call("ZRANGESTORE d big 0 9"), ":10");
  EXPECT_EQ(h.encoding("d"), "\"listpack\"");
  EXPECT_EQ(h.call("ZRANGESTORE d big 0 127"), ":128");
  EXPECT_EQ(h.encoding("d"), "\"listpack\"");
  EXPECT_EQ(h.call("ZRANGESTORE d big 0 128"), ":129");
  EXPECT_EQ(h.encoding("d"), "\"skiplist\"");
  EXPECT_EQ(h.call("ZRANGESTORE d big (10 +inf BYSCORE LIMIT 0 5"), ":5");
  EXPECT_EQ(h.encoding("d"), "\"listpack\"");
  EXPECT_EQ(h.call("ZUNIONSTORE u 1 big"), ":200");
  EXPECT_EQ(h.encoding("u"), "\"skiplist\"");
  EXPECT_EQ(h.call("ZADD small 1 m1 2 m2"), ":2");
  EXPECT_EQ(h.call("ZINTERSTORE i 2 big small"), ":2");
  EXPECT_EQ(h.encoding("i"), "\"listpack\"");
  EXPECT_EQ(h.call("ZDIFFSTORE df 2 big small"), ":198");
  EXPECT_EQ(h.encoding("df"), "\"skiplist\"");
  EXPECT_EQ(h.call("ZREMRANGEBYRANK df 3 -1"), ":195");
  EXPECT_EQ(h.encoding("df"), "\"skiplist\"");
  EXPECT_EQ(h.call("ZUNIONSTORE df2 1 df"), ":3");
  EXPECT_EQ(h.encoding("df2"), "\"listpack\"");
  EXPECT_EQ(h.call("ZADD long 1 " + std::string(65, 'x')), ":1");
  EXPECT_EQ(h.call("ZUNIONSTORE l 2 long small"), ":3");
  EXPECT_EQ(h.encoding("l"), "\"skiplist\"");
  EXPECT_EQ(h.call("ZRANGESTORE l2 l 0 -1"), ":3");
  EXPECT_EQ(h.encoding("l2"), "\"skiplist\"");
  EXPECT_EQ(h.call("ZRANGESTORE l2 l -1 -1"), ":1");
  EXPECT_EQ(h.encoding("l2"), "\"listpack\"");
}

// --- ZREM, ZCARD, ZSCORE, ZMSCORE, ZRANK ---------------------------------------------------

TEST_F(ZSetCommands, ZremDeletesTheEmptiedKey) {
  EXPECT_EQ(h.call("ZADD z 1 a 2 b 3 c"), ":3");
  uint64_t before = h.dirty();
  EXPECT_EQ(h.call("ZREM z a zz a"), ":1");
  EXPECT_EQ(h.dirty() - before, 1u);
  EXPECT_EQ(h.call("ZREM z zz"), ":0");
  EXPECT_EQ(h.call("ZREM nokey a"), ":0");
  EXPECT_EQ(h.call("ZREM z b c d"), ":2");
  EXPECT_EQ(h.call("EXISTS z"), ":0");
  EXPECT_EQ(h.call("ZREM z"), "-ERR wrong number of arguments for 'zrem' command");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:ZADD z 1 a 2 b 3 c", "0:ZREM z a zz a", "0:ZREM z b c d"}));
  use_skiplist();
  EXPECT_EQ(h.call("ZADD s 1 a 2 b"), ":2");
  EXPECT_EQ(h.call("ZREM s a b"), ":2");
  EXPECT_EQ(h.call("EXISTS s"), ":0");
}

TEST_F(ZSetCommands, Reads) {
  for (bool skiplist : {false, true}) {
    if (skiplist) use_skiplist();
    h.call("DEL z");
    EXPECT_EQ(h.call("ZADD z 1 a 2 b 3 c 3 d"), ":4");
    EXPECT_EQ(h.call("ZCARD z"), ":4");
    EXPECT_EQ(h.call("ZCARD nokey"), ":0");
    EXPECT_EQ(h.call("ZSCORE z b"), "\"2\"");
    EXPECT_EQ(h.call("ZSCORE z zz"), "(nil)");
    EXPECT_EQ(h.call("ZSCORE nokey b"), "(nil)");
    EXPECT_EQ(h.call("ZMSCORE z a zz c"), "[\"1\", (nil), \"3\"]");
    EXPECT_EQ(h.call("ZMSCORE nokey a b"), "[(nil), (nil)]");
    EXPECT_EQ(h.call("ZRANK z a"), ":0");
    EXPECT_EQ(h.call("ZRANK z d"), ":3");
    EXPECT_EQ(h.call("ZREVRANK z a"), ":3");
    EXPECT_EQ(h.call("ZREVRANK z d"), ":0");
    EXPECT_EQ(h.call("ZRANK z zz"), "(nil)");
    EXPECT_EQ(h.call("ZRANK nokey a"), "(nil)");
    // Redis 7.2's WITHSCORE.
    EXPECT_EQ(h.call("ZRANK z c WITHSCORE"), "[:2, \"3\"]");
    EXPECT_EQ(h.call("ZREVRANK z c withscore"), "[:1, \"3\"]");
    EXPECT_EQ(h.call("ZRANK z zz WITHSCORE"), "(nil)");
    EXPECT_EQ(h.last_raw, "*-1\r\n");
    EXPECT_EQ(h.call("ZRANK nokey zz WITHSCORE"), "(nil)");
    EXPECT_EQ(h.last_raw, "*-1\r\n");
    EXPECT_EQ(h.call("ZRANK z c WITHSCORES"), kSyntax);
    EXPECT_EQ(h.call("ZRANK z c WITHSCORE x"),
              "-ERR wrong number of arguments for 'zrank' command");
    EXPECT_EQ(h.call("ZREVRANK z c WITHSCORE x"),
              "-ERR wrong number of arguments for 'zrevrank' command");
  }
  EXPECT_EQ(h.call("ZSCORE z"), "-ERR wrong number of arguments for 'zscore' command");
  EXPECT_EQ(h.call("ZSCORE z a b"), "-ERR wrong number of arguments for 'zscore' command");
  EXPECT_EQ(h.call("ZMSCORE z"), "-ERR wrong number of arguments for 'zmscore' command");
  EXPECT_EQ(h.call("ZCARD"), "-ERR wrong number of arguments for 'zcard' command");
  EXPECT_EQ(h.call("ZRANK z"), "-ERR wrong number of arguments for 'zrank' command");
  h.session.resp = 3;
  EXPECT_EQ(h.call("ZSCORE z a"), ",1");
  EXPECT_EQ(h.call("ZMSCORE z a zz"), "[,1, (nil)]");
  EXPECT_EQ(h.call("ZRANK z b WITHSCORE"), "[:1, ,2]");
  EXPECT_EQ(h.call("ZRANK z zz WITHSCORE"), "(nil)");
  EXPECT_EQ(h.call("ZRANK z zz"), "(nil)");
  EXPECT_EQ(h.take_propagated().size(), 3u);  // the two ZADDs and the second DEL
}

TEST_F(ZSetCommands, ScoreFormatting) {
  EXPECT_EQ(h.call("ZADD z 0.1 a 1e17 b 123456789012345678 c -1.5e-10 d 3.0 e 1e308 f"), ":6");
  EXPECT_EQ(h.call("ZMSCORE z a b c d e f"),
            "[\"0.10000000000000001\", \"1e+17\", \"1.2345678901234568e+17\", "
            "\"-1.5e-10\", \"3\", \"1e+308\"]");
  h.session.resp = 3;
  EXPECT_EQ(h.call("ZSCORE z a"), ",0.10000000000000001");
  EXPECT_EQ(h.call("ZADD z -inf lo"), ":1");
  EXPECT_EQ(h.call("ZSCORE z lo"), ",-inf");
  EXPECT_EQ(h.last_raw, ",-inf\r\n");
}

TEST_F(ZSetCommands, WrongType) {
  EXPECT_EQ(h.call("SET s v"), "+OK");
  for (const char* line : {"ZADD s 1 a",
                           "ZINCRBY s 1 a",
                           "ZREM s a",
                           "ZCARD s",
                           "ZSCORE s a",
                           "ZMSCORE s a",
                           "ZRANK s a",
                           "ZREVRANK s a",
                           "ZRANK s a WITHSCORE",
                           "ZRANGE s 0 1",
                           "ZRANGEBYSCORE s 0 1",
                           "ZREVRANGEBYSCORE s 1 0",
                           "ZRANGEBYLEX s - +",
                           "ZREVRANGEBYLEX s + -",
                           "ZREVRANGE s 0 1",
                           "ZRANGESTORE d s 0 1",
                           "ZREMRANGEBYRANK s 0 1",
                           "ZREMRANGEBYSCORE s 0 1",
                           "ZREMRANGEBYLEX s - +",
                           "ZCOUNT s 0 1",
                           "ZLEXCOUNT s - +",
                           "ZPOPMIN s",
                           "ZPOPMAX s 2",
                           "ZMPOP 1 s MIN",
                           "ZRANDMEMBER s",
                           "ZRANDMEMBER s 2",
                           "ZUNION 1 s",
                           "ZINTER 1 s",
                           "ZDIFF 1 s",
                           "ZUNIONSTORE d 1 s",
                           "ZINTERSTORE d 1 s",
                           "ZDIFFSTORE d 1 s",
                           "ZINTERCARD 1 s",
                           "ZSCAN s 0",
                           "ZSCAN s 0 COUNT 0",
                           "BZPOPMIN s 0",
                           "BZPOPMAX s 0",
                           "BZMPOP 0 1 s MAX"}) {
    EXPECT_EQ(h.call(line), kWrongType) << line;
  }
  EXPECT_EQ(h.call("ZADD z 1 a"), ":1");
  for (const char* line : {"GET z", "INCR z", "HGET z a", "APPEND z x"}) {
    EXPECT_EQ(h.call(line), kWrongType) << line;
  }
  // A store command replaces a destination of any type.
  EXPECT_EQ(h.call("ZUNIONSTORE s 1 z"), ":1");
  EXPECT_EQ(h.call("TYPE s"), "+zset");
  EXPECT_EQ(h.call("SET s v"), "+OK");
  EXPECT_EQ(h.call("ZRANGESTORE s z 0 -1"), ":1");
  EXPECT_EQ(h.call("TYPE s"), "+zset");
  EXPECT_EQ(h.call("SET s v"), "+OK");
  // Range errors come before the type check; the type check before the pop count's.
  EXPECT_EQ(h.call("ZCOUNT s a b"), std::string(kMinMaxNotFloat));
  EXPECT_EQ(h.call("ZRANGE s a b"), std::string(kNotInteger));
  EXPECT_EQ(h.call("ZPOPMIN s 0"), kWrongType);
  EXPECT_EQ(h.call("ZPOPMIN s x"), "-ERR value is out of range, must be positive");
}

// --- ZRANGE and friends --------------------------------------------------------------------

TEST_F(ZSetCommands, RankRanges) {
  for (bool skiplist : {false, true}) {
    if (skiplist) use_skiplist();
    h.call("DEL z");
    EXPECT_EQ(h.call("ZADD z 1 a 2 b 3 c 4 d 5 e"), ":5");
    EXPECT_EQ(h.call("ZRANGE z 0 -1"), "[\"a\", \"b\", \"c\", \"d\", \"e\"]");
    EXPECT_EQ(h.call("ZRANGE z 1 2"), "[\"b\", \"c\"]");
    EXPECT_EQ(h.call("ZRANGE z -2 -1"), "[\"d\", \"e\"]");
    EXPECT_EQ(h.call("ZRANGE z -100 1"), "[\"a\", \"b\"]");
    EXPECT_EQ(h.call("ZRANGE z 3 100"), "[\"d\", \"e\"]");
    EXPECT_EQ(h.call("ZRANGE z 3 1"), "[]");
    EXPECT_EQ(h.call("ZRANGE z 5 10"), "[]");
    EXPECT_EQ(h.call("ZRANGE z -1 -2"), "[]");
    EXPECT_EQ(h.call("ZRANGE z 0 -100"), "[]");
    EXPECT_EQ(h.call("ZRANGE z -9223372036854775808 9223372036854775807"),
              "[\"a\", \"b\", \"c\", \"d\", \"e\"]");
    EXPECT_EQ(h.call("ZRANGE z 0 1 REV"), "[\"e\", \"d\"]");
    EXPECT_EQ(h.call("ZRANGE z -2 -1 rev withscores"), "[\"b\", \"2\", \"a\", \"1\"]");
    EXPECT_EQ(h.call("ZREVRANGE z 0 1 WITHSCORES"), "[\"e\", \"5\", \"d\", \"4\"]");
    EXPECT_EQ(h.call("ZREVRANGE z 4 10"), "[\"a\"]");
    EXPECT_EQ(h.call("ZRANGE nokey 0 -1"), "[]");
    // "LIMIT offset -1" is the default, so rank ranges accept it.
    EXPECT_EQ(h.call("ZRANGE z 0 1 LIMIT 5 -1"), "[\"a\", \"b\"]");
  }
  EXPECT_EQ(h.call("ZRANGE z a 1"), kNotInteger);
  EXPECT_EQ(h.call("ZRANGE z 0 1.5"), kNotInteger);
  EXPECT_EQ(h.call("ZRANGE z 0 1 LIMIT 0 1"),
            "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
            "BYLEX");
  EXPECT_EQ(h.call("ZRANGE z 0 1 LIMIT 0"), kSyntax);
  EXPECT_EQ(h.call("ZRANGE z 0 1 LIMIT x 1"), kNotInteger);
  EXPECT_EQ(h.call("ZRANGE z 0 1 REV REV"), kSyntax);
  EXPECT_EQ(h.call("ZRANGE z 0 1 BYSCORE BYLEX"), kSyntax);
  EXPECT_EQ(h.call("ZRANGE z 0 1 foo"), kSyntax);
  EXPECT_EQ(h.call("ZREVRANGE z 0 1 REV"), kSyntax);
  EXPECT_EQ(h.call("ZREVRANGE z 0 1 BYSCORE"), kSyntax);
  EXPECT_EQ(h.call("ZREVRANGE z 0 1 LIMIT 0 1"),
            "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
            "BYLEX");
  EXPECT_EQ(h.call("ZRANGE z 0"), "-ERR wrong number of arguments for 'zrange' command");
  EXPECT_EQ(h.call("ZREVRANGE z 0"), "-ERR wrong number of arguments for 'zrevrange' command");
  // Option errors come before the range arguments are read.
  EXPECT_EQ(h.call("ZRANGE z x y foo"), kSyntax);
  h.session.resp = 3;
  EXPECT_EQ(h.call("ZRANGE z 0 1 WITHSCORES"), "[[\"a\", ,1], [\"b\", ,2]]");
  EXPECT_EQ(h.call("ZRANGE z 0 1"), "[\"a\", \"b\"]");
  EXPECT_EQ(h.call("ZRANGE z 3 1 WITHSCORES"), "[]");
}

TEST_F(ZSetCommands, ScoreRanges) {
  for (bool skiplist : {false, true}) {
    if (skiplist) use_skiplist();
    h.call("DEL z");
    EXPECT_EQ(h.call("ZADD z -inf lo 1 a 2 b 2 bb 3 c 4 d +inf hi"), ":7");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z 2 3"), "[\"b\", \"bb\", \"c\"]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z (2 3"), "[\"c\"]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z 2 (3"), "[\"b\", \"bb\"]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z (2 (3"), "[]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z 3 2"), "[]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z -inf +inf"),
              "[\"lo\", \"a\", \"b\", \"bb\", \"c\", \"d\", \"hi\"]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z (-inf (+inf"), "[\"a\", \"b\", \"bb\", \"c\", \"d\"]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z inf inf"), "[\"hi\"]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z 2 2 WITHSCORES"), "[\"b\", \"2\", \"bb\", \"2\"]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z -inf +inf LIMIT 1 2"), "[\"a\", \"b\"]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z -inf +inf LIMIT 5 -1"), "[\"d\", \"hi\"]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z -inf +inf LIMIT 0 0"), "[]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z -inf +inf LIMIT -1 5"), "[]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z -inf +inf LIMIT 7 5"), "[]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z 1 2 LIMIT 2 5"), "[\"bb\"]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z 1 2 LIMIT 3 5"), "[]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z 1 2 WITHSCORES LIMIT 1 1 WITHSCORES"), "[\"b\", \"2\"]");
    EXPECT_EQ(h.call("ZREVRANGEBYSCORE z 3 2"), "[\"c\", \"bb\", \"b\"]");
    EXPECT_EQ(h.call("ZREVRANGEBYSCORE z 2 3"), "[]");
    EXPECT_EQ(h.call("ZREVRANGEBYSCORE z +inf -inf LIMIT 1 3 WITHSCORES"),
              "[\"d\", \"4\", \"c\", \"3\", \"bb\", \"2\"]");
    EXPECT_EQ(h.call("ZRANGE z (1 3 BYSCORE"), "[\"b\", \"bb\", \"c\"]");
    EXPECT_EQ(h.call("ZRANGE z 3 (1 BYSCORE REV LIMIT 0 2"), "[\"c\", \"bb\"]");
    EXPECT_EQ(h.call("ZRANGE z 1 3 BYSCORE REV"), "[]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE nokey 0 1"), "[]");
    // strtod's view of a bound: blanks, hex, an empty text or a lone "(" read as 0, overflow
    // read as infinity, anything after a NUL byte ignored.
    EXPECT_EQ(h.call("ZRANGEBYSCORE z \" 1\" 1"), "[\"a\"]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z 0x1 0x2"), "[\"a\", \"b\", \"bb\"]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z \"\" 1"), "[\"a\"]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z ( 1"), "[\"a\"]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z 1e400 inf"), "[\"hi\"]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z \"4\\x00junk\" +inf"), "[\"d\", \"hi\"]");
    EXPECT_EQ(h.call("ZRANGEBYSCORE z -Infinity -INF"), "[\"lo\"]");
  }
  for (const char* bad : {"abc", "nan", "(nan", "1x", "((1", "\" \"", "\"1 \""}) {
    EXPECT_EQ(h.call(std::string("ZRANGEBYSCORE z ") + bad + " 1"), kMinMaxNotFloat) << bad;
    EXPECT_EQ(h.call(std::string("ZRANGEBYSCORE z 1 ") + bad), kMinMaxNotFloat) << bad;
  }
  EXPECT_EQ(h.call("ZRANGEBYSCORE z 0 1 BYSCORE"), kSyntax);
  EXPECT_EQ(h.call("ZRANGEBYSCORE z 0 1 REV"), kSyntax);
  EXPECT_EQ(h.call("ZRANGEBYSCORE z 0 1 LIMIT 0"), kSyntax);
  EXPECT_EQ(h.call("ZRANGEBYSCORE z 0 1 LIMIT 0 x"), kNotInteger);
  EXPECT_EQ(h.call("ZRANGEBYSCORE z x 1 LIMIT 0 x"), kNotInteger);  // options first
  EXPECT_EQ(h.call("ZREVRANGEBYSCORE z 1 0 BYLEX"), kSyntax);
  h.session.resp = 3;
  EXPECT_EQ(h.call("ZRANGEBYSCORE z 1 2 WITHSCORES"), "[[\"a\", ,1], [\"b\", ,2], [\"bb\", ,2]]");
  EXPECT_EQ(h.call("ZRANGEBYSCORE z 9 10 WITHSCORES"), "[]");
}

TEST_F(ZSetCommands, LexRanges) {
  for (bool skiplist : {false, true}) {
    if (skiplist) use_skiplist();
    h.call("DEL z");
    EXPECT_EQ(h.call("ZADD z 0 a 0 b 0 bb 0 c 0 d 0 \"\""), ":6");
    EXPECT_EQ(h.call("ZRANGEBYLEX z - +"), "[\"\", \"a\", \"b\", \"bb\", \"c\", \"d\"]");
    EXPECT_EQ(h.call("ZRANGEBYLEX z [b [c"), "[\"b\", \"bb\", \"c\"]");
    EXPECT_EQ(h.call("ZRANGEBYLEX z (b (c"), "[\"bb\"]");
    EXPECT_EQ(h.call("ZRANGEBYLEX z [ (a"), "[\"\"]");
    EXPECT_EQ(h.call("ZRANGEBYLEX z ( +"), "[\"a\", \"b\", \"bb\", \"c\", \"d\"]");
    EXPECT_EQ(h.call("ZRANGEBYLEX z + -"), "[]");
    EXPECT_EQ(h.call("ZRANGEBYLEX z - -"), "[]");
    EXPECT_EQ(h.call("ZRANGEBYLEX z [c [b"), "[]");
    EXPECT_EQ(h.call("ZRANGEBYLEX z [b (b"), "[]");
    EXPECT_EQ(h.call("ZRANGEBYLEX z - + LIMIT 1 2"), "[\"a\", \"b\"]");
    EXPECT_EQ(h.call("ZRANGEBYLEX z - + LIMIT 4 -5"), "[\"c\", \"d\"]");
    EXPECT_EQ(h.call("ZRANGEBYLEX z - + LIMIT -1 2"), "[]");
    EXPECT_EQ(h.call("ZREVRANGEBYLEX z [c [b"), "[\"c\", \"bb\", \"b\"]");
    EXPECT_EQ(h.call("ZREVRANGEBYLEX z + - LIMIT 0 2"), "[\"d\", \"c\"]");
    EXPECT_EQ(h.call("ZRANGE z [b [c BYLEX"), "[\"b\", \"bb\", \"c\"]");
    EXPECT_EQ(h.call("ZRANGE z (c - BYLEX REV LIMIT 1 2"), "[\"b\", \"a\"]");
    EXPECT_EQ(h.call("ZLEXCOUNT z - +"), ":6");
    EXPECT_EQ(h.call("ZLEXCOUNT z (b [d"), ":3");
    EXPECT_EQ(h.call("ZLEXCOUNT z + -"), ":0");
    EXPECT_EQ(h.call("ZLEXCOUNT nokey - +"), ":0");
    EXPECT_EQ(h.call("ZRANGEBYLEX nokey - +"), "[]");
  }
  for (const char* bad : {"a", "\"\"", "+a", "-a", "{a", "++"}) {
    EXPECT_EQ(h.call(std::string("ZRANGEBYLEX z ") + bad + " +"), kMinMaxNotLex) << bad;
    EXPECT_EQ(h.call(std::string("ZRANGEBYLEX z - ") + bad), kMinMaxNotLex) << bad;
    EXPECT_EQ(h.call(std::string("ZLEXCOUNT z - ") + bad), kMinMaxNotLex) << bad;
  }
  EXPECT_EQ(h.call("ZRANGEBYLEX z - + WITHSCORES"),
            "-ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  EXPECT_EQ(h.call("ZRANGE z - + BYLEX WITHSCORES"),
            "-ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  // LIMIT with a rank range is reported before WITHSCORES with BYLEX can be.
  EXPECT_EQ(h.call("ZRANGEBYLEX z - + BYLEX"), kSyntax);
  EXPECT_EQ(h.call("ZRANGEBYLEX z a b WITHSCORES"),
            "-ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  EXPECT_EQ(h.call("ZLEXCOUNT z -"), "-ERR wrong number of arguments for 'zlexcount' command");
}

TEST_F(ZSetCommands, ZcountAndErrors) {
  for (bool skiplist : {false, true}) {
    if (skiplist) use_skiplist();
    h.call("DEL z");
    EXPECT_EQ(h.call("ZADD z 1 a 2 b 2 c 3 d"), ":4");
    EXPECT_EQ(h.call("ZCOUNT z 2 2"), ":2");
    EXPECT_EQ(h.call("ZCOUNT z (1 3"), ":3");
    EXPECT_EQ(h.call("ZCOUNT z -inf +inf"), ":4");
    EXPECT_EQ(h.call("ZCOUNT z (2 (2"), ":0");
    EXPECT_EQ(h.call("ZCOUNT z 5 1"), ":0");
    EXPECT_EQ(h.call("ZCOUNT nokey 0 1"), ":0");
  }
  EXPECT_EQ(h.call("ZCOUNT nokey x 1"), kMinMaxNotFloat);
  EXPECT_EQ(h.call("ZCOUNT z 1"), "-ERR wrong number of arguments for 'zcount' command");
}

TEST_F(ZSetCommands, Zrangestore) {
  EXPECT_EQ(h.call("ZADD z 1 a 2 b 3 c 4 d"), ":4");
  EXPECT_EQ(h.call("ZRANGESTORE d z 1 2"), ":2");
  EXPECT_EQ(h.call("ZRANGE d 0 -1 WITHSCORES"), "[\"b\", \"2\", \"c\", \"3\"]");
  EXPECT_EQ(h.call("ZRANGESTORE d z 0 1 REV"), ":2");
  EXPECT_EQ(h.call("ZRANGE d 0 -1 WITHSCORES"), "[\"c\", \"3\", \"d\", \"4\"]");
  EXPECT_EQ(h.call("ZRANGESTORE d z (1 +inf BYSCORE LIMIT 1 1"), ":1");
  EXPECT_EQ(h.call("ZRANGE d 0 -1"), "[\"c\"]");
  EXPECT_EQ(h.call("ZRANGESTORE d z [c - BYLEX REV"), ":3");
  EXPECT_EQ(h.call("ZRANGE d 0 -1"), "[\"a\", \"b\", \"c\"]");
  // The destination loses its TTL.
  EXPECT_EQ(h.call("EXPIRE d 100"), ":1");
  EXPECT_EQ(h.call("ZRANGESTORE d z 0 0"), ":1");
  EXPECT_EQ(h.call("TTL d"), ":-1");
  // Onto itself.
  EXPECT_EQ(h.call("ZRANGESTORE z z 1 -1"), ":3");
  EXPECT_EQ(h.call("ZRANGE z 0 -1"), "[\"b\", \"c\", \"d\"]");
  // An empty result deletes the destination; a missing source too.
  EXPECT_EQ(h.call("ZRANGESTORE d z 5 10"), ":0");
  EXPECT_EQ(h.call("EXISTS d"), ":0");
  EXPECT_EQ(h.call("ZRANGESTORE d z 5 10"), ":0");
  EXPECT_EQ(h.call("SET d x"), "+OK");
  EXPECT_EQ(h.call("ZRANGESTORE d nokey 0 -1"), ":0");
  EXPECT_EQ(h.call("EXISTS d"), ":0");
  EXPECT_EQ(h.call("ZRANGESTORE d z 0 1 WITHSCORES"), kSyntax);
  EXPECT_EQ(h.call("ZRANGESTORE d z 0 1 LIMIT 0 1"),
            "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
            "BYLEX");
  EXPECT_EQ(h.call("ZRANGESTORE d z 0"),
            "-ERR wrong number of arguments for 'zrangestore' command");
  EXPECT_EQ(h.call("ZRANGESTORE d z a b BYSCORE"), kMinMaxNotFloat);
  EXPECT_EQ(
      h.take_propagated(),
      (Lines{"0:ZADD z 1 a 2 b 3 c 4 d", "0:ZRANGESTORE d z 1 2", "0:ZRANGESTORE d z 0 1 REV",
             "0:ZRANGESTORE d z (1 +inf BYSCORE LIMIT 1 1", "0:ZRANGESTORE d z [c - BYLEX REV",
             "0:PEXPIREAT d " + std::to_string(h.clock.wall_ms() + 100'000),
             "0:ZRANGESTORE d z 0 0", "0:ZRANGESTORE z z 1 -1", "0:ZRANGESTORE d z 5 10",
             "0:SET d x", "0:ZRANGESTORE d nokey 0 -1"}));
}

// --- Range removals ------------------------------------------------------------------------

TEST_F(ZSetCommands, RemoveRanges) {
  for (bool skiplist : {false, true}) {
    if (skiplist) use_skiplist();
    h.call("DEL z lex");
    EXPECT_EQ(h.call("ZADD z 1 a 2 b 3 c 4 d 5 e 6 f"), ":6");
    EXPECT_EQ(h.call("ZREMRANGEBYRANK z 0 0"), ":1");
    EXPECT_EQ(h.call("ZREMRANGEBYRANK z -1 -1"), ":1");
    EXPECT_EQ(h.call("ZREMRANGEBYRANK z 3 1"), ":0");
    EXPECT_EQ(h.call("ZREMRANGEBYRANK z 10 20"), ":0");
    EXPECT_EQ(h.call("ZRANGE z 0 -1"), "[\"b\", \"c\", \"d\", \"e\"]");
    EXPECT_EQ(h.call("ZREMRANGEBYSCORE z (2 3"), ":1");
    EXPECT_EQ(h.call("ZREMRANGEBYSCORE z 10 20"), ":0");
    EXPECT_EQ(h.call("ZREMRANGEBYSCORE z 5 4"), ":0");
    EXPECT_EQ(h.call("ZRANGE z 0 -1"), "[\"b\", \"d\", \"e\"]");
    // Lex ranges over mixed scores: in a listpack the last member ("e") is below "(x", so
    // nothing is in range, as Redis decides. (A skiplist's answer depends on its nodes' random
    // levels, in Redis too.)
    EXPECT_EQ(h.call("ZADD z 0 x 0 y 0 z"), ":3");
    if (!skiplist) {
      EXPECT_EQ(h.call("ZREMRANGEBYLEX z (x [y"), ":0");
      EXPECT_EQ(h.call("ZREMRANGEBYLEX z [a (d"), ":0");
      EXPECT_EQ(h.call("ZREMRANGEBYLEX z (w [y"), ":0");
    }
    EXPECT_EQ(h.call("ZADD lex 0 x 0 y 0 z"), ":3");
    EXPECT_EQ(h.call("ZREMRANGEBYLEX lex (x [y"), ":1");
    EXPECT_EQ(h.call("ZREMRANGEBYLEX lex + -"), ":0");
    EXPECT_EQ(h.call("ZRANGE lex 0 -1"), "[\"x\", \"z\"]");
    EXPECT_EQ(h.call("ZRANGE z 0 -1"), "[\"x\", \"y\", \"z\", \"b\", \"d\", \"e\"]");
    EXPECT_EQ(h.call("ZREMRANGEBYRANK z -100 100"), ":6");
    EXPECT_EQ(h.call("EXISTS z"), ":0");
    EXPECT_EQ(h.call("ZADD z 1 a"), ":1");
    EXPECT_EQ(h.call("ZREMRANGEBYSCORE z -inf +inf"), ":1");
    EXPECT_EQ(h.call("EXISTS z"), ":0");
    EXPECT_EQ(h.call("ZADD z 0 a"), ":1");
    EXPECT_EQ(h.call("ZREMRANGEBYLEX z - +"), ":1");
    EXPECT_EQ(h.call("EXISTS z"), ":0");
  }
  EXPECT_EQ(h.call("ZREMRANGEBYRANK nokey 0 -1"), ":0");
  EXPECT_EQ(h.call("ZREMRANGEBYRANK nokey a 1"), kNotInteger);
  EXPECT_EQ(h.call("ZREMRANGEBYSCORE nokey a 1"), kMinMaxNotFloat);
  EXPECT_EQ(h.call("ZREMRANGEBYLEX nokey a +"), kMinMaxNotLex);
  EXPECT_EQ(h.call("ZREMRANGEBYRANK z 0"),
            "-ERR wrong number of arguments for 'zremrangebyrank' command");
  h.take_propagated();
  uint64_t before = h.dirty();
  EXPECT_EQ(h.call("ZADD z 1 a 2 b 3 c"), ":3");
  EXPECT_EQ(h.call("ZREMRANGEBYSCORE z 1 2"), ":2");
  EXPECT_EQ(h.call("ZREMRANGEBYSCORE z 1 2"), ":0");
  EXPECT_EQ(h.dirty() - before, 5u);
  EXPECT_EQ(h.take_propagated(), (Lines{"0:ZADD z 1 a 2 b 3 c", "0:ZREMRANGEBYSCORE z 1 2"}));
}

// --- Pops ----------------------------------------------------------------------------------

TEST_F(ZSetCommands, Zpop) {
  EXPECT_EQ(h.call("ZADD z 1 a 2 b 3 c 4 d"), ":4");
  EXPECT_EQ(h.call("ZPOPMIN z"), "[\"a\", \"1\"]");
  EXPECT_EQ(h.call("ZPOPMAX z"), "[\"d\", \"4\"]");
  EXPECT_EQ(h.call("ZPOPMIN z 0"), "[]");
  EXPECT_EQ(h.call("ZPOPMAX z 5"), "[\"c\", \"3\", \"b\", \"2\"]");
  EXPECT_EQ(h.call("EXISTS z"), ":0");
  EXPECT_EQ(h.call("ZPOPMIN z"), "[]");
  EXPECT_EQ(h.call("ZPOPMIN z 0"), "[]");
  EXPECT_EQ(h.call("ZPOPMIN z -1"), "-ERR value is out of range, must be positive");
  EXPECT_EQ(h.call("ZPOPMIN z x"), "-ERR value is out of range, must be positive");
  EXPECT_EQ(h.call("ZPOPMIN z 1 2"), kSyntax);
  EXPECT_EQ(h.call("ZPOPMIN"), "-ERR wrong number of arguments for 'zpopmin' command");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:ZADD z 1 a 2 b 3 c 4 d", "0:ZPOPMIN z", "0:ZPOPMAX z", "0:ZPOPMAX z 5"}));
  h.session.resp = 3;
  EXPECT_EQ(h.call("ZADD z 1 a 2 b 3 c"), ":3");
  EXPECT_EQ(h.call("ZPOPMIN z"), "[\"a\", ,1]");
  EXPECT_EQ(h.call("ZPOPMIN z 1"), "[[\"b\", ,2]]");
  EXPECT_EQ(h.call("ZPOPMAX z 3"), "[[\"c\", ,3]]");
  EXPECT_EQ(h.call("ZPOPMAX z 3"), "[]");
  uint64_t before = h.dirty();
  EXPECT_EQ(h.call("ZADD z 1 a 2 b 3 c"), ":3");
  EXPECT_EQ(h.call("ZPOPMAX z 2"), "[[\"c\", ,3], [\"b\", ,2]]");
  EXPECT_EQ(h.dirty() - before, 5u);
}

TEST_F(ZSetCommands, Zmpop) {
  EXPECT_EQ(h.call("ZADD z 1 a 2 b 3 c"), ":3");
  EXPECT_EQ(h.call("ZADD y 5 q"), ":1");
  EXPECT_EQ(h.call("ZMPOP 2 nokey z MIN"), "[\"z\", [[\"a\", \"1\"]]]");
  EXPECT_EQ(h.call("ZMPOP 2 y z max COUNT 10"), "[\"y\", [[\"q\", \"5\"]]]");
  EXPECT_EQ(h.call("EXISTS y"), ":0");
  EXPECT_EQ(h.call("ZMPOP 1 z MAX COUNT 10"), "[\"z\", [[\"c\", \"3\"], [\"b\", \"2\"]]]");
  EXPECT_EQ(h.call("ZMPOP 2 z y MIN"), "(nil)");
  EXPECT_EQ(h.last_raw, "*-1\r\n");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:ZADD z 1 a 2 b 3 c", "0:ZADD y 5 q", "0:ZPOPMIN z 1",
                                        "0:ZPOPMAX y 1", "0:ZPOPMAX z 2"}));
  EXPECT_EQ(h.call("ZMPOP 0 z MIN"), "-ERR numkeys should be greater than 0");
  EXPECT_EQ(h.call("ZMPOP -1 z MIN"), "-ERR numkeys should be greater than 0");
  EXPECT_EQ(h.call("ZMPOP x z MIN"), "-ERR numkeys should be greater than 0");
  EXPECT_EQ(h.call("ZMPOP 2 z MIN"), kSyntax);
  EXPECT_EQ(h.call("ZMPOP 9223372036854775807 z MIN"), kSyntax);
  EXPECT_EQ(h.call("ZMPOP 1 z MID"), kSyntax);
  EXPECT_EQ(h.call("ZMPOP 1 z MIN COUNT"), kSyntax);
  EXPECT_EQ(h.call("ZMPOP 1 z MIN COUNT 0"), "-ERR count should be greater than 0");
  EXPECT_EQ(h.call("ZMPOP 1 z MIN COUNT x"), "-ERR count should be greater than 0");
  EXPECT_EQ(h.call("ZMPOP 1 z MIN COUNT 1 COUNT 1"), kSyntax);
  EXPECT_EQ(h.call("ZMPOP 1 z MIN foo"), kSyntax);
  EXPECT_EQ(h.call("ZMPOP 1 z"), "-ERR wrong number of arguments for 'zmpop' command");
  h.session.resp = 3;
  EXPECT_EQ(h.call("ZADD z 1 a"), ":1");
  EXPECT_EQ(h.call("ZMPOP 1 z MIN"), "[\"z\", [[\"a\", ,1]]]");
  EXPECT_EQ(h.call("ZMPOP 1 z MIN"), "(nil)");
  EXPECT_EQ(h.last_raw, "_\r\n");
}

// --- ZRANDMEMBER ---------------------------------------------------------------------------

TEST_F(ZSetCommands, Zrandmember) {
  EXPECT_EQ(h.call("ZRANDMEMBER nokey"), "(nil)");
  EXPECT_EQ(h.call("ZRANDMEMBER nokey 5"), "[]");
  EXPECT_EQ(h.call("ZRANDMEMBER nokey -5 WITHSCORES"), "[]");
  for (bool skiplist : {false, true}) {
    if (skiplist) use_skiplist();
    h.call("DEL z");
    EXPECT_EQ(h.call("ZADD z 1 a 2 b 3 c"), ":3");
    const std::set<std::string> members = {"\"a\"", "\"b\"", "\"c\""};
    for (int i = 0; i < 20; ++i) EXPECT_TRUE(members.count(h.call("ZRANDMEMBER z")));
    EXPECT_EQ(h.call("ZRANDMEMBER z 0"), "[]");
    // The whole set, from the highest score down.
    EXPECT_EQ(h.call("ZRANDMEMBER z 3"), "[\"c\", \"b\", \"a\"]");
    EXPECT_EQ(h.call("ZRANDMEMBER z 10 WITHSCORES"), "[\"c\", \"3\", \"b\", \"2\", \"a\", \"1\"]");
    RespValue two = h.reply("ZRANDMEMBER z 2");
    ASSERT_EQ(two.elements.size(), 2u);
    EXPECT_NE(two.elements[0].str, two.elements[1].str);
    RespValue many = h.reply("ZRANDMEMBER z -20");
    EXPECT_EQ(many.elements.size(), 20u);
    RespValue scored = h.reply("ZRANDMEMBER z -4 WITHSCORES");
    ASSERT_EQ(scored.elements.size(), 8u);
    for (size_t i = 0; i < 8; i += 2) {
      EXPECT_EQ(scored.elements[i].str[0] - 'a' + 1, std::stoi(scored.elements[i + 1].str));
    }
    RespValue one = h.reply("ZRANDMEMBER z 1 WITHSCORES");
    EXPECT_EQ(one.elements.size(), 2u);
  }
  EXPECT_EQ(h.call("ZRANDMEMBER z x"), kNotInteger);
  EXPECT_EQ(h.call("ZRANDMEMBER z -9223372036854775808"),
            "-ERR value is out of range, value must between -9223372036854775807 and "
            "9223372036854775807");
  EXPECT_EQ(h.call("ZRANDMEMBER z 1 WITHSCORE"), kSyntax);
  EXPECT_EQ(h.call("ZRANDMEMBER z 1 WITHSCORES x"), kSyntax);
  EXPECT_EQ(h.call("ZRANDMEMBER z 5000000000000000000 WITHSCORES"), "-ERR value is out of range");
  EXPECT_EQ(h.call("ZRANDMEMBER nokey x"), kNotInteger);
  h.session.resp = 3;
  EXPECT_EQ(h.call("ZRANDMEMBER z 5 WITHSCORES"), "[[\"c\", ,3], [\"b\", ,2], [\"a\", ,1]]");
  RespValue nested = h.reply("ZRANDMEMBER z -2 WITHSCORES");
  ASSERT_EQ(nested.elements.size(), 2u);
  EXPECT_EQ(nested.elements[0].elements.size(), 2u);
  EXPECT_EQ(h.take_propagated().size(), 3u);  // ZADDs and the second DEL only
}

// --- ZSCAN ---------------------------------------------------------------------------------

TEST_F(ZSetCommands, ZscanListpack) {
  EXPECT_EQ(h.call("ZADD z 1 a 2.5 b 3 ab"), ":3");
  EXPECT_EQ(h.call("ZSCAN z 0"), "[\"0\", [\"a\", \"1\", \"b\", \"2.5\", \"ab\", \"3\"]]");
  EXPECT_EQ(h.call("ZSCAN z 0 MATCH a*"), "[\"0\", [\"a\", \"1\", \"ab\", \"3\"]]");
  EXPECT_EQ(h.call("ZSCAN z 0 COUNT 1 MATCH nomatch"), "[\"0\", []]");
  EXPECT_EQ(h.call("ZSCAN nokey 0"), "[\"0\", []]");
  EXPECT_EQ(h.call("ZSCAN nokey 0 COUNT 0"), "[\"0\", []]");  // options unread for a missing key
  EXPECT_EQ(h.call("ZSCAN z x"), "-ERR invalid cursor");
  EXPECT_EQ(h.call("ZSCAN z 0 COUNT 0"), kSyntax);
  EXPECT_EQ(h.call("ZSCAN z 0 COUNT x"), kNotInteger);
  EXPECT_EQ(h.call("ZSCAN z 0 MATCH"), kSyntax);
  EXPECT_EQ(h.call("ZSCAN z 0 TYPE zset"), kSyntax);
  EXPECT_EQ(h.call("ZSCAN z"), "-ERR wrong number of arguments for 'zscan' command");
  h.session.resp = 3;
  // Scores are plain strings in RESP3 too.
  EXPECT_EQ(h.call("ZSCAN z 0 MATCH b"), "[\"0\", [\"b\", \"2.5\"]]");
}

TEST_F(ZSetCommands, ZscanSkiplistReturnsEverything) {
  EXPECT_EQ(fill("z", 1000), ":1000");
  EXPECT_EQ(h.encoding("z"), "\"skiplist\"");
  // Writes between calls: new members may or may not be returned, old ones must be.
  int calls = 0;
  const std::vector<std::string> items = h.scan_all(
      "ZSCAN z", "COUNT 20", [&](int step) { h.call("ZADD z -1 new" + std::to_string(step)); },
      &calls);
  ASSERT_EQ(items.size() % 2, 0u);
  std::set<std::string> seen;
  for (size_t i = 0; i < items.size(); i += 2) {
    if (items[i][0] == 'm') {
      EXPECT_EQ("m" + items[i + 1], items[i]);
    }
    seen.insert(items[i]);
  }
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.count("m" + std::to_string(i))) << i;
  EXPECT_GT(calls, 10);
  RespValue matched = h.reply("ZSCAN z 0 MATCH m99* COUNT 10000");
  EXPECT_EQ(matched.elements[0].str, "0");
  EXPECT_EQ(matched.elements[1].elements.size(), 22u);  // m99 and m990..m999
}

// --- Set algebra ---------------------------------------------------------------------------

TEST_F(ZSetCommands, UnionInterDiff) {
  EXPECT_EQ(h.call("ZADD a 1 x 2 y 3 z"), ":3");
  EXPECT_EQ(h.call("ZADD b 10 y 20 z 30 w"), ":3");
  EXPECT_EQ(h.call("ZUNION 2 a b WITHSCORES"),
            "[\"x\", \"1\", \"y\", \"12\", \"z\", \"23\", \"w\", \"30\"]");
  EXPECT_EQ(h.call("ZUNION 2 a b"), "[\"x\", \"y\", \"z\", \"w\"]");
  EXPECT_EQ(h.call("ZUNION 2 a b WEIGHTS 2 0.5 AGGREGATE MAX WITHSCORES"),
            "[\"x\", \"2\", \"y\", \"5\", \"z\", \"10\", \"w\", \"15\"]");
  EXPECT_EQ(h.call("ZUNION 2 a b aggregate min withscores"),
            "[\"x\", \"1\", \"y\", \"2\", \"z\", \"3\", \"w\", \"30\"]");
  EXPECT_EQ(h.call("ZINTER 2 a b WITHSCORES"), "[\"y\", \"12\", \"z\", \"23\"]");
  EXPECT_EQ(h.call("ZINTER 2 a b WEIGHTS 1 -1 WITHSCORES"), "[\"z\", \"-17\", \"y\", \"-8\"]");
  EXPECT_EQ(h.call("ZINTER 2 a nokey"), "[]");
  EXPECT_EQ(h.call("ZDIFF 2 a b WITHSCORES"), "[\"x\", \"1\"]");
  EXPECT_EQ(h.call("ZDIFF 2 b a"), "[\"w\"]");
  EXPECT_EQ(h.call("ZDIFF 2 nokey a"), "[]");
  EXPECT_EQ(h.call("ZDIFF 2 a a"), "[]");
  EXPECT_EQ(h.call("ZDIFF 1 a"), "[\"x\", \"y\", \"z\"]");
  EXPECT_EQ(h.call("ZUNION 2 a a WITHSCORES"), "[\"x\", \"2\", \"y\", \"4\", \"z\", \"6\"]");
  EXPECT_EQ(h.call("ZINTERCARD 2 a b"), ":2");
  EXPECT_EQ(h.call("ZINTERCARD 2 a b LIMIT 1"), ":1");
  EXPECT_EQ(h.call("ZINTERCARD 2 a b LIMIT 0"), ":2");
  EXPECT_EQ(h.call("ZINTERCARD 2 a nokey"), ":0");
  // Infinities: a weighted NaN and a sum to NaN become 0.
  EXPECT_EQ(h.call("ZADD inf +inf x -inf y"), ":2");
  EXPECT_EQ(h.call("ZUNION 2 inf a WEIGHTS 0 1 WITHSCORES"),
            "[\"x\", \"1\", \"y\", \"2\", \"z\", \"3\"]");
  EXPECT_EQ(h.call("ZUNION 2 inf inf WEIGHTS 1 -1 WITHSCORES"), "[\"x\", \"0\", \"y\", \"0\"]");
  EXPECT_EQ(h.call("ZINTER 2 inf a AGGREGATE MAX WITHSCORES"), "[\"y\", \"2\", \"x\", \"inf\"]");
  h.session.resp = 3;
  EXPECT_EQ(h.call("ZINTER 2 a b WITHSCORES"), "[[\"y\", ,12], [\"z\", ,23]]");
  EXPECT_EQ(h.call("ZDIFF 2 a b"), "[\"x\"]");
  EXPECT_TRUE(h.take_propagated().size() == 3);  // reads propagate nothing
}

TEST_F(ZSetCommands, SetsAreInputsScoringOne) {
  EXPECT_EQ(h.call("ZADD z 5 a 6 b"), ":2");
  EXPECT_EQ(h.call("SADD s a c 7"), ":3");
  EXPECT_EQ(h.call("SADD ints 1 2 3"), ":3");
  EXPECT_EQ(h.call("ZUNION 2 z s WITHSCORES"),
            "[\"7\", \"1\", \"c\", \"1\", \"a\", \"6\", \"b\", \"6\"]");
  EXPECT_EQ(h.call("ZINTER 2 z s WITHSCORES"), "[\"a\", \"6\"]");
  EXPECT_EQ(h.call("ZINTER 2 s s WITHSCORES"), "[\"7\", \"2\", \"a\", \"2\", \"c\", \"2\"]");
  EXPECT_EQ(h.call("ZDIFF 2 s z WITHSCORES"), "[\"7\", \"1\", \"c\", \"1\"]");
  EXPECT_EQ(h.call("ZUNION 2 ints s WEIGHTS 2 1 WITHSCORES"),
            "[\"7\", \"1\", \"a\", \"1\", \"c\", \"1\", \"1\", \"2\", \"2\", \"2\", \"3\", \"2\"]");
  EXPECT_EQ(h.call("ZINTERCARD 2 s z"), ":1");
  EXPECT_EQ(h.call("ZUNIONSTORE d 2 ints s"), ":6");
  EXPECT_EQ(h.call("TYPE d"), "+zset");
  EXPECT_EQ(h.call("ZSCORE d 2"), "\"1\"");
}

TEST_F(ZSetCommands, StoreForms) {
  EXPECT_EQ(h.call("ZADD a 1 x 2 y"), ":2");
  EXPECT_EQ(h.call("ZADD b 3 y 4 z"), ":2");
  EXPECT_EQ(h.call("ZUNIONSTORE d 2 a b"), ":3");
  EXPECT_EQ(h.call("ZRANGE d 0 -1 WITHSCORES"), "[\"x\", \"1\", \"z\", \"4\", \"y\", \"5\"]");
  EXPECT_EQ(h.call("ZINTERSTORE d 2 a b AGGREGATE MIN"), ":1");
  EXPECT_EQ(h.call("ZRANGE d 0 -1 WITHSCORES"), "[\"y\", \"2\"]");
  EXPECT_EQ(h.call("ZDIFFSTORE d 2 a b"), ":1");
  EXPECT_EQ(h.call("ZRANGE d 0 -1 WITHSCORES"), "[\"x\", \"1\"]");
  EXPECT_EQ(h.call("EXPIRE d 100"), ":1");
  EXPECT_EQ(h.call("ZUNIONSTORE d 1 a"), ":2");
  EXPECT_EQ(h.call("TTL d"), ":-1");
  // Into one of its own inputs.
  EXPECT_EQ(h.call("ZINTERSTORE a 2 a b WEIGHTS 10 1"), ":1");
  EXPECT_EQ(h.call("ZRANGE a 0 -1 WITHSCORES"), "[\"y\", \"23\"]");
  // An empty result deletes the destination (and propagates only when it existed).
  EXPECT_EQ(h.call("ZINTERSTORE d 2 a nokey"), ":0");
  EXPECT_EQ(h.call("EXISTS d"), ":0");
  EXPECT_EQ(h.call("ZDIFFSTORE d 2 a a"), ":0");
  EXPECT_EQ(h.call("ZUNIONSTORE d 1 nokey"), ":0");
  EXPECT_EQ(
      h.take_propagated(),
      (Lines{"0:ZADD a 1 x 2 y", "0:ZADD b 3 y 4 z", "0:ZUNIONSTORE d 2 a b",
             "0:ZINTERSTORE d 2 a b AGGREGATE MIN", "0:ZDIFFSTORE d 2 a b",
             "0:PEXPIREAT d " + std::to_string(h.clock.wall_ms() + 100'000), "0:ZUNIONSTORE d 1 a",
             "0:ZINTERSTORE a 2 a b WEIGHTS 10 1", "0:ZINTERSTORE d 2 a nokey"}));
  uint64_t before = h.dirty();
  EXPECT_EQ(h.call("ZUNIONSTORE d 2 a b"), ":2");
  EXPECT_EQ(h.dirty() - before, 1u);
}

TEST_F(ZSetCommands, SetAlgebraErrors) {
  EXPECT_EQ(h.call("ZADD z 1 a"), ":1");
  EXPECT_EQ(h.call("ZUNION 0 z"), "-ERR at least 1 input key is needed for 'zunion' command");
  EXPECT_EQ(h.call("ZINTER -1 z"), "-ERR at least 1 input key is needed for 'zinter' command");
  EXPECT_EQ(h.call("ZDIFFSTORE d 0 z"),
            "-ERR at least 1 input key is needed for 'zdiffstore' command");
  EXPECT_EQ(h.call("ZINTERCARD 0 z"),
            "-ERR at least 1 input key is needed for 'zintercard' command");
  EXPECT_EQ(h.call("ZUNION x z"), kNotInteger);
  EXPECT_EQ(h.call("ZUNION 2 z"), kSyntax);
  EXPECT_EQ(h.call("ZUNIONSTORE d 2 z"), kSyntax);
  EXPECT_EQ(h.call("ZUNION 1 z WEIGHTS"), kSyntax);
  EXPECT_EQ(h.call("ZUNION 1 z WEIGHTS 1 2"), kSyntax);
  EXPECT_EQ(h.call("ZUNION 2 z z WEIGHTS 1"), kSyntax);
  EXPECT_EQ(h.call("ZUNION 1 z WEIGHTS x"), "-ERR weight value is not a float");
  EXPECT_EQ(h.call("ZUNION 1 z WEIGHTS nan"), "-ERR weight value is not a float");
  EXPECT_EQ(h.call("ZUNION 1 z AGGREGATE"), kSyntax);
  EXPECT_EQ(h.call("ZUNION 1 z AGGREGATE avg"), kSyntax);
  EXPECT_EQ(h.call("ZUNION 1 z foo"), kSyntax);
  EXPECT_EQ(h.call("ZUNIONSTORE d 1 z WITHSCORES"), kSyntax);
  EXPECT_EQ(h.call("ZDIFF 1 z WEIGHTS 1"), kSyntax);
  EXPECT_EQ(h.call("ZDIFF 1 z AGGREGATE SUM"), kSyntax);
  EXPECT_EQ(h.call("ZDIFF 1 z WITHSCORES"), "[\"a\", \"1\"]");
  EXPECT_EQ(h.call("ZINTERCARD 1 z WITHSCORES"), kSyntax);
  EXPECT_EQ(h.call("ZINTERCARD 1 z WEIGHTS 1"), kSyntax);
  EXPECT_EQ(h.call("ZINTERCARD 1 z LIMIT"), kSyntax);
  EXPECT_EQ(h.call("ZINTERCARD 1 z LIMIT -1"), "-ERR LIMIT can't be negative");
  EXPECT_EQ(h.call("ZINTERCARD 1 z LIMIT x"), "-ERR LIMIT can't be negative");
  EXPECT_EQ(h.call("ZUNION 1 z LIMIT 1"), kSyntax);
  // The inputs' types are checked before the options.
  EXPECT_EQ(h.call("SET s v"), "+OK");
  EXPECT_EQ(h.call("ZUNION 2 z s foo"), kWrongType);
  EXPECT_EQ(h.call("ZINTERSTORE d 2 s z WEIGHTS x y"), kWrongType);
  EXPECT_EQ(h.call("ZUNION 1"), "-ERR wrong number of arguments for 'zunion' command");
  EXPECT_EQ(h.call("ZUNIONSTORE d 1"), "-ERR wrong number of arguments for 'zunionstore' command");
}

// --- Blocking pops -------------------------------------------------------------------------

TEST_F(ZSetCommands, BzpopServesAtOnce) {
  EXPECT_EQ(h.call("ZADD z 1 a 2 b"), ":2");
  EXPECT_EQ(h.call("BZPOPMIN nokey z 0"), "[\"z\", \"a\", \"1\"]");
  EXPECT_EQ(h.call("BZPOPMAX z 1.5"), "[\"z\", \"b\", \"2\"]");
  EXPECT_EQ(h.call("EXISTS z"), ":0");
  EXPECT_EQ(h.call("ZADD z 1 a 2 b 3 c"), ":3");
  EXPECT_EQ(h.call("BZMPOP 0 2 nokey z MAX COUNT 2"), "[\"z\", [[\"c\", \"3\"], [\"b\", \"2\"]]]");
  EXPECT_EQ(h.call("BZMPOP 0 1 z MIN"), "[\"z\", [[\"a\", \"1\"]]]");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:ZADD z 1 a 2 b", "0:ZPOPMIN z", "0:ZPOPMAX z",
                                        "0:ZADD z 1 a 2 b 3 c", "0:ZPOPMAX z 2", "0:ZPOPMIN z 1"}));
  h.session.resp = 3;
  EXPECT_EQ(h.call("ZADD z 1 a"), ":1");
  EXPECT_EQ(h.call("BZPOPMIN z 0"), "[\"z\", \"a\", ,1]");
}

TEST_F(ZSetCommands, BlockingErrors) {
  EXPECT_EQ(h.call("BZPOPMIN z x"), "-ERR timeout is not a float or out of range");
  EXPECT_EQ(h.call("BZPOPMIN z -1"), "-ERR timeout is negative");
  EXPECT_EQ(h.call("BZPOPMIN z"), "-ERR wrong number of arguments for 'bzpopmin' command");
  // BZMPOP reads numkeys, MIN|MAX and COUNT before the timeout.
  EXPECT_EQ(h.call("BZMPOP x 0 z MIN"), "-ERR numkeys should be greater than 0");
  EXPECT_EQ(h.call("BZMPOP x 1 z MID"), kSyntax);
  EXPECT_EQ(h.call("BZMPOP x 1 z MIN COUNT 0"), "-ERR count should be greater than 0");
  EXPECT_EQ(h.call("BZMPOP x 1 z MIN"), "-ERR timeout is not a float or out of range");
  EXPECT_EQ(h.call("BZMPOP -1 1 z MIN"), "-ERR timeout is negative");
  EXPECT_EQ(h.call("BZMPOP 0 1 z"), "-ERR wrong number of arguments for 'bzmpop' command");
  EXPECT_EQ(h.call("SET s v"), "+OK");
  // The first key of another type fails even if a later one could serve.
  EXPECT_EQ(h.call("ZADD z 1 a"), ":1");
  EXPECT_EQ(h.call("BZPOPMIN s z 0"), kWrongType);
  EXPECT_EQ(h.call("BZPOPMIN z s 0"), "[\"z\", \"a\", \"1\"]");
}

TEST_F(ZSetCommands, BlockedClientsServedInArrivalOrder) {
  auto& c2 = h.new_client();
  auto& c3 = h.new_client();
  auto& c4 = h.new_client();
  EXPECT_EQ(h.call_as(c2, "BZPOPMIN z 0"), "(blocked)");
  EXPECT_EQ(h.call_as(c3, "BZPOPMAX other z 0"), "(blocked)");
  EXPECT_EQ(h.call_as(c4, "BZMPOP 0 1 z MIN COUNT 5"), "(blocked)");
  h.take_propagated();
  EXPECT_EQ(h.call("ZADD z 1 a 2 b 3 c 4 d"), ":4");
  EXPECT_EQ(h.replies_of(c2), "[\"z\", \"a\", \"1\"]");
  EXPECT_EQ(h.replies_of(c3), "[\"z\", \"d\", \"4\"]");
  EXPECT_EQ(h.replies_of(c4), "[\"z\", [[\"b\", \"2\"], [\"c\", \"3\"]]]");
  EXPECT_EQ(h.call("EXISTS z"), ":0");
  // Served commands propagate as Redis 7.0 rewrites them.
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:ZADD z 1 a 2 b 3 c 4 d", "0:ZPOPMIN z", "0:ZPOPMAX z", "0:ZPOPMIN z 2"}));
  // Once served, a client is no longer blocked.
  EXPECT_EQ(h.call("ZADD z 9 q"), ":1");
  EXPECT_EQ(h.replies_of(c2), "");
  EXPECT_EQ(h.call("ZCARD z"), ":1");
}

TEST_F(ZSetCommands, OneElementServesOneClient) {
  auto& c2 = h.new_client();
  auto& c3 = h.new_client();
  EXPECT_EQ(h.call_as(c2, "BZPOPMIN z 0"), "(blocked)");
  EXPECT_EQ(h.call_as(c3, "BZPOPMIN z 0"), "(blocked)");
  EXPECT_EQ(h.call("ZADD z 1 a"), ":1");
  EXPECT_EQ(h.replies_of(c2), "[\"z\", \"a\", \"1\"]");
  EXPECT_EQ(h.replies_of(c3), "");
  EXPECT_EQ(h.call("ZADD z 2 b"), ":1");
  EXPECT_EQ(h.replies_of(c3), "[\"z\", \"b\", \"2\"]");
}

TEST_F(ZSetCommands, WokenByStoreCommandsAndTransactions) {
  auto& c2 = h.new_client();
  auto& c3 = h.new_client();
  auto& c4 = h.new_client();
  EXPECT_EQ(h.call("ZADD src 1 a 2 b"), ":2");
  EXPECT_EQ(h.call_as(c2, "BZPOPMAX dst 0"), "(blocked)");
  EXPECT_EQ(h.call("ZUNIONSTORE dst 1 src"), ":2");
  EXPECT_EQ(h.replies_of(c2), "[\"dst\", \"b\", \"2\"]");
  EXPECT_EQ(h.call_as(c3, "BZMPOP 0 1 d2 MIN"), "(blocked)");
  EXPECT_EQ(h.call("ZRANGESTORE d2 src 1 1"), ":1");
  EXPECT_EQ(h.replies_of(c3), "[\"d2\", [[\"b\", \"2\"]]]");
  // A transaction wakes the waiter once, after EXEC, with what the key holds then.
  EXPECT_EQ(h.call_as(c4, "BZPOPMIN t 0"), "(blocked)");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("ZADD t 5 x"), "+QUEUED");
  EXPECT_EQ(h.call("ZADD t 3 y"), "+QUEUED");
  EXPECT_EQ(h.replies_of(c4), "");
  EXPECT_EQ(h.call("EXEC"), "[:1, :1]");
  EXPECT_EQ(h.replies_of(c4), "[\"t\", \"y\", \"3\"]");
  EXPECT_EQ(h.call("ZRANGE t 0 -1"), "[\"x\"]");
}

TEST_F(ZSetCommands, NotWokenByOtherTypesOrDeletion) {
  auto& c2 = h.new_client();
  EXPECT_EQ(h.call_as(c2, "BZPOPMIN k 0"), "(blocked)");
  EXPECT_EQ(h.call("SET k v"), "+OK");
  EXPECT_EQ(h.replies_of(c2), "");
  EXPECT_EQ(h.call("DEL k"), ":1");
  EXPECT_EQ(h.call("ZADD k 1 a"), ":1");
  EXPECT_EQ(h.replies_of(c2), "[\"k\", \"a\", \"1\"]");
}

TEST_F(ZSetCommands, BlockingTimeoutsAndMulti) {
  auto& c2 = h.new_client();
  auto& c3 = h.new_client();
  EXPECT_EQ(h.call_as(c2, "BZPOPMIN z 1.5"), "(blocked)");
  EXPECT_EQ(h.call_as(c3, "BZMPOP 0.5 1 z MAX"), "(blocked)");
  h.advance_ms(600);
  h.time_out_blocked();
  EXPECT_EQ(h.replies_of(c3), "(nil)");
  EXPECT_EQ(h.replies_of(c2), "");
  h.advance_ms(1000);
  h.time_out_blocked();
  EXPECT_EQ(h.replies_of(c2), "(nil)");
  EXPECT_EQ(h.call("ZADD z 1 a"), ":1");
  EXPECT_EQ(h.replies_of(c2), "");
  EXPECT_EQ(h.call("ZCARD z"), ":1");
  // Inside MULTI a blocking pop answers at once, as on timeout.
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("BZPOPMIN nokey 0"), "+QUEUED");
  EXPECT_EQ(h.call("BZMPOP 0 1 nokey MIN"), "+QUEUED");
  EXPECT_EQ(h.call("BZPOPMAX z 0"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC"), "[(nil), (nil), [\"z\", \"a\", \"1\"]]");
  // RESP3 timeout reply: a null.
  c2.session.resp = 3;
  EXPECT_EQ(h.call_as(c2, "BZPOPMIN z 0.1"), "(blocked)");
  h.advance_ms(200);
  h.time_out_blocked();
  EXPECT_EQ(c2.pending, "_\r\n");
}

TEST_F(ZSetCommands, BlockedOnSeveralKeys) {
  auto& c2 = h.new_client();
  EXPECT_EQ(h.call_as(c2, "BZMPOP 0 3 a b c MIN COUNT 2"), "(blocked)");
  EXPECT_EQ(h.call("ZADD b 1 x 2 y 3 z"), ":3");
  EXPECT_EQ(h.replies_of(c2), "[\"b\", [[\"x\", \"1\"], [\"y\", \"2\"]]]");
  EXPECT_EQ(h.call_as(c2, "BZPOPMAX a c 0"), "(blocked)");
  EXPECT_EQ(h.call("ZADD c 7 q"), ":1");
  EXPECT_EQ(h.replies_of(c2), "[\"c\", \"q\", \"7\"]");
  EXPECT_EQ(h.call("EXISTS c"), ":0");
}

// --- Copies, renames, expiry ---------------------------------------------------------------

TEST_F(ZSetCommands, CopyRenameExpire) {
  EXPECT_EQ(fill("z", 200), ":200");
  EXPECT_EQ(h.call("COPY z z2"), ":1");
  EXPECT_EQ(h.call("ZADD z 1000 m0"), ":0");
  EXPECT_EQ(h.call("ZSCORE z2 m0"), "\"0\"");
  EXPECT_EQ(h.encoding("z2"), "\"skiplist\"");
  EXPECT_EQ(h.call("ZRANK z2 m150"), ":150");
  EXPECT_EQ(h.call("ZADD small 1 a"), ":1");
  EXPECT_EQ(h.call("RENAME small s2"), "+OK");
  EXPECT_EQ(h.call("ZRANGE s2 0 -1"), "[\"a\"]");
  EXPECT_EQ(h.call("PEXPIRE s2 100"), ":1");
  EXPECT_EQ(h.call("ZADD s2 2 b"), ":1");
  h.advance_ms(101);
  EXPECT_EQ(h.call("ZCARD s2"), ":0");
  EXPECT_EQ(h.call("ZADD s2 1 a"), ":1");
  EXPECT_EQ(h.call("TTL s2"), ":-1");
}

TEST_F(ZSetCommands, MemoryUsageGrowsWithTheSet) {
  Database& db = h.state.keyspace().db(0);
  EXPECT_EQ(h.call("ZADD z 1 a"), ":1");
  const size_t small = db.memory_usage(db.find_raw("z"));
  EXPECT_EQ(fill("z", 100), ":100");
  const size_t listpack = db.memory_usage(db.find_raw("z"));
  // The flat listpack spends about 6 bytes on a short member with a small integral score.
  EXPECT_GT(listpack, small + 100 * 5);
  EXPECT_LT(listpack, small + 100 * 16);
  EXPECT_EQ(fill("z", 1000), ":900");
  EXPECT_EQ(h.encoding("z"), "\"skiplist\"");
  const size_t skiplist = db.memory_usage(db.find_raw("z"));
  EXPECT_GT(skiplist, listpack * 10);
  EXPECT_LT(skiplist, 1000u * 200);
}

TEST(ZSetScan, CountCountsElementsAsRedisDoes) {
  // Redis 7.0.15 answers ZSCAN … COUNT 10 over a skiplist with at least 10 member/score pairs
  // (20 items), not 10 items.
  CommandHarness h;
  for (int i = 0; i < 1000; ++i) {
    h.call("ZADD z " + std::to_string(i) + " m" + std::to_string(i));
  }
  RespValue step = h.reply("ZSCAN z 0 COUNT 10");
  ASSERT_EQ(step.elements.size(), 2u);
  EXPECT_NE(step.elements[0].str, "0");
  EXPECT_GE(step.elements[1].elements.size(), 20u);
}

}  // namespace
}  // namespace keywarden::testing
