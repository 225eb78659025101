// String family through the dispatcher: replies and error texts as Redis 7.0 words them,
// encodings, TTL handling on every write path (with the manual clock), and what each write
// hands to the propagation path.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "command_harness.h"

namespace keywarden::testing {
namespace {

using namespace std::string_literals;

constexpr int64_t kStart = 1'700'000'000'000;  // ManualClock's default start

class StringCommands : public ::testing::Test {
 protected:
  Entry* find(std::string_view key, int db = 0) { return h.state.keyspace().db(db).find_raw(key); }
  std::string encoding(std::string_view key) {
    Entry* entry = find(key);
    return entry == nullptr ? "none" : std::string(encoding_name(entry->value.encoding()));
  }
  int64_t deadline(std::string_view key) {
    Entry* entry = find(key);
    return entry == nullptr ? -2 : h.state.keyspace().db(0).deadline_of(entry);
  }
  int64_t now() const { return h.clock.wall_ms(); }

  CommandHarness h;
};

using Lines = std::vector<std::string>;

// --- GET / SET -------------------------------------------------------------------------------

TEST_F(StringCommands, GetAndSet) {
  EXPECT_EQ(h.call("GET k"), "(nil)");
  EXPECT_EQ(h.call("SET k v"), "+OK");
  EXPECT_EQ(h.call("GET k"), "\"v\"");
  EXPECT_EQ(h.call("SET k \"\""), "+OK");
  EXPECT_EQ(h.call("GET k"), "\"\"");
  EXPECT_EQ(h.call("SET k \"a\\x00b\""), "+OK");
  EXPECT_EQ(h.call("GET k"), "\"a\\x00b\"");
  EXPECT_EQ(h.call("SET n 123"), "+OK");
  EXPECT_EQ(h.call("GET n"), "\"123\"");
  EXPECT_EQ(h.last_raw, "$3\r\n123\r\n");
  EXPECT_EQ(h.call("GET"), "-ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(h.call("GET a b"), "-ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(h.call("SET k"), "-ERR wrong number of arguments for 'set' command");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SET k v", "0:SET k ", "0:SET k a\0b"s, "0:SET n 123"}));
}

TEST_F(StringCommands, GetCountsHitsAndMisses) {
  h.call("SET k v");
  h.call("GET k");
  h.call("GET nokey");
  h.call("MGET k nokey k");
  EXPECT_EQ(h.state.stats().keyspace_hits, 3u);
  EXPECT_EQ(h.state.stats().keyspace_misses, 2u);
}

TEST_F(StringCommands, SetEncodings) {
  const std::pair<std::string, std::string> cases[] = {
      {"12345", "int"},
      {"-9223372036854775808", "int"},
      {"9223372036854775807", "int"},
      {"0", "int"},
      {"9223372036854775808", "embstr"},
      {"12345678901234567890", "embstr"},
      {"007", "embstr"},
      {"-0", "embstr"},
      {"\" 1\"", "embstr"},
      {"+5", "embstr"},
      {"1.0", "embstr"},
      {"\"\"", "embstr"},
      {std::string(44, 'x'), "embstr"},
      {std::string(45, 'x'), "raw"},
  };
  for (const auto& [value, expected] : cases) {
    EXPECT_EQ(h.call("SET k " + value), "+OK");
    EXPECT_EQ(encoding("k"), expected) << value;
  }
}

TEST_F(StringCommands, OverwritesReencode) {
  const std::string long_a(100, 'a'), long_b(90, 'b'), long_c(300, 'c');
  const std::pair<std::string, std::string> steps[] = {
      {long_a, "raw"}, {long_b, "raw"}, {"short", "embstr"}, {"42", "int"},
      {long_c, "raw"}, {long_a, "raw"}, {"-7", "int"},       {std::string(44, 'd'), "embstr"},
      {"", "embstr"},  {long_b, "raw"}, {"x", "embstr"},
  };
  for (const auto& [value, expected] : steps) {
    EXPECT_EQ(h.call_args({"SET", "k", value}), "+OK");
    EXPECT_EQ(encoding("k"), expected) << value;
    EXPECT_EQ(h.call("GET k"), "\"" + value + "\"");
    EXPECT_EQ(h.call_args({"MSET", "m", value}), "+OK");
    EXPECT_EQ(encoding("m"), expected) << value;
    EXPECT_EQ(h.call("GET m"), "\"" + value + "\"");
  }
}

TEST_F(StringCommands, SetNxXx) {
  EXPECT_EQ(h.call("SET k v XX"), "(nil)");
  EXPECT_EQ(find("k"), nullptr);
  EXPECT_EQ(h.call("SET k v NX"), "+OK");
  EXPECT_EQ(h.call("SET k v2 NX"), "(nil)");
  EXPECT_EQ(h.call("GET k"), "\"v\"");
  EXPECT_EQ(h.call("SET k v3 xx"), "+OK");
  EXPECT_EQ(h.call("GET k"), "\"v3\"");
  // Repeating an option is accepted.
  EXPECT_EQ(h.call("SET k v4 XX XX"), "+OK");
  EXPECT_EQ(h.call("SET k v5 nx NX"), "(nil)");
  EXPECT_EQ(h.call("SET k v NX XX"), "-ERR syntax error");
  EXPECT_EQ(h.call("SET k v XX NX"), "-ERR syntax error");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SET k v NX", "0:SET k v3 xx", "0:SET k v4 XX XX"}));
}

TEST_F(StringCommands, SetNullRepliesInResp3) {
  h.session.resp = 3;
  h.call("SET k v");
  EXPECT_EQ(h.call("SET k v NX"), "(nil)");
  EXPECT_EQ(h.last_raw, "_\r\n");
  EXPECT_EQ(h.call("SET other v XX GET"), "(nil)");
  EXPECT_EQ(h.last_raw, "_\r\n");
}

TEST_F(StringCommands, SetGet) {
  EXPECT_EQ(h.call("SET k v GET"), "(nil)");
  EXPECT_EQ(h.call("GET k"), "\"v\"");
  EXPECT_EQ(h.call("SET k v2 GET"), "\"v\"");
  EXPECT_EQ(h.call("SET k 10 GET"), "\"v2\"");
  EXPECT_EQ(h.call("SET k v3 get"), "\"10\"");
  // GET with NX: replies the old value and writes nothing.
  EXPECT_EQ(h.call("SET k v4 NX GET"), "\"v3\"");
  EXPECT_EQ(h.call("GET k"), "\"v3\"");
  EXPECT_EQ(h.call("SET nokey v XX GET"), "(nil)");
  EXPECT_EQ(find("nokey"), nullptr);
  EXPECT_EQ(h.call("SET nokey v NX GET"), "(nil)");
  EXPECT_EQ(h.call("GET nokey"), "\"v\"");
  // Repeated GET is fine, and every occurrence is left out of the propagated command.
  EXPECT_EQ(h.call("SET k v5 GET get KEEPTTL GET"), "\"v3\"");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SET k v", "0:SET k v2", "0:SET k 10", "0:SET k v3",
                                        "0:SET nokey v NX", "0:SET k v5 KEEPTTL"}));
}

TEST_F(StringCommands, SetSyntaxErrors) {
  const char* bad[] = {
      "SET k v EX 10 PX 10",
      "SET k v PX 10 EX 10",
      "SET k v EX 10 EXAT 10",
      "SET k v EXAT 10 PXAT 10",
      "SET k v PXAT 10 PX 10",
      "SET k v KEEPTTL EX 10",
      "SET k v EX 10 KEEPTTL",
      "SET k v PXAT 10 KEEPTTL",
      "SET k v EX",
      "SET k v PX",
      "SET k v FOO",
      "SET k v PERSIST",
      "SET k v NX EX",
      "SET k v GETT",
      "SET k v \"\"",
  };
  for (const char* command : bad) EXPECT_EQ(h.call(command), "-ERR syntax error") << command;
  EXPECT_EQ(find("k"), nullptr);
  EXPECT_EQ(h.state.stats().error_counts["ERR"], std::size(bad));
  EXPECT_TRUE(h.take_propagated().empty());
}

TEST_F(StringCommands, SetOptionKeywordsEndAtNul) {
  // Redis reads option words as C strings.
  EXPECT_EQ(h.call_args({"SET", "k", "v", std::string("nx\0junk", 7)}), "+OK");
  EXPECT_EQ(h.call_args({"SET", "k", "v2", std::string("NX\0", 3)}), "(nil)");
  EXPECT_EQ(h.call_args({"SET", "k", "v3", std::string("GET\0x", 5)}), "\"v\"");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SET k v nx\x00junk"s, "0:SET k v3"}));
}

TEST_F(StringCommands, SetExpiryOptions) {
  EXPECT_EQ(h.call("SET k v EX 100"), "+OK");
  EXPECT_EQ(deadline("k"), kStart + 100'000);
  EXPECT_EQ(h.call("SET k v px 1500"), "+OK");
  EXPECT_EQ(deadline("k"), kStart + 1500);
  EXPECT_EQ(h.call("SET k v EXAT 1700000100"), "+OK");
  EXPECT_EQ(deadline("k"), 1'700'000'100'000);
  EXPECT_EQ(h.call("SET k v PXAT 1700000100123"), "+OK");
  EXPECT_EQ(deadline("k"), 1'700'000'100'123);
  // The last of a repeated expiry wins.
  EXPECT_EQ(h.call("SET k v EX 10 EX 20"), "+OK");
  EXPECT_EQ(deadline("k"), kStart + 20'000);
  EXPECT_EQ(h.call("SET k v PXAT 9223372036854775807"), "+OK");
  EXPECT_EQ(deadline("k"), INT64_MAX);
  EXPECT_EQ(h.call("SET k v EXAT 9223372036854775"), "+OK");
  EXPECT_EQ(deadline("k"), 9'223'372'036'854'775'000);
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:SET k v PXAT 1700000100000", "0:SET k v PXAT 1700000001500",
                   "0:SET k v PXAT 1700000100000", "0:SET k v PXAT 1700000100123",
                   "0:SET k v PXAT 1700000020000", "0:SET k v PXAT 9223372036854775807",
                   "0:SET k v PXAT 9223372036854775000"}));
}

TEST_F(StringCommands, SetExpiryErrors) {
  const char* invalid[] = {
      "SET k v EX 0",
      "SET k v EX -5",
      "SET k v PX 0",
      "SET k v PX -1",
      "SET k v EXAT 0",
      "SET k v PXAT 0",
      "SET k v EXAT -1",
      "SET k v EX 9223372036854775807",    // seconds to ms overflows
      "SET k v EX 9223372036854776",       // just over LLONG_MAX / 1000
      "SET k v EX 9223372036854775",       // fits in ms, but not once now is added
      "SET k v PX 9223372036854775807",    // now + ms overflows
      "SET k v EXAT 9223372036854775807",  // seconds to ms overflows
      "SET k v EX -9223372036854775808",
  };
  for (const char* command : invalid) {
    EXPECT_EQ(h.call(command), "-ERR invalid expire time in 'set' command") << command;
  }
  const char* not_integer[] = {"SET k v EX abc",
                               "SET k v EX 1.5",
                               "SET k v PX \"\"",
                               "SET k v EXAT \" 1\"",
                               "SET k v PXAT 9223372036854775808",
                               "SET k v EX 0x10"};
  for (const char* command : not_integer) {
    EXPECT_EQ(h.call(command), "-ERR value is not an integer or out of range") << command;
  }
  EXPECT_EQ(find("k"), nullptr);
  // Options are checked before the expiry value, the expiry before the write.
  EXPECT_EQ(h.call("SET k v EX abc FOO"), "-ERR syntax error");
  h.call("SET k old");
  EXPECT_EQ(h.call("SET k v GET EX 0"), "-ERR invalid expire time in 'set' command");
  EXPECT_EQ(h.call("GET k"), "\"old\"");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SET k old"}));
}

TEST_F(StringCommands, SetDropsOrKeepsTtl) {
  h.call("SET k v EX 100");
  EXPECT_EQ(h.call("SET k v2 KEEPTTL"), "+OK");
  EXPECT_EQ(deadline("k"), kStart + 100'000);
  EXPECT_EQ(h.call("SET k v3 keepttl GET"), "\"v2\"");
  EXPECT_EQ(deadline("k"), kStart + 100'000);
  EXPECT_EQ(h.call("SET k v4 KEEPTTL KEEPTTL XX"), "+OK");
  EXPECT_EQ(deadline("k"), kStart + 100'000);
  EXPECT_EQ(h.call("SET k v5"), "+OK");
  EXPECT_EQ(deadline("k"), kNoExpiry);
  EXPECT_EQ(h.state.keyspace().db(0).volatile_count(), 0u);
  // KEEPTTL on a new key: no TTL.
  EXPECT_EQ(h.call("SET fresh v KEEPTTL"), "+OK");
  EXPECT_EQ(deadline("fresh"), kNoExpiry);
  // A new expiry replaces the old one.
  h.call("SET k v EX 100");
  h.call("SET k v PX 5");
  EXPECT_EQ(deadline("k"), kStart + 5);
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:SET k v PXAT 1700000100000", "0:SET k v2 KEEPTTL", "0:SET k v3 keepttl",
                   "0:SET k v4 KEEPTTL KEEPTTL XX", "0:SET k v5", "0:SET fresh v KEEPTTL",
                   "0:SET k v PXAT 1700000100000", "0:SET k v PXAT 1700000000005"}));
}

TEST_F(StringCommands, SetWithExpiryNotWrittenDoesNotPropagate) {
  h.call("SET k v");
  h.take_propagated();
  EXPECT_EQ(h.call("SET k v2 NX EX 100"), "(nil)");
  EXPECT_EQ(deadline("k"), kNoExpiry);
  EXPECT_EQ(h.call("SET other v XX PX 100"), "(nil)");
  EXPECT_TRUE(h.take_propagated().empty());
}

TEST_F(StringCommands, SetWithDeadlineInThePastExpiresOnNextAccess) {
  // Redis 7.0 stores it and lets lazy expiry delete it.
  EXPECT_EQ(h.call("SET k v PXAT 1000"), "+OK");
  EXPECT_EQ(h.call("SET k2 v EXAT 1 GET"), "(nil)");
  EXPECT_EQ(h.call("GET k"), "(nil)");
  EXPECT_EQ(h.call("STRLEN k2"), ":0");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:SET k v PXAT 1000", "0:SET k2 v PXAT 1000", "0:DEL k", "0:DEL k2"}));
}

TEST_F(StringCommands, LazyAndActiveExpiry) {
  h.call("SET k v PX 100");
  h.call("SET k2 v EX 1");
  h.advance_ms(100);
  // Alive while now == deadline.
  EXPECT_EQ(h.call("GET k"), "\"v\"");
  h.advance_ms(1);
  EXPECT_EQ(h.call("GET k"), "(nil)");
  EXPECT_EQ(find("k"), nullptr);
  h.advance_ms(1000);
  h.active_expire();
  EXPECT_EQ(find("k2"), nullptr);
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SET k v PXAT 1700000000100",
                                        "0:SET k2 v PXAT 1700000001000", "0:DEL k", "0:DEL k2"}));
}

TEST_F(StringCommands, WritesOnExpiredKeysStartFresh) {
  const char* setup[] = {"SET a 10 PX 10", "SET b abc PX 10", "SET c abc PX 10",
                         "SET d v PX 10",  "SET e 5 PX 10",   "SET f v PX 10"};
  for (const char* command : setup) h.call(command);
  h.advance_ms(11);
  h.take_propagated();
  EXPECT_EQ(h.call("INCR a"), ":1");
  EXPECT_EQ(h.call("APPEND b x"), ":1");
  EXPECT_EQ(h.call("SETRANGE c 1 x"), ":2");
  EXPECT_EQ(h.call("SET d v2 NX"), "+OK");
  EXPECT_EQ(h.call("INCRBYFLOAT e 1.5"), "\"1.5\"");
  EXPECT_EQ(h.call("GETEX f PERSIST"), "(nil)");
  for (const char* key : {"a", "b", "c", "d", "e"}) EXPECT_EQ(deadline(key), kNoExpiry) << key;
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:DEL a", "0:INCR a", "0:DEL b", "0:APPEND b x", "0:DEL c", "0:SETRANGE c 1 x",
                   "0:DEL d", "0:SET d v2 NX", "0:DEL e", "0:SET e 1.5 KEEPTTL", "0:DEL f"}));
}

TEST_F(StringCommands, ExpiredDeletionsPropagateUnlinkWithLazyExpire) {
  h.state.keyspace().lazy_free().settings().lazy_expire = true;
  h.call("SET k v PX 1");
  h.advance_ms(2);
  EXPECT_EQ(h.call("GET k"), "(nil)");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SET k v PXAT 1700000000001", "0:UNLINK k"}));
}

TEST_F(StringCommands, PropagationUsesTheSelectedDatabase) {
  h.call("SELECT 3");
  h.call("SET k v EX 1");
  EXPECT_NE(find("k", 3), nullptr);
  EXPECT_EQ(find("k", 0), nullptr);
  EXPECT_EQ(h.take_propagated(), (Lines{"3:SET k v PXAT 1700000001000"}));
}

TEST_F(StringCommands, Dirty) {
  uint64_t before = h.dirty();
  h.call("SET k v");
  EXPECT_EQ(h.dirty(), before + 1);
  h.call("SET k v NX");
  h.call("GET k");
  h.call("GETEX k");
  h.call("GETEX k PERSIST");  // no TTL to remove
  h.call("SETRANGE k 0 \"\"");
  h.call("GETDEL nokey");
  EXPECT_EQ(h.dirty(), before + 1);
  h.call("MSET a 1 b 2 c 3");
  EXPECT_EQ(h.dirty(), before + 4);
  h.call("MSETNX a 1 z 2");
  EXPECT_EQ(h.dirty(), before + 4);
  h.call("MSETNX y 1 z 2");
  EXPECT_EQ(h.dirty(), before + 6);
}

// --- SETNX / SETEX / PSETEX / GETSET ---------------------------------------------------------

TEST_F(StringCommands, Setnx) {
  EXPECT_EQ(h.call("SETNX k 5"), ":1");
  EXPECT_EQ(encoding("k"), "int");
  EXPECT_EQ(h.call("SETNX k x"), ":0");
  EXPECT_EQ(h.call("GET k"), "\"5\"");
  EXPECT_EQ(h.call("SETNX k"), "-ERR wrong number of arguments for 'setnx' command");
  EXPECT_EQ(h.call("SETNX k v NX"), "-ERR wrong number of arguments for 'setnx' command");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SETNX k 5"}));
}

TEST_F(StringCommands, SetexAndPsetex) {
  h.call("SET k old EX 5");
  EXPECT_EQ(h.call("SETEX k 100 12"), "+OK");
  EXPECT_EQ(deadline("k"), kStart + 100'000);
  EXPECT_EQ(encoding("k"), "int");
  EXPECT_EQ(h.call("GET k"), "\"12\"");
  EXPECT_EQ(h.call("PSETEX k 1500 v"), "+OK");
  EXPECT_EQ(deadline("k"), kStart + 1500);
  EXPECT_EQ(h.call("SETEX k 0 v"), "-ERR invalid expire time in 'setex' command");
  EXPECT_EQ(h.call("SETEX k -1 v"), "-ERR invalid expire time in 'setex' command");
  EXPECT_EQ(h.call("SETEX k 9223372036854775807 v"), "-ERR invalid expire time in 'setex' command");
  EXPECT_EQ(h.call("PSETEX k 0 v"), "-ERR invalid expire time in 'psetex' command");
  EXPECT_EQ(h.call("PSETEX k 9223372036854775807 v"),
            "-ERR invalid expire time in 'psetex' command");
  EXPECT_EQ(h.call("SETEX k abc v"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("PSETEX k 1.5 v"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("SETEX k 100"), "-ERR wrong number of arguments for 'setex' command");
  EXPECT_EQ(h.call("PSETEX k 100"), "-ERR wrong number of arguments for 'psetex' command");
  EXPECT_EQ(h.call("GET k"), "\"v\"");
  h.advance_ms(1501);
  EXPECT_EQ(h.call("GET k"), "(nil)");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:SET k old PXAT 1700000005000", "0:SET k 12 PXAT 1700000100000",
                   "0:SET k v PXAT 1700000001500", "0:DEL k"}));
}

TEST_F(StringCommands, Getset) {
  EXPECT_EQ(h.call("GETSET k v"), "(nil)");
  EXPECT_EQ(h.call("GET k"), "\"v\"");
  h.call("SET k v EX 100");
  EXPECT_EQ(h.call("GETSET k 42"), "\"v\"");
  EXPECT_EQ(deadline("k"), kNoExpiry);
  EXPECT_EQ(encoding("k"), "int");
  EXPECT_EQ(h.call("GETSET k abc"), "\"42\"");
  EXPECT_EQ(encoding("k"), "embstr");
  EXPECT_EQ(h.call("GETSET k"), "-ERR wrong number of arguments for 'getset' command");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:SET k v", "0:SET k v PXAT 1700000100000", "0:SET k 42", "0:SET k abc"}));
}

// --- GETEX / GETDEL ----------------------------------------------------------------------------

TEST_F(StringCommands, GetexWithoutOptionsChangesNothing) {
  h.call("SET k v EX 100");
  h.take_propagated();
  EXPECT_EQ(h.call("GETEX k"), "\"v\"");
  EXPECT_EQ(deadline("k"), kStart + 100'000);
  EXPECT_EQ(h.call("GETEX nokey"), "(nil)");
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(h.call("GETEX"), "-ERR wrong number of arguments for 'getex' command");
}

TEST_F(StringCommands, GetexSetsExpiry) {
  h.call("SET k 7");
  h.take_propagated();
  EXPECT_EQ(h.call("GETEX k EX 100"), "\"7\"");
  EXPECT_EQ(deadline("k"), kStart + 100'000);
  EXPECT_EQ(h.call("GETEX k px 2000"), "\"7\"");
  EXPECT_EQ(deadline("k"), kStart + 2000);
  EXPECT_EQ(h.call("GETEX k EXAT 1700000300"), "\"7\"");
  EXPECT_EQ(deadline("k"), 1'700'000'300'000);
  EXPECT_EQ(h.call("GETEX k PXAT 1700000400123"), "\"7\"");
  EXPECT_EQ(deadline("k"), 1'700'000'400'123);
  EXPECT_EQ(h.call("GETEX k EX 10 EX 20"), "\"7\"");
  EXPECT_EQ(deadline("k"), kStart + 20'000);
  EXPECT_EQ(h.call("GETEX k PERSIST"), "\"7\"");
  EXPECT_EQ(deadline("k"), kNoExpiry);
  EXPECT_EQ(h.call("GETEX k PERSIST PERSIST"), "\"7\"");
  EXPECT_EQ(encoding("k"), "int");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:PEXPIREAT k 1700000100000", "0:PEXPIREAT k 1700000002000",
                   "0:PEXPIREAT k 1700000300000", "0:PEXPIREAT k 1700000400123",
                   "0:PEXPIREAT k 1700000020000", "0:PERSIST k"}));
}

TEST_F(StringCommands, GetexDeadlineReachedDeletes) {
  h.call("SET k v");
  h.call("SET k2 v");
  h.call("SET k3 v");
  h.take_propagated();
  EXPECT_EQ(h.call("GETEX k EXAT 1"), "\"v\"");
  EXPECT_EQ(find("k"), nullptr);
  // A deadline equal to now already counts as reached.
  EXPECT_EQ(h.call("GETEX k2 PXAT 1700000000000"), "\"v\"");
  EXPECT_EQ(find("k2"), nullptr);
  h.state.keyspace().lazy_free().settings().lazy_expire = true;
  EXPECT_EQ(h.call("GETEX k3 PXAT 5"), "\"v\"");
  EXPECT_EQ(find("k3"), nullptr);
  EXPECT_EQ(h.take_propagated(), (Lines{"0:DEL k", "0:DEL k2", "0:UNLINK k3"}));
}

TEST_F(StringCommands, GetexErrors) {
  h.call("SET k v");
  const char* syntax[] = {"GETEX k EX 10 PX 10",
                          "GETEX k EX 10 PERSIST",
                          "GETEX k PERSIST EX 10",
                          "GETEX k FOO",
                          "GETEX k EX",
                          "GETEX k KEEPTTL",
                          "GETEX k NX",
                          "GETEX k GET",
                          "GETEX k PXAT 1 EXAT 1"};
  for (const char* command : syntax) EXPECT_EQ(h.call(command), "-ERR syntax error") << command;
  const char* invalid[] = {"GETEX k EX 0",
                           "GETEX k EX -1",
                           "GETEX k PX 0",
                           "GETEX k EXAT 0",
                           "GETEX k EX 9223372036854775807",
                           "GETEX k PX 9223372036854775807"};
  for (const char* command : invalid) {
    EXPECT_EQ(h.call(command), "-ERR invalid expire time in 'getex' command") << command;
  }
  EXPECT_EQ(h.call("GETEX k EX abc"), "-ERR value is not an integer or out of range");
  // The key is looked up before the expiry is validated: a missing key answers nil.
  EXPECT_EQ(h.call("GETEX nokey EX 0"), "(nil)");
  EXPECT_EQ(h.call("GETEX nokey EX abc"), "(nil)");
  EXPECT_EQ(h.call("GETEX nokey FOO"), "-ERR syntax error");
  EXPECT_EQ(deadline("k"), kNoExpiry);
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SET k v"}));
}

TEST_F(StringCommands, Getdel) {
  h.call("SET k 5 EX 100");
  h.take_propagated();
  EXPECT_EQ(h.call("GETDEL k"), "\"5\"");
  EXPECT_EQ(find("k"), nullptr);
  EXPECT_EQ(h.state.keyspace().db(0).volatile_count(), 0u);
  EXPECT_EQ(h.call("GETDEL k"), "(nil)");
  h.state.settings().lazyfree_lazy_user_del = true;
  h.call("SET k v");
  EXPECT_EQ(h.call("GETDEL k"), "\"v\"");
  EXPECT_EQ(h.call("GETDEL"), "-ERR wrong number of arguments for 'getdel' command");
  EXPECT_EQ(h.call("GETDEL a b"), "-ERR wrong number of arguments for 'getdel' command");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:DEL k", "0:SET k v", "0:UNLINK k"}));
}

// --- MGET / MSET / MSETNX --------------------------------------------------------------------

TEST_F(StringCommands, MgetAndMset) {
  EXPECT_EQ(h.call("MSET a 1 b hello c \"\""), "+OK");
  EXPECT_EQ(encoding("a"), "int");
  EXPECT_EQ(encoding("b"), "embstr");
  EXPECT_EQ(h.call("MGET a b c nokey a"), "[\"1\", \"hello\", \"\", (nil), \"1\"]");
  EXPECT_EQ(h.call("MSET a x a y"), "+OK");
  EXPECT_EQ(h.call("GET a"), "\"y\"");
  EXPECT_EQ(h.call("MSET a 1 b"), "-ERR wrong number of arguments for 'mset' command");
  EXPECT_EQ(h.call("MSET a"), "-ERR wrong number of arguments for 'mset' command");
  EXPECT_EQ(h.call("MGET"), "-ERR wrong number of arguments for 'mget' command");
  h.call("SET t v EX 100");
  EXPECT_EQ(h.call("MSET t w"), "+OK");
  EXPECT_EQ(deadline("t"), kNoExpiry);
  EXPECT_EQ(h.take_propagated(), (Lines{"0:MSET a 1 b hello c ", "0:MSET a x a y",
                                        "0:SET t v PXAT 1700000100000", "0:MSET t w"}));
}

TEST_F(StringCommands, Msetnx) {
  h.call("SET a 1");
  h.take_propagated();
  EXPECT_EQ(h.call("MSETNX a 2 z 3"), ":0");
  EXPECT_EQ(find("z"), nullptr);
  EXPECT_EQ(h.call("MSETNX y 1 z 2"), ":1");
  EXPECT_EQ(h.call("MGET y z"), "[\"1\", \"2\"]");
  // Duplicate new keys: the last value wins.
  EXPECT_EQ(h.call("MSETNX q 1 q 2"), ":1");
  EXPECT_EQ(h.call("GET q"), "\"2\"");
  EXPECT_EQ(h.call("MSETNX q"), "-ERR wrong number of arguments for 'msetnx' command");
  EXPECT_EQ(h.call("MSETNX q 1 r"), "-ERR wrong number of arguments for 'msetnx' command");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:MSETNX y 1 z 2", "0:MSETNX q 1 q 2"}));
}

// --- APPEND / STRLEN -------------------------------------------------------------------------

TEST_F(StringCommands, Append) {
  EXPECT_EQ(h.call("APPEND k 123"), ":3");
  EXPECT_EQ(encoding("k"), "int");  // a new key is stored as SET would store it
  EXPECT_EQ(h.call("APPEND k 4"), ":4");
  EXPECT_EQ(encoding("k"), "raw");
  EXPECT_EQ(h.call("GET k"), "\"1234\"");
  EXPECT_EQ(h.call("APPEND e \"\""), ":0");
  EXPECT_EQ(encoding("e"), "embstr");  // created, even empty
  h.call("SET s hello EX 100");
  EXPECT_EQ(h.call("APPEND s \" world\""), ":11");
  EXPECT_EQ(deadline("s"), kStart + 100'000);
  EXPECT_EQ(h.call("GET s"), "\"hello world\"");
  // Appending nothing still turns the value raw.
  h.call("SET n 99");
  EXPECT_EQ(h.call("APPEND n \"\""), ":2");
  EXPECT_EQ(encoding("n"), "raw");
  EXPECT_EQ(h.call("APPEND k"), "-ERR wrong number of arguments for 'append' command");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:APPEND k 123", "0:APPEND k 4", "0:APPEND e ",
                                        "0:SET s hello PXAT 1700000100000", "0:APPEND s  world",
                                        "0:SET n 99", "0:APPEND n "}));
}

TEST_F(StringCommands, AppendRespectsProtoMaxBulkLen) {
  h.state.settings().proto_max_bulk_len = 10;
  h.call("SET k 12345");
  EXPECT_EQ(h.call("APPEND k 67890"), ":10");
  EXPECT_EQ(h.call("APPEND k x"), "-ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  EXPECT_EQ(h.call("STRLEN k"), ":10");
}

TEST_F(StringCommands, Strlen) {
  EXPECT_EQ(h.call("STRLEN nokey"), ":0");
  h.call("SET k hello");
  EXPECT_EQ(h.call("STRLEN k"), ":5");
  h.call("SET n -9223372036854775808");
  EXPECT_EQ(h.call("STRLEN n"), ":20");
  h.call("SET e \"\"");
  EXPECT_EQ(h.call("STRLEN e"), ":0");
  EXPECT_EQ(h.call("STRLEN"), "-ERR wrong number of arguments for 'strlen' command");
}

// --- Counters ----------------------------------------------------------------------------

TEST_F(StringCommands, IncrDecrFamily) {
  EXPECT_EQ(h.call("INCR n"), ":1");
  EXPECT_EQ(encoding("n"), "int");
  EXPECT_EQ(h.call("INCRBY n 10"), ":11");
  EXPECT_EQ(h.call("DECR n"), ":10");
  EXPECT_EQ(h.call("DECRBY n 20"), ":-10");
  EXPECT_EQ(h.call("INCRBY n -5"), ":-15");
  EXPECT_EQ(h.call("DECRBY n -15"), ":0");
  EXPECT_EQ(h.call("GET n"), "\"0\"");
  EXPECT_EQ(h.call("DECR fresh"), ":-1");
  // A raw or embstr value holding a canonical integer counts.
  h.call("SET s 1");
  h.call("APPEND s 0");
  EXPECT_EQ(encoding("s"), "raw");
  EXPECT_EQ(h.call("INCR s"), ":11");
  EXPECT_EQ(encoding("s"), "int");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:INCR n", "0:INCRBY n 10", "0:DECR n", "0:DECRBY n 20", "0:INCRBY n -5",
                   "0:DECRBY n -15", "0:DECR fresh", "0:SET s 1", "0:APPEND s 0", "0:INCR s"}));
}

TEST_F(StringCommands, IncrKeepsTtl) {
  h.call("SET n 5 EX 100");
  EXPECT_EQ(h.call("INCR n"), ":6");
  EXPECT_EQ(h.call("INCRBY n 4"), ":10");
  EXPECT_EQ(deadline("n"), kStart + 100'000);
  h.advance_ms(100'001);
  EXPECT_EQ(h.call("INCR n"), ":1");
  EXPECT_EQ(deadline("n"), kNoExpiry);
}

TEST_F(StringCommands, IncrRejectsNonIntegers) {
  const char* values[] = {"007",   "\" 1\"", "1.0",
                          "\"\"",  "abc",    "18446744073709551615",
                          "-0",    "+5",     "9223372036854775808",
                          "\"1 \""};
  for (const char* value : values) {
    h.call(std::string("SET s ") + value);
    EXPECT_EQ(h.call("INCR s"), "-ERR value is not an integer or out of range") << value;
    EXPECT_EQ(h.call("DECRBY s 1"), "-ERR value is not an integer or out of range") << value;
  }
  h.call("SET n 1");
  EXPECT_EQ(h.call("INCRBY n abc"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("INCRBY n 1.5"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("DECRBY n \"\""), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("INCRBY n 9223372036854775808"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("INCR n x"), "-ERR wrong number of arguments for 'incr' command");
  EXPECT_EQ(h.call("DECR"), "-ERR wrong number of arguments for 'decr' command");
  EXPECT_EQ(h.call("INCRBY n"), "-ERR wrong number of arguments for 'incrby' command");
  EXPECT_EQ(h.call("GET n"), "\"1\"");
}

TEST_F(StringCommands, IncrOverflow) {
  h.call("SET n 9223372036854775806");
  EXPECT_EQ(h.call("INCR n"), ":9223372036854775807");
  EXPECT_EQ(h.call("INCR n"), "-ERR increment or decrement would overflow");
  EXPECT_EQ(h.call("INCRBY n -1"), ":9223372036854775806");
  h.call("SET n -9223372036854775807");
  EXPECT_EQ(h.call("DECR n"), ":-9223372036854775808");
  EXPECT_EQ(h.call("DECR n"), "-ERR increment or decrement would overflow");
  EXPECT_EQ(h.call("DECRBY n 1"), "-ERR increment or decrement would overflow");
  EXPECT_EQ(h.call("INCRBY n 9223372036854775807"), ":-1");
  h.call("SET n 0");
  EXPECT_EQ(h.call("DECRBY n -9223372036854775808"), "-ERR decrement would overflow");
  EXPECT_EQ(h.call("INCRBY n -9223372036854775808"), ":-9223372036854775808");
  EXPECT_EQ(h.call("INCRBY n -1"), "-ERR increment or decrement would overflow");
  EXPECT_EQ(h.call("DECRBY n 9223372036854775807"), "-ERR increment or decrement would overflow");
}

TEST_F(StringCommands, IncrbyfloatFormatting) {
  EXPECT_EQ(h.call("INCRBYFLOAT f 0.1"), "\"0.1\"");
  EXPECT_EQ(h.call("INCRBYFLOAT f 0.2"), "\"0.3\"");
  EXPECT_EQ(h.call("INCRBYFLOAT f -0.3"), "\"0\"");
  EXPECT_EQ(h.call("INCRBYFLOAT f 3.0"), "\"3\"");
  EXPECT_EQ(h.call("INCRBYFLOAT f 1.5e2"), "\"153\"");
  EXPECT_EQ(h.call("INCRBYFLOAT f 5.0e3"), "\"5153\"");
  EXPECT_EQ(h.call("INCRBYFLOAT f -5153"), "\"0\"");
  EXPECT_EQ(h.call("INCRBYFLOAT f 1e-5"), "\"0.00001\"");
  h.call("SET g 10.5");
  EXPECT_EQ(h.call("INCRBYFLOAT g 0.1"), "\"10.6\"");
  h.call("SET g 10");
  EXPECT_EQ(h.call("INCRBYFLOAT g 0"), "\"10\"");
  EXPECT_EQ(encoding("g"), "embstr");  // never integer-encoded
  EXPECT_EQ(h.call("INCRBYFLOAT g -0.0"), "\"10\"");
  h.call("SET g 0");
  EXPECT_EQ(h.call("INCRBYFLOAT g -0.0"), "\"0\"");
  h.call("SET g 1e3");
  EXPECT_EQ(h.call("INCRBYFLOAT g 0x10"), "\"1016\"");
  // Long double range: past DBL_MAX is still finite.
  h.call("SET g 1e308");
  // Digits exactly as Redis prints them: %.17Lf of the long double sum.
  EXPECT_EQ(h.call("INCRBYFLOAT g 1e308"),
            "\"199999999999999999993371759311691291321120199694831134415594095989843469737676123"
            "744200253843777078640893494450108026446304269499187921167194841628860392837535918200"
            "039206381557326219209014213335878306791577877829121087126122536729803237260434173178"
            "506889763247582601711514636284849020905456510092687857156096\"");
  EXPECT_EQ(encoding("g"), "raw");
}

TEST_F(StringCommands, IncrbyfloatErrors) {
  h.call("SET g 1");
  EXPECT_EQ(h.call("INCRBYFLOAT g inf"), "-ERR increment would produce NaN or Infinity");
  EXPECT_EQ(h.call("INCRBYFLOAT g -inf"), "-ERR increment would produce NaN or Infinity");
  const char* bad[] = {"nan", "abc", "\"\"", "\" 1\"", "1.5.5", "1e5000", "0x"};
  for (const char* arg : bad) {
    EXPECT_EQ(h.call(std::string("INCRBYFLOAT g ") + arg), "-ERR value is not a valid float")
        << arg;
  }
  h.call("SET g abc");
  EXPECT_EQ(h.call("INCRBYFLOAT g 1"), "-ERR value is not a valid float");
  h.call("SET g 1.5abc");
  EXPECT_EQ(h.call("INCRBYFLOAT g 1"), "-ERR value is not a valid float");
  EXPECT_EQ(h.call("INCRBYFLOAT g"), "-ERR wrong number of arguments for 'incrbyfloat' command");
  EXPECT_EQ(h.call("INCRBYFLOAT g 0.1 0.2"),
            "-ERR wrong number of arguments for 'incrbyfloat' command");
  h.call("SET g 1e4932");
  EXPECT_EQ(h.call("INCRBYFLOAT g 1e4932"), "-ERR increment would produce NaN or Infinity");
}

TEST_F(StringCommands, IncrbyfloatKeepsTtlAndPropagatesSet) {
  h.call("SET f 3 EX 100");
  EXPECT_EQ(h.call("incrbyfloat f 0.5"), "\"3.5\"");
  EXPECT_EQ(deadline("f"), kStart + 100'000);
  EXPECT_EQ(h.call("INCRBYFLOAT new 2.5e1"), "\"25\"");
  EXPECT_EQ(h.call("INCRBYFLOAT new abc"), "-ERR value is not a valid float");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:SET f 3 PXAT 1700000100000", "0:SET f 3.5 KEEPTTL", "0:SET new 25 KEEPTTL"}));
}

// --- GETRANGE / SUBSTR / SETRANGE --------------------------------------------------------------

TEST_F(StringCommands, Getrange) {
  h.call("SET s \"Hello World\"");
  const std::pair<const char*, const char*> cases[] = {
      {"0 4", "\"Hello\""},
      {"-5 -1", "\"World\""},
      {"5 2", "\"\""},
      {"0 1000", "\"Hello World\""},
      {"-1000 3", "\"Hell\""},
      {"-1000 -900", "\"H\""},
      {"-1000 -2000", "\"\""},
      {"-1 -5", "\"\""},
      {"0 -2000", "\"H\""},
      {"11 11", "\"\""},
      {"10 10", "\"d\""},
      {"0 -1", "\"Hello World\""},
      {"9223372036854775807 9223372036854775807", "\"\""},
      {"-9223372036854775808 9223372036854775807", "\"Hello World\""},
  };
  for (const auto& [range, expected] : cases) {
    EXPECT_EQ(h.call(std::string("GETRANGE s ") + range), expected) << range;
  }
  EXPECT_EQ(h.call("GETRANGE nokey 0 -1"), "\"\"");
  EXPECT_EQ(h.last_raw, "$0\r\n\r\n");
  h.call("SET e \"\"");
  EXPECT_EQ(h.call("GETRANGE e 0 -1"), "\"\"");
  EXPECT_EQ(h.call("GETRANGE e 0 0"), "\"\"");
  h.call("SET n -12345");
  EXPECT_EQ(h.call("GETRANGE n 1 2"), "\"12\"");
  EXPECT_EQ(h.call("SUBSTR s 6 -1"), "\"World\"");
  EXPECT_EQ(h.call("SUBSTR s 0 0"), "\"H\"");
  EXPECT_EQ(h.call("GETRANGE s a 1"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("GETRANGE s 1 1.5"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("GETRANGE nokey x 1"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("GETRANGE s 0"), "-ERR wrong number of arguments for 'getrange' command");
  EXPECT_EQ(h.call("SUBSTR s"), "-ERR wrong number of arguments for 'substr' command");
}

TEST_F(StringCommands, Setrange) {
  h.call("SET s \"Hello World\" EX 100");
  h.take_propagated();
  EXPECT_EQ(h.call("SETRANGE s 6 Redis"), ":11");
  EXPECT_EQ(h.call("GET s"), "\"Hello Redis\"");
  EXPECT_EQ(encoding("s"), "raw");
  EXPECT_EQ(deadline("s"), kStart + 100'000);
  EXPECT_EQ(h.call("SETRANGE s 13 x"), ":14");
  EXPECT_EQ(h.call("GET s"), "\"Hello Redis\\x00\\x00x\"");
  // Writing nothing: the length, no change, no propagation.
  EXPECT_EQ(h.call("SETRANGE s 0 \"\""), ":14");
  EXPECT_EQ(h.call("SETRANGE s 536870912 \"\""), ":14");
  h.call("SET e hi");
  EXPECT_EQ(h.call("SETRANGE e 1 \"\""), ":2");
  EXPECT_EQ(encoding("e"), "embstr");
  EXPECT_EQ(h.call("SETRANGE nokey 0 \"\""), ":0");
  EXPECT_EQ(h.call("SETRANGE nokey 536870912 \"\""), ":0");
  EXPECT_EQ(find("nokey"), nullptr);
  // A new key is padded with zero bytes and raw.
  EXPECT_EQ(h.call("SETRANGE pad 3 abc"), ":6");
  EXPECT_EQ(h.call("GET pad"), "\"\\x00\\x00\\x00abc\"");
  EXPECT_EQ(encoding("pad"), "raw");
  EXPECT_EQ(h.call("SETRANGE new 0 1"), ":1");
  EXPECT_EQ(encoding("new"), "raw");
  h.call("SET n 12345");
  EXPECT_EQ(h.call("SETRANGE n 1 9"), ":5");
  EXPECT_EQ(h.call("GET n"), "\"19345\"");
  EXPECT_EQ(encoding("n"), "raw");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SETRANGE s 6 Redis", "0:SETRANGE s 13 x", "0:SET e hi",
                                        "0:SETRANGE pad 3 abc", "0:SETRANGE new 0 1",
                                        "0:SET n 12345", "0:SETRANGE n 1 9"}));
}

TEST_F(StringCommands, SetrangeErrors) {
  h.call("SET s abc");
  EXPECT_EQ(h.call("SETRANGE s -1 x"), "-ERR offset is out of range");
  EXPECT_EQ(h.call("SETRANGE nokey -1 \"\""), "-ERR offset is out of range");
  EXPECT_EQ(h.call("SETRANGE s abc x"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("SETRANGE s 536870912 x"),
            "-ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  EXPECT_EQ(h.call("SETRANGE s 536870911 xx"),
            "-ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  EXPECT_EQ(h.call("SETRANGE nokey 536870912 x"),
            "-ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  EXPECT_EQ(h.call("SETRANGE s 9223372036854775807 x"),
            "-ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  EXPECT_EQ(h.call("SETRANGE s 0"), "-ERR wrong number of arguments for 'setrange' command");
  EXPECT_EQ(find("nokey"), nullptr);
  EXPECT_EQ(h.call("GET s"), "\"abc\"");
  h.state.settings().proto_max_bulk_len = 5;
  EXPECT_EQ(h.call("SETRANGE s 4 x"), ":5");
  EXPECT_EQ(h.call("SETRANGE s 5 x"),
            "-ERR string exceeds maximum allowed size (proto-max-bulk-len)");
}

// --- LCS -------------------------------------------------------------------------------------

TEST_F(StringCommands, Lcs) {
  h.call("MSET a ohmytext b mynewtext");
  EXPECT_EQ(h.call("LCS a b"), "\"mytext\"");
  EXPECT_EQ(h.call("LCS a b LEN"), ":6");
  EXPECT_EQ(h.call("LCS a b IDX"),
            "[\"matches\", [[[:4, :7], [:5, :8]], [[:2, :3], [:0, :1]]], \"len\", :6]");
  EXPECT_EQ(h.call("LCS a b IDX MINMATCHLEN 4"),
            "[\"matches\", [[[:4, :7], [:5, :8]]], \"len\", :6]");
  EXPECT_EQ(h.call("LCS a b idx withmatchlen"),
            "[\"matches\", [[[:4, :7], [:5, :8], :4], [[:2, :3], [:0, :1], :2]], \"len\", :6]");
  EXPECT_EQ(h.call("LCS a b IDX MINMATCHLEN -5 WITHMATCHLEN"),
            "[\"matches\", [[[:4, :7], [:5, :8], :4], [[:2, :3], [:0, :1], :2]], \"len\", :6]");
  EXPECT_EQ(h.call("LCS a b IDX MINMATCHLEN 10"), "[\"matches\", [], \"len\", :6]");
  EXPECT_EQ(h.call("LCS a b WITHMATCHLEN"), "\"mytext\"");
  EXPECT_EQ(h.call("LCS a a"), "\"ohmytext\"");
  EXPECT_EQ(h.call("LCS a nokey"), "\"\"");
  EXPECT_EQ(h.call("LCS nokey nokey2 IDX"), "[\"matches\", [], \"len\", :0]");
  h.call("MSET x \"the quick brown fox\" y \"a quick brown dog\"");
  EXPECT_EQ(h.call("LCS x y"), "\" quick brown o\"");
  h.call("MSET n1 12345 n2 2345");
  EXPECT_EQ(h.call("LCS n1 n2 IDX"), "[\"matches\", [[[:1, :4], [:0, :3]]], \"len\", :4]");
  EXPECT_TRUE(h.take_propagated().size() == 3);
}

TEST_F(StringCommands, LcsResp3ReturnsAMap) {
  h.session.resp = 3;
  h.call("MSET a ohmytext b mynewtext");
  EXPECT_EQ(h.call("LCS a b IDX MINMATCHLEN 3 WITHMATCHLEN"),
            "{\"matches\": [[[:4, :7], [:5, :8], :4]], \"len\": :6}");
}

TEST_F(StringCommands, LcsErrors) {
  h.call("MSET a ohmytext b mynewtext");
  EXPECT_EQ(h.call("LCS a b LEN IDX"),
            "-ERR If you want both the length and indexes, please just use IDX.");
  EXPECT_EQ(h.call("LCS a b FOO"), "-ERR syntax error");
  EXPECT_EQ(h.call("LCS a b MINMATCHLEN"), "-ERR syntax error");
  EXPECT_EQ(h.call("LCS a b MINMATCHLEN abc"), "-ERR value is not an integer or out of range");
  // Options are read in order: the first bad one is reported.
  EXPECT_EQ(h.call("LCS a b MINMATCHLEN x IDX LEN"),
            "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("LCS a"), "-ERR wrong number of arguments for 'lcs' command");
  h.state.settings().proto_max_bulk_len = 1024;
  // (15 + 1) * (15 + 1) cells of 4 bytes fit in 1024 bytes; one more byte does not.
  h.call("SETRANGE big1 14 x");
  h.call("SETRANGE big2 14 y");
  EXPECT_EQ(h.call("LCS big1 big2 LEN"), ":14");
  h.call("SETRANGE big1 15 x");
  EXPECT_EQ(h.call("LCS big1 big2 LEN"),
            "-ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
}

}  // namespace
}  // namespace keywarden::testing
