// Hash family through the dispatcher: replies in RESP2 and RESP3, error texts and their order
// as Redis 7.0 reports them, encodings and conversions, deletion of emptied hashes, WRONGTYPE
// both ways (hash commands on strings, string commands on hashes), dirty counts and what each
// write hands to the propagation path.
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "command_harness.h"

namespace keywarden::testing {
namespace {

using Lines = std::vector<std::string>;

class HashCommands : public ::testing::Test {
 protected:
  std::string fill(std::string_view key, int fields) {
    std::string line = "HSET " + std::string(key);
    for (int i = 0; i < fields; ++i) line += " f" + std::to_string(i) + " v" + std::to_string(i);
    return h.call(line);
  }

  CommandHarness h;
};

TEST_F(HashCommands, SetGetAndFriends) {
  EXPECT_EQ(h.call("HSET h a 1 b 2"), ":2");
  EXPECT_EQ(h.call("HSET h a 10 c 3"), ":1");
  EXPECT_EQ(h.call("HGET h a"), "\"10\"");
  EXPECT_EQ(h.call("HGET h zz"), "(nil)");
  EXPECT_EQ(h.call("HGET nokey a"), "(nil)");
  EXPECT_EQ(h.call("HMGET h a zz c"), "[\"10\", (nil), \"3\"]");
  EXPECT_EQ(h.call("HMGET nokey a b"), "[(nil), (nil)]");
  EXPECT_EQ(h.call("HLEN h"), ":3");
  EXPECT_EQ(h.call("HLEN nokey"), ":0");
  EXPECT_EQ(h.call("HSTRLEN h a"), ":2");
  EXPECT_EQ(h.call("HSTRLEN h zz"), ":0");
  EXPECT_EQ(h.call("HSTRLEN nokey a"), ":0");
  EXPECT_EQ(h.call("HEXISTS h b"), ":1");
  EXPECT_EQ(h.call("HEXISTS h zz"), ":0");
  EXPECT_EQ(h.call("HEXISTS nokey b"), ":0");
  EXPECT_EQ(h.call("HGETALL h"), "[\"a\", \"10\", \"b\", \"2\", \"c\", \"3\"]");
  EXPECT_EQ(h.call("HKEYS h"), "[\"a\", \"b\", \"c\"]");
  EXPECT_EQ(h.call("HVALS h"), "[\"10\", \"2\", \"3\"]");
  EXPECT_EQ(h.call("HGETALL nokey"), "[]");
  EXPECT_EQ(h.call("HKEYS nokey"), "[]");
  EXPECT_EQ(h.call("HVALS nokey"), "[]");
  EXPECT_EQ(h.call("TYPE h"), "+hash");
  EXPECT_EQ(h.call("HMSET h a 1 d 4"), "+OK");
  EXPECT_EQ(h.call("HGETALL h"),
            "[\"a\", \"1\", \"b\", \"2\", \"c\", \"3\", \"d\", \"4\"]");
  EXPECT_EQ(h.call("HSET h \"\" \"\""), ":1");
  EXPECT_EQ(h.call("HGET h \"\""), "\"\"");
  EXPECT_EQ(h.call("HSET bin \"a\\x00b\" \"x\\x00y\""), ":1");
  EXPECT_EQ(h.call("HGET bin \"a\\x00b\""), "\"x\\x00y\"");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:HSET h a 1 b 2", "0:HSET h a 10 c 3", "0:HMSET h a 1 d 4", "0:HSET h  ",
                   std::string("0:HSET bin a\0b x\0y", 18)}));
}

TEST_F(HashCommands, Resp3Shapes) {
  h.session.resp = 3;
  EXPECT_EQ(h.call("HSET h a 1 b 2"), ":2");
  EXPECT_EQ(h.call("HGETALL h"), "{\"a\": \"1\", \"b\": \"2\"}");
  EXPECT_EQ(h.last_raw, "%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n");
  EXPECT_EQ(h.call("HGETALL nokey"), "{}");
  EXPECT_EQ(h.call("HKEYS nokey"), "[]");
  EXPECT_EQ(h.call("HGET h zz"), "(nil)");
  EXPECT_EQ(h.last_raw, "_\r\n");
  EXPECT_EQ(h.call("HRANDFIELD h 5 WITHVALUES"), "[[\"a\", \"1\"], [\"b\", \"2\"]]");
  EXPECT_EQ(h.call("HRANDFIELD h -2 WITHVALUES").substr(0, 2), "[[");
  EXPECT_EQ(h.call("HSCAN h 0"), "[\"0\", [\"a\", \"1\", \"b\", \"2\"]]");
  EXPECT_EQ(h.call("HRANDFIELD nokey"), "(nil)");
}

TEST_F(HashCommands, Arity) {
  EXPECT_EQ(h.call("HSET h a"), "-ERR wrong number of arguments for 'hset' command");
  EXPECT_EQ(h.call("HSET h a 1 b"), "-ERR wrong number of arguments for 'hset' command");
  EXPECT_EQ(h.call("HMSET h a 1 b"), "-ERR wrong number of arguments for 'hmset' command");
  EXPECT_EQ(h.call("HSETNX h a"), "-ERR wrong number of arguments for 'hsetnx' command");
  EXPECT_EQ(h.call("HGET h"), "-ERR wrong number of arguments for 'hget' command");
  EXPECT_EQ(h.call("HMGET h"), "-ERR wrong number of arguments for 'hmget' command");
  EXPECT_EQ(h.call("HDEL h"), "-ERR wrong number of arguments for 'hdel' command");
  EXPECT_EQ(h.call("HLEN"), "-ERR wrong number of arguments for 'hlen' command");
  EXPECT_EQ(h.call("HGETALL h x"), "-ERR wrong number of arguments for 'hgetall' command");
  EXPECT_EQ(h.call("HINCRBY h f"), "-ERR wrong number of arguments for 'hincrby' command");
  EXPECT_EQ(h.call("HRANDFIELD"), "-ERR wrong number of arguments for 'hrandfield' command");
  EXPECT_EQ(h.call("HSCAN h"), "-ERR wrong number of arguments for 'hscan' command");
  EXPECT_EQ(h.call("EXISTS h"), ":0");
  EXPECT_TRUE(h.take_propagated().empty());
}

TEST_F(HashCommands, WrongTypeBothWays) {
  EXPECT_EQ(h.call("SET s v"), "+OK");
  for (const char* line :
       {"HSET s a 1", "HMSET s a 1", "HSETNX s a 1", "HGET s a", "HMGET s a", "HGETALL s",
        "HKEYS s", "HVALS s", "HDEL s a", "HLEN s", "HSTRLEN s a", "HEXISTS s a",
        "HINCRBY s a 1", "HINCRBYFLOAT s a 1", "HRANDFIELD s", "HRANDFIELD s 1",
        "HSCAN s 0", "HSCAN s 0 COUNT 0", "HSCAN s 0 foo"}) {
    EXPECT_EQ(h.call(line), kWrongType) << line;
  }
  EXPECT_EQ(h.call("HSET h a 1"), ":1");
  for (const char* line :
       {"GET h", "SET h x GET", "GETSET h x", "GETDEL h", "GETEX h", "APPEND h x", "STRLEN h",
        "INCR h", "DECR h", "INCRBY h 1", "DECRBY h 1", "INCRBYFLOAT h 1", "GETRANGE h 0 1",
        "SETRANGE h 0 x"}) {
    EXPECT_EQ(h.call(line), kWrongType) << line;
  }
  EXPECT_EQ(h.call("MGET h s"), "[(nil), \"v\"]");
  EXPECT_EQ(h.call("LCS h s"), "-ERR The specified keys must contain string values");
  EXPECT_EQ(h.call("HGET h a"), "\"1\"");
  EXPECT_EQ(h.call("SET h plain"), "+OK");  // SET replaces any type
  EXPECT_EQ(h.call("TYPE h"), "+string");
}

TEST_F(HashCommands, HsetnxOnlyAddsNewFields) {
  EXPECT_EQ(h.call("HSETNX h a 1"), ":1");
  EXPECT_EQ(h.call("HSETNX h a 2"), ":0");
  EXPECT_EQ(h.call("HGET h a"), "\"1\"");
  // A long value for an existing field changes nothing, not even the encoding (as Redis).
  EXPECT_EQ(h.call("HSETNX h a " + std::string(100, 'x')), ":0");
  EXPECT_EQ(h.encoding("h"), "\"listpack\"");
  EXPECT_EQ(h.call("HSETNX h b " + std::string(100, 'x')), ":1");
  EXPECT_EQ(h.encoding("h"), "\"hashtable\"");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:HSETNX h a 1", "0:HSETNX h b " + std::string(100, 'x')}));
}

TEST_F(HashCommands, HdelDeletesTheEmptiedKey) {
  EXPECT_EQ(h.call("HSET h a 1 b 2 c 3"), ":3");
  uint64_t before = h.dirty();
  EXPECT_EQ(h.call("HDEL h a zz a"), ":1");
  EXPECT_EQ(h.dirty() - before, 1u);
  EXPECT_EQ(h.call("HDEL h zz"), ":0");
  EXPECT_EQ(h.call("HDEL nokey a"), ":0");
  EXPECT_EQ(h.call("HDEL h b c d"), ":2");
  EXPECT_EQ(h.call("EXISTS h"), ":0");
  EXPECT_EQ(h.call("TYPE h"), "+none");
  EXPECT_EQ(h.call("DBSIZE"), ":0");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:HSET h a 1 b 2 c 3", "0:HDEL h a zz a", "0:HDEL h b c d"}));
  // The same on the hashtable encoding.
  EXPECT_EQ(h.call("HSET t a " + std::string(65, 'x')), ":1");
  EXPECT_EQ(h.call("HDEL t a"), ":1");
  EXPECT_EQ(h.call("EXISTS t"), ":0");
}

TEST_F(HashCommands, HashKeepsItsTtl) {
  EXPECT_EQ(h.call("HSET h a 1"), ":1");
  EXPECT_EQ(h.call("EXPIRE h 10"), ":1");
  EXPECT_EQ(h.call("HSET h b 2"), ":1");
  EXPECT_EQ(h.call("HINCRBY h n 1"), ":1");
  EXPECT_EQ(h.call("TTL h"), ":10");
  h.advance_ms(10'001);
  EXPECT_EQ(h.call("HLEN h"), ":0");
  EXPECT_EQ(h.call("HSET h a 1"), ":1");
  EXPECT_EQ(h.call("TTL h"), ":-1");
}

TEST_F(HashCommands, Hincrby) {
  EXPECT_EQ(h.call("HINCRBY h n 5"), ":5");
  EXPECT_EQ(h.call("HINCRBY h n -7"), ":-2");
  EXPECT_EQ(h.call("HGET h n"), "\"-2\"");
  EXPECT_EQ(h.call("HINCRBY h n x"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("HINCRBY h n 1.5"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("HINCRBY nokey n x"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("EXISTS nokey"), ":0");
  EXPECT_EQ(h.call("HSET h s abc f 1.5 z 007 sp \" 1\""), ":4");
  for (const char* field : {"s", "f", "z", "sp"}) {
    EXPECT_EQ(h.call(std::string("HINCRBY h ") + field + " 1"), "-ERR hash value is not an integer");
  }
  EXPECT_EQ(h.call("HSET h big 9223372036854775807 small -9223372036854775808"), ":2");
  EXPECT_EQ(h.call("HINCRBY h big 1"), "-ERR increment or decrement would overflow");
  EXPECT_EQ(h.call("HINCRBY h small -1"), "-ERR increment or decrement would overflow");
  EXPECT_EQ(h.call("HINCRBY h big -9223372036854775808"), ":-1");
  EXPECT_EQ(h.call("HINCRBY h small 9223372036854775807"), ":-1");
  EXPECT_EQ(h.call("HINCRBY h new2 9223372036854775807"), ":9223372036854775807");
  // A long field converts the hash, as the value of HSET would.
  EXPECT_EQ(h.call("HINCRBY h " + std::string(65, 'k') + " 1"), ":1");
  EXPECT_EQ(h.encoding("h"), "\"hashtable\"");
  Lines lines = h.take_propagated();
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0], "0:HINCRBY h n 5");
  EXPECT_EQ(lines[1], "0:HINCRBY h n -7");
}

TEST_F(HashCommands, Hincrbyfloat) {
  EXPECT_EQ(h.call("HINCRBYFLOAT h f 1.5"), "\"1.5\"");
  EXPECT_EQ(h.call("HINCRBYFLOAT h f 0.1"), "\"1.6\"");
  EXPECT_EQ(h.call("HINCRBYFLOAT h f -1.6"), "\"0\"");
  EXPECT_EQ(h.call("HINCRBYFLOAT h f 5e3"), "\"5000\"");
  EXPECT_EQ(h.call("HSET h i 10"), ":1");
  EXPECT_EQ(h.call("HINCRBYFLOAT h i 0.5"), "\"10.5\"");
  EXPECT_EQ(h.call("HINCRBYFLOAT h f abc"), "-ERR value is not a valid float");
  EXPECT_EQ(h.call("HINCRBYFLOAT h f nan"), "-ERR value is not a valid float");
  EXPECT_EQ(h.call("HINCRBYFLOAT h f inf"), "-ERR value is NaN or Infinity");
  EXPECT_EQ(h.call("HINCRBYFLOAT h f -inf"), "-ERR value is NaN or Infinity");
  EXPECT_EQ(h.call("HINCRBYFLOAT nokey f inf"), "-ERR value is NaN or Infinity");
  EXPECT_EQ(h.call("HSET h s abc big 1e308 inf inf"), ":3");
  EXPECT_EQ(h.call("HINCRBYFLOAT h s 1"), "-ERR hash value is not a float");
  EXPECT_EQ(h.call("HINCRBYFLOAT h inf 1"), "-ERR increment would produce NaN or Infinity");
  EXPECT_EQ(h.encoding("h"), "\"listpack\"");
  // 2e308 fits a long double; its 309 digits are too long for the listpack.
  EXPECT_EQ(h.call("HINCRBYFLOAT h big 1e308").substr(0, 3), "\"19");
  EXPECT_EQ(h.encoding("h"), "\"hashtable\"");
  Lines lines = h.take_propagated();
  ASSERT_GE(lines.size(), 5u);
  EXPECT_EQ(lines[0], "0:HSET h f 1.5");
  EXPECT_EQ(lines[1], "0:HSET h f 1.6");
  EXPECT_EQ(lines[2], "0:HSET h f 0");
  EXPECT_EQ(lines[3], "0:HSET h f 5000");
  EXPECT_EQ(lines[5], "0:HSET h i 10.5");
}

TEST_F(HashCommands, EncodingThresholds) {
  EXPECT_EQ(fill("h", 512), ":512");
  EXPECT_EQ(h.encoding("h"), "\"listpack\"");
  EXPECT_EQ(h.call("HSET h f0 again"), ":0");
  EXPECT_EQ(h.encoding("h"), "\"listpack\"");
  EXPECT_EQ(h.call("HSET h extra 1"), ":1");
  EXPECT_EQ(h.encoding("h"), "\"hashtable\"");
  EXPECT_EQ(h.call("HLEN h"), ":513");

  EXPECT_EQ(h.call("HSET v f " + std::string(64, 'x')), ":1");
  EXPECT_EQ(h.encoding("v"), "\"listpack\"");
  EXPECT_EQ(h.call("HSET v " + std::string(65, 'k') + " 1"), ":1");
  EXPECT_EQ(h.encoding("v"), "\"hashtable\"");

  // The limits follow the command settings (CONFIG SET in the server).
  h.state.settings().hash_limits = HashLimits{2, 3};
  EXPECT_EQ(h.call("HSET s a 1 b 2"), ":2");
  EXPECT_EQ(h.encoding("s"), "\"listpack\"");
  EXPECT_EQ(h.call("HSET s c 3"), ":1");
  EXPECT_EQ(h.encoding("s"), "\"hashtable\"");
  EXPECT_EQ(h.call("HSET t a 1234"), ":1");
  EXPECT_EQ(h.encoding("t"), "\"hashtable\"");
  EXPECT_EQ(h.call("HMSET u a 123"), "+OK");
  EXPECT_EQ(h.encoding("u"), "\"listpack\"");
}

TEST_F(HashCommands, CopyRenameMoveKeepTheHash) {
  EXPECT_EQ(h.call("HSET h a 1 b " + std::string(70, 'x')), ":2");
  EXPECT_EQ(h.call("COPY h h2"), ":1");
  EXPECT_EQ(h.call("HSET h a changed"), ":0");
  EXPECT_EQ(h.call("HGET h2 a"), "\"1\"");
  EXPECT_EQ(h.encoding("h2"), "\"hashtable\"");
  EXPECT_EQ(h.call("HSET small a 1"), ":1");
  EXPECT_EQ(h.call("COPY small small2 DB 3"), ":1");
  EXPECT_EQ(h.call("HSET small a 2"), ":0");
  EXPECT_EQ(h.call("RENAME small2 x"), "-ERR no such key");
  EXPECT_EQ(h.call("RENAME h2 h3"), "+OK");
  EXPECT_EQ(h.call("HLEN h3"), ":2");
  EXPECT_EQ(h.call("MOVE h3 1"), ":1");
  EXPECT_EQ(h.call("SELECT 3"), "+OK");
  EXPECT_EQ(h.call("HGET small2 a"), "\"1\"");
  EXPECT_EQ(h.encoding("small2"), "\"listpack\"");
  EXPECT_EQ(h.call("SELECT 1"), "+OK");
  EXPECT_EQ(h.call("TYPE h3"), "+hash");
  EXPECT_EQ(h.call("SCAN 0 TYPE hash"), "[\"0\", [\"h3\"]]");
  EXPECT_EQ(h.call("SCAN 0 TYPE string"), "[\"0\", []]");
}

TEST_F(HashCommands, Hrandfield) {
  EXPECT_EQ(h.call("HRANDFIELD nokey"), "(nil)");
  EXPECT_EQ(h.call("HRANDFIELD nokey 3"), "[]");
  EXPECT_EQ(h.call("HRANDFIELD nokey -3 WITHVALUES"), "[]");
  EXPECT_EQ(h.call("HSET h a 1 b 2 c 3"), ":3");
  std::set<std::string> fields;
  for (int i = 0; i < 200; ++i) fields.insert(h.call("HRANDFIELD h"));
  EXPECT_EQ(fields, (std::set<std::string>{"\"a\"", "\"b\"", "\"c\""}));
  EXPECT_EQ(h.call("HRANDFIELD h 0"), "[]");
  EXPECT_EQ(h.call("HRANDFIELD h 0 WITHVALUES"), "[]");
  EXPECT_EQ(h.call("HRANDFIELD h 3"), "[\"a\", \"b\", \"c\"]");
  EXPECT_EQ(h.call("HRANDFIELD h 10 withvalues"),
            "[\"a\", \"1\", \"b\", \"2\", \"c\", \"3\"]");
  RespValue two = h.reply("HRANDFIELD h 2");
  ASSERT_EQ(two.elements.size(), 2u);
  EXPECT_NE(two.elements[0].str, two.elements[1].str);
  RespValue many = h.reply("HRANDFIELD h -10");
  EXPECT_EQ(many.elements.size(), 10u);
  RespValue pairs = h.reply("HRANDFIELD h -4 WITHVALUES");
  ASSERT_EQ(pairs.elements.size(), 8u);
  for (size_t i = 0; i < 8; i += 2) {
    EXPECT_EQ(h.call("HGET h " + pairs.elements[i].str), "\"" + pairs.elements[i + 1].str + "\"");
  }
  // Distinct picks also from the table encoding, both selection strategies.
  EXPECT_EQ(fill("big", 600), ":600");
  for (const char* count : {"5", "300", "599"}) {
    RespValue picked = h.reply(std::string("HRANDFIELD big ") + count);
    std::set<std::string> distinct;
    for (const RespValue& field : picked.elements) distinct.insert(field.str);
    EXPECT_EQ(distinct.size(), std::stoul(count));
  }
  // Errors, in Redis's order: the count, then the options, then the key.
  EXPECT_EQ(h.call("HRANDFIELD h x"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("HRANDFIELD h -9223372036854775808"),
            "-ERR value is out of range, value must between -9223372036854775807 and "
            "9223372036854775807");
  EXPECT_EQ(h.call("HRANDFIELD h 1 WITHVALUE"), "-ERR syntax error");
  EXPECT_EQ(h.call("HRANDFIELD h 1 WITHVALUES x"), "-ERR syntax error");
  EXPECT_EQ(h.call("HRANDFIELD h 4611686018427387904 WITHVALUES"), "-ERR value is out of range");
  EXPECT_EQ(h.call("HRANDFIELD h -4611686018427387904 WITHVALUES"), "-ERR value is out of range");
  EXPECT_EQ(h.call("HRANDFIELD h 4611686018427387904"), "[\"a\", \"b\", \"c\"]");
  EXPECT_EQ(h.call("SET s v"), "+OK");
  EXPECT_EQ(h.call("HRANDFIELD s x"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("HRANDFIELD s 1 foo"), "-ERR syntax error");
}

TEST_F(HashCommands, HscanListpackAndErrors) {
  EXPECT_EQ(h.call("HSET h a 1 b 2 ab 3"), ":3");
  EXPECT_EQ(h.call("HSCAN h 0"), "[\"0\", [\"a\", \"1\", \"b\", \"2\", \"ab\", \"3\"]]");
  EXPECT_EQ(h.call("HSCAN h 0 COUNT 1"), "[\"0\", [\"a\", \"1\", \"b\", \"2\", \"ab\", \"3\"]]");
  EXPECT_EQ(h.call("HSCAN h 0 MATCH a*"), "[\"0\", [\"a\", \"1\", \"ab\", \"3\"]]");
  EXPECT_EQ(h.call("HSCAN h 0 match nothing count 5"), "[\"0\", []]");
  EXPECT_EQ(h.call("HSET h \"\" e"), ":1");
  EXPECT_EQ(h.call("HSCAN h 0 MATCH *"),
            "[\"0\", [\"a\", \"1\", \"b\", \"2\", \"ab\", \"3\", \"\", \"e\"]]");
  EXPECT_EQ(h.call("HSCAN h x"), "-ERR invalid cursor");
  EXPECT_EQ(h.call("HSCAN nokey x"), "-ERR invalid cursor");
  EXPECT_EQ(h.call("HSCAN h 0 COUNT 0"), "-ERR syntax error");
  EXPECT_EQ(h.call("HSCAN h 0 COUNT x"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("HSCAN h 0 COUNT"), "-ERR syntax error");
  EXPECT_EQ(h.call("HSCAN h 0 NOVALUES"), "-ERR syntax error");
  EXPECT_EQ(h.call("HSCAN h 0 TYPE hash"), "-ERR syntax error");
  // A missing key answers before the options are read.
  EXPECT_EQ(h.call("HSCAN nokey 0 COUNT 0"), "[\"0\", []]");
  EXPECT_EQ(h.call("HSCAN nokey 0 foo"), "[\"0\", []]");
}

TEST_F(HashCommands, HscanTableWalksEveryField) {
  EXPECT_EQ(fill("h", 1000), ":1000");
  EXPECT_EQ(h.encoding("h"), "\"hashtable\"");
  // Writes between calls must not make the scan lose a field present throughout.
  const std::vector<std::string> items = h.scan_all("HSCAN h", "COUNT 7", [&](int step) {
    if (step <= 50) h.call("HSET h extra" + std::to_string(step) + " x");
  });
  ASSERT_EQ(items.size() % 2, 0u);
  std::set<std::string> seen;
  for (size_t i = 0; i < items.size(); i += 2) {
    if (items[i][0] == 'f') {
      EXPECT_EQ("v" + items[i].substr(1), items[i + 1]);
    }
    seen.insert(items[i]);
  }
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.count("f" + std::to_string(i))) << i;
  RespValue matched = h.reply("HSCAN h 0 MATCH f99* COUNT 100000");
  EXPECT_EQ(matched.elements[0].str, "0");
  EXPECT_EQ(matched.elements[1].elements.size(), 22u);  // f99, f990..f999, each with its value
}

TEST_F(HashCommands, DirtyCounts) {
  uint64_t before = h.dirty();
  EXPECT_EQ(h.call("HSET h a 1 b 2"), ":2");
  EXPECT_EQ(h.dirty() - before, 2u);
  before = h.dirty();
  EXPECT_EQ(h.call("HSET h a 1"), ":0");  // Redis counts every pair written
  EXPECT_EQ(h.dirty() - before, 1u);
  before = h.dirty();
  EXPECT_EQ(h.call("HSETNX h a 1"), ":0");
  EXPECT_EQ(h.call("HGET h a"), "\"1\"");
  EXPECT_EQ(h.dirty() - before, 0u);
  EXPECT_EQ(h.call("HINCRBY h a 1"), ":2");
  EXPECT_EQ(h.call("HINCRBYFLOAT h a 1"), "\"3\"");
  EXPECT_EQ(h.dirty() - before, 2u);
}

// Every hash write that changes the key aborts an EXEC watching it; the no-op ones do not.
TEST_F(HashCommands, WritesTouchWatchedKeys) {
  EXPECT_EQ(h.call("HSET h a 1"), ":1");
  for (const char* write : {"HSET h a 2", "HMSET h b 2", "HSETNX h c 3", "HDEL h c",
                            "HINCRBY h n 1", "HINCRBYFLOAT h n 1.5", "HSET fresh a 1"}) {
    const std::string key = std::string(write).find("fresh") != std::string::npos ? "fresh" : "h";
    EXPECT_EQ(h.call("WATCH " + key), "+OK");
    EXPECT_EQ(h.call(write).substr(0, 1) == "-", false) << write;
    EXPECT_EQ(h.call("MULTI"), "+OK");
    EXPECT_EQ(h.call("PING"), "+QUEUED");
    EXPECT_EQ(h.call("EXEC"), "(nil)") << write;
  }
  for (const char* noop : {"HSETNX h a 9", "HDEL h zz", "HDEL nokey a", "HGET h a",
                           "HGETALL h", "HINCRBY h a x"}) {
    EXPECT_EQ(h.call("WATCH h nokey"), "+OK");
    h.call(noop);
    EXPECT_EQ(h.call("MULTI"), "+OK");
    EXPECT_EQ(h.call("PING"), "+QUEUED");
    EXPECT_EQ(h.call("EXEC"), "[+PONG]") << noop;
  }
  // Deleting the last field deletes (and so touches) the key.
  EXPECT_EQ(h.call("HSET one a 1"), ":1");
  EXPECT_EQ(h.call("WATCH one"), "+OK");
  EXPECT_EQ(h.call("HDEL one a"), ":1");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "(nil)");
}

TEST_F(HashCommands, CommandInfo) {
  EXPECT_EQ(h.call("COMMAND INFO hset").substr(0, 83),
            "[[\"hset\", :-4, [+write, +denyoom, +fast], :1, :1, :1, [+@write, +@hash, +@fast], []");
  // The tips are Redis 7.0's: HGETALL's order is the hash table's.
  EXPECT_EQ(h.call("COMMAND INFO hgetall").substr(0, 101),
            "[[\"hgetall\", :2, [+readonly], :1, :1, :1, [+@read, +@hash, +@slow], "
            "[\"nondeterministic_output_order\"]");
}

}  // namespace
}  // namespace keywarden::testing
