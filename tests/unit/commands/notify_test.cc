// Keyspace notifications through the dispatcher: a recording subscriber listens on the hub with
// PSUBSCRIBE __key*__:* and each test checks the exact (channel, message) sequence a command
// publishes, as redis-server 7.0.15 publishes it (tests/e2e/test_notifications.py compares
// the two servers directly). Also: the setting's parsing and printing, class filtering, and
// the `expired` event firing once per key, lazily or from the active cycle.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "command_harness.h"
#include "commands/notifications.h"

namespace keywarden {
namespace {

using testing::CommandHarness;
using Events = std::vector<std::string>;

// A pattern subscriber that keeps what the hub wrote to it, as RESP2 pmessage frames.
class RecordingSubscriber final : public Subscriber {
 public:
  ReplyWriter* pubsub_writer() override { return &writer_; }

  // Every message since the last call, as "channel message".
  Events take() {
    Events events;
    ReplyParser parser;
    std::string_view rest = out_;
    while (!rest.empty() && parser.parse(rest) == ReplyParseStatus::kValue) {
      rest.remove_prefix(parser.consumed());
      RespValue frame = parser.take_value();
      EXPECT_EQ(frame.elements.size(), 4u);
      if (frame.elements.size() != 4) break;
      EXPECT_EQ(frame.elements[0].str, "pmessage");
      events.push_back(frame.elements[2].str + " " + frame.elements[3].str);
    }
    EXPECT_TRUE(rest.empty()) << "incomplete frame: " << rest;
    out_.clear();
    return events;
  }

 private:
  std::string out_;
  ReplyWriter writer_{&out_};
};

class NotifyTest : public ::testing::Test {
 protected:
  NotifyTest() { h.state.pubsub().psubscribe(&listener, "__key*__:*"); }
  ~NotifyTest() override { h.state.pubsub().punsubscribe(&listener, "__key*__:*"); }

  void flags(std::string_view text) {
    uint32_t parsed = 0;
    ASSERT_TRUE(parse_notify_flags(text, &parsed)) << text;
    h.state.settings().notify_keyspace_events = parsed;
  }
  // Runs `line` and returns what it published.
  Events run(std::string_view line) {
    listener.take();
    h.call(line);
    return listener.take();
  }
  // Runs `line` and returns its events as "event key", from __keyevent@<db>__ (flags with E only).
  Events events_of(std::string_view line) {
    Events raw = run(line);
    Events events;
    for (const std::string& message : raw) {
      const size_t prefix = message.find("__:");
      EXPECT_TRUE(message.starts_with("__keyevent@")) << message;
      events.push_back(message.substr(prefix + 3));
    }
    return events;
  }

  CommandHarness h;
  RecordingSubscriber listener;
};

// --- The setting ---------------------------------------------------------------------------

TEST(NotifyFlagsTest, ParsesAndPrintsAsRedis) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"KEA", "AKE"}, {"AKE", "AKE"}, {"Ex", "xE"}, {"gE", "gE"},
      {"$lshzxetdn", "$lshzxetdn"},   {"Em", "Em"}, {"Kn", "nK"},
      // As in 7.0, n is kept but not printed next to A.
      {"KEAmn", "AKEm"}, {"gg", "g"}, {"", ""}, {"K$", "$K"}, {"A", "A"},
      {"g$lshzxetd", "A"}, {"mE", "Em"}, {"e", "e"}, {"t", "t"}, {"d", "d"}};
  for (const auto& [text, shown] : cases) {
    uint32_t flags = 12345;
    ASSERT_TRUE(parse_notify_flags(text, &flags)) << text;
    EXPECT_EQ(format_notify_flags(flags), shown) << text;
  }
}

TEST(NotifyFlagsTest, ClassBits) {
  uint32_t flags = 0;
  ASSERT_TRUE(parse_notify_flags("A", &flags));
  EXPECT_EQ(flags, static_cast<uint32_t>(kNotifyAll));
  EXPECT_EQ(flags & (kNotifyKeyMiss | kNotifyNew | kNotifyKeyspace | kNotifyKeyevent), 0u);
  ASSERT_TRUE(parse_notify_flags("KEAmn", &flags));
  EXPECT_NE(flags & kNotifyNew, 0u);
  EXPECT_NE(flags & kNotifyKeyMiss, 0u);
}

TEST(NotifyFlagsTest, RefusesUnknownLetters) {
  for (std::string_view text : {"Q", "KEQ", "a", "k", "G", " ", "K E"}) {
    uint32_t flags = 77;
    EXPECT_FALSE(parse_notify_flags(text, &flags)) << text;
    EXPECT_EQ(flags, 77u) << "unchanged on error: " << text;
  }
  EXPECT_EQ(kNotifyFlagsError, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
}

// --- Channels and filtering ----------------------------------------------------------------

TEST_F(NotifyTest, OffByDefault) {
  EXPECT_EQ(h.state.settings().notify_keyspace_events, 0u);
  EXPECT_EQ(run("SET k v"), Events{});
  EXPECT_EQ(run("GET nosuch"), Events{});
  EXPECT_EQ(run("DEL k"), Events{});
}

TEST_F(NotifyTest, BothChannels) {
  flags("KEA");
  EXPECT_EQ(run("SET k v"), (Events{"__keyspace@0__:k set", "__keyevent@0__:set k"}));
  h.call("SELECT 5");
  EXPECT_EQ(run("LPUSH l a"), (Events{"__keyspace@5__:l lpush", "__keyevent@5__:lpush l"}));
}

TEST_F(NotifyTest, KeyspaceOrKeyeventOnly) {
  flags("K$");
  EXPECT_EQ(run("SET k v"), Events{"__keyspace@0__:k set"});
  flags("E$");
  EXPECT_EQ(run("SET k v"), Events{"__keyevent@0__:set k"});
}

TEST_F(NotifyTest, ClassesWithoutChannelPublishNothing) {
  flags("g$lshzxetdmn");
  EXPECT_EQ(run("SET k v"), Events{});
  EXPECT_EQ(run("DEL k"), Events{});
  EXPECT_EQ(run("GET k"), Events{});
}

TEST_F(NotifyTest, ClassFilter) {
  flags("Kl");
  EXPECT_EQ(run("SET s v"), Events{});
  EXPECT_EQ(run("LPUSH l a"), Events{"__keyspace@0__:l lpush"});
  EXPECT_EQ(run("EXPIRE l 100"), Events{});
  EXPECT_EQ(run("SADD st a"), Events{});
  flags("Kg");
  EXPECT_EQ(run("DEL s"), Events{"__keyspace@0__:s del"});
  EXPECT_EQ(run("RENAME l l2"), (Events{"__keyspace@0__:l rename_from",
                                       "__keyspace@0__:l2 rename_to"}));
}

TEST_F(NotifyTest, AllLeavesOutKeymissAndNew) {
  flags("AK");
  EXPECT_EQ(run("GET nosuch"), Events{});
  EXPECT_EQ(run("SET n v"), Events{"__keyspace@0__:n set"});
  flags("AKn");
  EXPECT_EQ(run("SET n2 v"), (Events{"__keyspace@0__:n2 new", "__keyspace@0__:n2 set"}));
  EXPECT_EQ(run("SET n2 w"), Events{"__keyspace@0__:n2 set"});
}

TEST_F(NotifyTest, NothingBuiltWithoutListeners) {
  h.state.pubsub().punsubscribe(&listener, "__key*__:*");
  flags("KEA");
  EXPECT_EQ(h.call("SET k v"), "+OK");
  EXPECT_EQ(listener.take(), Events{});
  h.state.pubsub().psubscribe(&listener, "__key*__:*");
}

// --- Strings -------------------------------------------------------------------------------

TEST_F(NotifyTest, StringEvents) {
  flags("E$g");
  EXPECT_EQ(events_of("SET s 1"), Events{"set s"});
  EXPECT_EQ(events_of("SET s 2 EX 100"), (Events{"set s", "expire s"}));
  EXPECT_EQ(events_of("SET s 3 KEEPTTL"), Events{"set s"});
  EXPECT_EQ(events_of("SET s 4 NX"), Events{});
  EXPECT_EQ(events_of("SET s2 v XX"), Events{});
  EXPECT_EQ(events_of("SET s5 v PX 100000 GET"), (Events{"set s5", "expire s5"}));
  EXPECT_EQ(events_of("SETNX s 1"), Events{});
  EXPECT_EQ(events_of("SETNX s6 1"), Events{"set s6"});
  EXPECT_EQ(events_of("SETEX s7 100 v"), (Events{"set s7", "expire s7"}));
  EXPECT_EQ(events_of("PSETEX s8 100000 v"), (Events{"set s8", "expire s8"}));
  EXPECT_EQ(events_of("GETSET s 9"), Events{"set s"});
  EXPECT_EQ(events_of("MSET m1 1 m2 2"), (Events{"set m1", "set m2"}));
  EXPECT_EQ(events_of("MSETNX m1 1 m3 3"), Events{});
  EXPECT_EQ(events_of("MSETNX m4 4 m5 5"), (Events{"set m4", "set m5"}));
  EXPECT_EQ(events_of("APPEND s x"), Events{"append s"});
  EXPECT_EQ(events_of("APPEND s ''"), Events{"append s"});
  EXPECT_EQ(events_of("SETRANGE s 1 zz"), Events{"setrange s"});
  EXPECT_EQ(events_of("SETRANGE s 1 ''"), Events{});
  EXPECT_EQ(events_of("SETRANGE sr2 2 ''"), Events{});
  EXPECT_EQ(events_of("INCR c"), Events{"incrby c"});
  EXPECT_EQ(events_of("DECRBY c 3"), Events{"incrby c"});
  EXPECT_EQ(events_of("INCRBYFLOAT c 1.5"), Events{"incrbyfloat c"});
  EXPECT_EQ(events_of("INCR s"), Events{});  // not an integer: an error, no event
  EXPECT_EQ(events_of("GETEX s EX 100"), Events{"expire s"});
  EXPECT_EQ(events_of("GETEX s PERSIST"), Events{"persist s"});
  EXPECT_EQ(events_of("GETEX s PERSIST"), Events{});
  EXPECT_EQ(events_of("GETEX s"), Events{});
  EXPECT_EQ(events_of("GETEX s PXAT 1"), Events{"del s"});
  EXPECT_EQ(events_of("GETDEL m1"), Events{"del m1"});
  EXPECT_EQ(events_of("GETDEL nosuch"), Events{});
  // A deadline in the past is set like any other; the key then expires.
  EXPECT_EQ(events_of("SET x 1 PXAT 1"), (Events{"set x", "expire x"}));
}

// --- Keys and expiry -----------------------------------------------------------------------

TEST_F(NotifyTest, GenericEvents) {
  flags("KEA");
  h.call("MSET a 1 b 2");
  EXPECT_EQ(run("DEL a nosuch b"),
            (Events{"__keyspace@0__:a del", "__keyevent@0__:del a", "__keyspace@0__:b del",
                    "__keyevent@0__:del b"}));
  flags("Eg");
  h.call("SET a 1");
  EXPECT_EQ(events_of("UNLINK a nosuch"), Events{"del a"});
  h.call("SET k v");
  EXPECT_EQ(events_of("EXPIRE k 100"), Events{"expire k"});
  EXPECT_EQ(events_of("PEXPIRE k 100000"), Events{"expire k"});
  EXPECT_EQ(events_of("EXPIREAT k 99999999999"), Events{"expire k"});
  EXPECT_EQ(events_of("PEXPIREAT k 99999999999000"), Events{"expire k"});
  EXPECT_EQ(events_of("EXPIRE k 100 NX"), Events{});
  EXPECT_EQ(events_of("EXPIRE k 50 GT"), Events{});
  EXPECT_EQ(events_of("EXPIRE nosuch 10"), Events{});
  EXPECT_EQ(events_of("PERSIST k"), Events{"persist k"});
  EXPECT_EQ(events_of("PERSIST k"), Events{});
  EXPECT_EQ(events_of("EXPIRE k -1"), Events{"del k"});
  h.call("SET k v");
  EXPECT_EQ(events_of("PEXPIRE k 0"), Events{"del k"});
  h.call("SET k v");
  EXPECT_EQ(events_of("EXPIREAT k 1"), Events{"del k"});
}

TEST_F(NotifyTest, RenameMoveCopy) {
  flags("KEg");
  h.call("SET k v");
  EXPECT_EQ(run("RENAME k k2"),
            (Events{"__keyspace@0__:k rename_from", "__keyevent@0__:rename_from k",
                    "__keyspace@0__:k2 rename_to", "__keyevent@0__:rename_to k2"}));
  flags("Eg");
  EXPECT_EQ(events_of("RENAME k2 k2"), Events{});
  EXPECT_EQ(events_of("RENAME nosuch x"), Events{});
  h.call("SET k3 v");
  EXPECT_EQ(events_of("RENAME k2 k3"), (Events{"rename_from k2", "rename_to k3"}));
  h.call("SET k5 v");
  EXPECT_EQ(events_of("RENAMENX k3 k5"), Events{});
  EXPECT_EQ(events_of("RENAMENX k3 k4"), (Events{"rename_from k3", "rename_to k4"}));

  flags("KEg");
  EXPECT_EQ(run("MOVE k4 1"),
            (Events{"__keyspace@0__:k4 move_from", "__keyevent@0__:move_from k4",
                    "__keyspace@1__:k4 move_to", "__keyevent@1__:move_to k4"}));
  h.call("SET k4 v");
  EXPECT_EQ(run("MOVE k4 1"), Events{});

  h.call("SET src v");
  EXPECT_EQ(run("COPY src dst"), (Events{"__keyspace@0__:dst copy_to",
                                         "__keyevent@0__:copy_to dst"}));
  EXPECT_EQ(run("COPY src dst"), Events{});
  EXPECT_EQ(run("COPY src dst REPLACE"), (Events{"__keyspace@0__:dst copy_to",
                                                 "__keyevent@0__:copy_to dst"}));
  EXPECT_EQ(run("COPY src dst DB 2"), (Events{"__keyspace@2__:dst copy_to",
                                              "__keyevent@2__:copy_to dst"}));
}

TEST_F(NotifyTest, NewFiresOnEveryCreation) {
  flags("En");
  const std::pair<std::string_view, std::string_view> creations[] = {
      {"SET a 1", "a"},          {"LPUSH l a", "l"},          {"HSET h a 1", "h"},
      {"SADD s a", "s"},         {"ZADD z 1 a", "z"},         {"INCR c", "c"},
      {"APPEND ap x", "ap"},     {"SETRANGE sr 1 x", "sr"},   {"RENAME a b", "b"},
      {"COPY b c2", "c2"},       {"LMOVE l l2 LEFT LEFT", "l2"}, {"SMOVE s s2 a", "s2"},
      {"SUNIONSTORE su s2", "su"}, {"ZUNIONSTORE zu 1 z", "zu"}, {"HINCRBY h2 a 1", "h2"},
      {"HINCRBYFLOAT h3 a 1", "h3"}, {"ZINCRBY z2 1 a", "z2"}, {"INCRBYFLOAT f 1", "f"},
      {"RPUSH n 3 1 2", "n"},    {"SORT n STORE so", "so"},   {"HSETNX h4 a 1", "h4"},
      {"SINTERSTORE si s2", "si"}, {"ZRANGESTORE zr z 0 -1", "zr"}, {"SETEX e 10 v", "e"},
  };
  for (const auto& [command, key] : creations) {
    EXPECT_EQ(events_of(command), Events{"new " + std::string(key)}) << command;
  }
  EXPECT_EQ(events_of("SET a 2"), Events{"new a"});
  EXPECT_EQ(events_of("SET a 3"), Events{});
  EXPECT_EQ(events_of("LPUSH l2 b"), Events{});
  EXPECT_EQ(events_of("MSET m1 1 a 2 m2 2"), (Events{"new m1", "new m2"}));
  h.call("SET k v");
  EXPECT_EQ(run("MOVE k 3"), Events{"__keyevent@3__:new k"});
}

// --- Lists ---------------------------------------------------------------------------------

TEST_F(NotifyTest, ListEvents) {
  flags("Elg");
  EXPECT_EQ(events_of("LPUSH l a b"), Events{"lpush l"});
  EXPECT_EQ(events_of("RPUSH l c"), Events{"rpush l"});
  EXPECT_EQ(events_of("LPUSHX l d"), Events{"lpush l"});
  EXPECT_EQ(events_of("RPUSHX l e"), Events{"rpush l"});
  EXPECT_EQ(events_of("LPUSHX nol a"), Events{});
  EXPECT_EQ(events_of("LINSERT l BEFORE a z"), Events{"linsert l"});
  EXPECT_EQ(events_of("LINSERT l BEFORE nosuch z"), Events{});
  EXPECT_EQ(events_of("LSET l 0 q"), Events{"lset l"});
  EXPECT_EQ(events_of("LREM l 0 nosuch"), Events{});
  EXPECT_EQ(events_of("LREM l 1 q"), Events{"lrem l"});
  // LTRIM announces itself even when nothing was trimmed.
  EXPECT_EQ(events_of("LTRIM l 0 100"), Events{"ltrim l"});
  EXPECT_EQ(events_of("LPOP l"), Events{"lpop l"});
  EXPECT_EQ(events_of("RPOP l"), Events{"rpop l"});
  EXPECT_EQ(events_of("RPOP l 0"), Events{});
  EXPECT_EQ(events_of("LPOP l 9"), (Events{"lpop l", "del l"}));
  EXPECT_EQ(events_of("LPOP l"), Events{});
  h.call("RPUSH t a b c");
  EXPECT_EQ(events_of("LTRIM t 5 6"), (Events{"ltrim t", "del t"}));
  h.call("RPUSH t a");
  EXPECT_EQ(events_of("LREM t 0 a"), (Events{"lrem t", "del t"}));
}

TEST_F(NotifyTest, ListMoves) {
  flags("Elg");
  h.call("RPUSH l a b c");
  EXPECT_EQ(events_of("LMOVE l l2 LEFT RIGHT"), (Events{"rpush l2", "lpop l"}));
  EXPECT_EQ(events_of("LMOVE l l2 RIGHT LEFT"), (Events{"lpush l2", "rpop l"}));
  EXPECT_EQ(events_of("RPOPLPUSH l l2"), (Events{"lpush l2", "rpop l", "del l"}));
  EXPECT_EQ(events_of("RPOPLPUSH l l2"), Events{});
  EXPECT_EQ(events_of("LMOVE l2 l2 LEFT RIGHT"), (Events{"rpush l2", "lpop l2"}));
  EXPECT_EQ(events_of("LMPOP 2 nosuch l2 LEFT COUNT 2"), Events{"lpop l2"});
  EXPECT_EQ(events_of("LMPOP 1 l2 RIGHT COUNT 9"), (Events{"rpop l2", "del l2"}));
  h.call("RPUSH l a b");
  EXPECT_EQ(events_of("BLPOP l 1"), Events{"lpop l"});
  EXPECT_EQ(events_of("BRPOP l 1"), (Events{"rpop l", "del l"}));
  h.call("RPUSH l a");
  EXPECT_EQ(events_of("BLMOVE l l3 LEFT LEFT 1"), (Events{"lpush l3", "lpop l", "del l"}));
  EXPECT_EQ(events_of("BRPOPLPUSH l3 l4 1"), (Events{"lpush l4", "rpop l3", "del l3"}));
  EXPECT_EQ(events_of("BLMPOP 1 1 l4 LEFT"), (Events{"lpop l4", "del l4"}));
}

TEST_F(NotifyTest, BlockedClientServedLater) {
  flags("Elg");
  auto& waiter = h.new_client();
  EXPECT_EQ(h.call_as(waiter, "BLPOP l 0"), "(blocked)");
  EXPECT_EQ(events_of("RPUSH l a"), (Events{"rpush l", "lpop l", "del l"}));
  EXPECT_EQ(h.replies_of(waiter), "[\"l\", \"a\"]");

  EXPECT_EQ(h.call_as(waiter, "BLMOVE src dst RIGHT LEFT 0"), "(blocked)");
  EXPECT_EQ(events_of("LPUSH src x y"), (Events{"lpush src", "lpush dst", "rpop src"}));
  EXPECT_EQ(h.replies_of(waiter), "\"x\"");
}

TEST_F(NotifyTest, BlockedZsetClientServedLater) {
  flags("Ezg");
  auto& waiter = h.new_client();
  EXPECT_EQ(h.call_as(waiter, "BZPOPMAX z 0"), "(blocked)");
  EXPECT_EQ(events_of("ZADD z 1 a 2 b"), (Events{"zadd z", "zpopmax z"}));
  EXPECT_EQ(h.call_as(waiter, "BZMPOP 0 1 y MIN COUNT 5"), "(blocked)");
  EXPECT_EQ(events_of("ZADD y 1 a"), (Events{"zadd y", "zpopmin y", "del y"}));
}

// --- Hashes --------------------------------------------------------------------------------

TEST_F(NotifyTest, HashEvents) {
  flags("Ehg");
  EXPECT_EQ(events_of("HSET h a 1 b 2"), Events{"hset h"});
  EXPECT_EQ(events_of("HSET h a 1"), Events{"hset h"});  // fired even when nothing changed
  EXPECT_EQ(events_of("HMSET h c 3"), Events{"hset h"});
  EXPECT_EQ(events_of("HSETNX h a 9"), Events{});
  EXPECT_EQ(events_of("HSETNX h d 4"), Events{"hset h"});
  EXPECT_EQ(events_of("HINCRBY h a 5"), Events{"hincrby h"});
  EXPECT_EQ(events_of("HINCRBYFLOAT h a 1.5"), Events{"hincrbyfloat h"});
  EXPECT_EQ(events_of("HINCRBY h a 1"), Events{});  // not an integer any more
  EXPECT_EQ(events_of("HDEL h nosuch"), Events{});
  EXPECT_EQ(events_of("HDEL h a nosuch"), Events{"hdel h"});
  EXPECT_EQ(events_of("HDEL h b c d"), (Events{"hdel h", "del h"}));
}

// --- Sets ----------------------------------------------------------------------------------

TEST_F(NotifyTest, SetEvents) {
  flags("Esg");
  EXPECT_EQ(events_of("SADD s a b"), Events{"sadd s"});
  EXPECT_EQ(events_of("SADD s a"), Events{});
  EXPECT_EQ(events_of("SREM s a nosuch"), Events{"srem s"});
  EXPECT_EQ(events_of("SREM s nosuch"), Events{});
  EXPECT_EQ(events_of("SREM s b"), (Events{"srem s", "del s"}));
  h.call("SADD s2 x");
  EXPECT_EQ(events_of("SPOP s2"), (Events{"spop s2", "del s2"}));
  EXPECT_EQ(events_of("SPOP nosuch"), Events{});
  h.call("SADD s3 a b c d");
  EXPECT_EQ(events_of("SPOP s3"), Events{"spop s3"});
  EXPECT_EQ(events_of("SPOP s3 2"), Events{"spop s3"});
  EXPECT_EQ(events_of("SPOP s3 0"), Events{});
  EXPECT_EQ(events_of("SPOP s3 5"), (Events{"spop s3", "del s3"}));
  h.call("SADD s4 a b");
  EXPECT_EQ(events_of("SMOVE s4 s5 a"), (Events{"srem s4", "sadd s5"}));
  EXPECT_EQ(events_of("SMOVE s4 s5 zz"), Events{});
  EXPECT_EQ(events_of("SMOVE s5 s5 a"), Events{});
  h.call("SADD s5 b");
  EXPECT_EQ(events_of("SMOVE s4 s5 b"), (Events{"srem s4", "del s4"}));
}

TEST_F(NotifyTest, SetStores) {
  flags("Esg");
  h.call("SADD u1 a b c");
  h.call("SADD u2 b c d");
  EXPECT_EQ(events_of("SINTERSTORE i u1 u2"), Events{"sinterstore i"});
  EXPECT_EQ(events_of("SINTERSTORE i nosuch u2"), Events{"del i"});
  EXPECT_EQ(events_of("SINTERSTORE i nosuch u2"), Events{});
  EXPECT_EQ(events_of("SUNIONSTORE un u1 u2"), Events{"sunionstore un"});
  EXPECT_EQ(events_of("SDIFFSTORE df u1 u2"), Events{"sdiffstore df"});
  EXPECT_EQ(events_of("SDIFFSTORE df u1 u1"), Events{"del df"});
  EXPECT_EQ(events_of("SDIFFSTORE df2 u1 u1"), Events{});
}

// --- Sorted sets ---------------------------------------------------------------------------

TEST_F(NotifyTest, ZsetEvents) {
  flags("Ezg");
  EXPECT_EQ(events_of("ZADD z 1 a 2 b"), Events{"zadd z"});
  EXPECT_EQ(events_of("ZADD z 1 a"), Events{});
  EXPECT_EQ(events_of("ZADD z XX 5 a"), Events{"zadd z"});
  EXPECT_EQ(events_of("ZADD z NX 5 a"), Events{});
  EXPECT_EQ(events_of("ZADD z INCR 2 b"), Events{"zincr z"});
  EXPECT_EQ(events_of("ZADD z GT 1 a"), Events{});
  EXPECT_EQ(events_of("ZADD nosuch XX 1 a"), Events{});
  EXPECT_EQ(events_of("ZINCRBY z 3 c"), Events{"zincr z"});
  EXPECT_EQ(events_of("ZREM z nosuch"), Events{});
  EXPECT_EQ(events_of("ZREM z a nosuch"), Events{"zrem z"});
  h.call("ZADD z 1 a 2 b 3 c 4 d 5 e 6 f");
  EXPECT_EQ(events_of("ZREMRANGEBYSCORE z 100 200"), Events{});
  EXPECT_EQ(events_of("ZREMRANGEBYSCORE z 1 1"), Events{"zremrangebyscore z"});
  EXPECT_EQ(events_of("ZREMRANGEBYRANK z 0 0"), Events{"zremrangebyrank z"});
  EXPECT_EQ(events_of("ZPOPMIN z"), Events{"zpopmin z"});
  EXPECT_EQ(events_of("ZPOPMAX z"), Events{"zpopmax z"});
  EXPECT_EQ(events_of("ZPOPMIN z 0"), Events{});
  EXPECT_EQ(events_of("ZPOPMAX z 10"), (Events{"zpopmax z", "del z"}));
  EXPECT_EQ(events_of("ZPOPMIN nosuch"), Events{});
  h.call("ZADD l 0 a 0 b 0 c");
  EXPECT_EQ(events_of("ZREMRANGEBYLEX l - (b"), Events{"zremrangebylex l"});
  EXPECT_EQ(events_of("ZREMRANGEBYLEX l - +"), (Events{"zremrangebylex l", "del l"}));
  h.call("ZADD z 1 a 2 b");
  EXPECT_EQ(events_of("ZMPOP 1 z MIN"), Events{"zpopmin z"});
  EXPECT_EQ(events_of("ZMPOP 1 z MAX COUNT 5"), (Events{"zpopmax z", "del z"}));
  h.call("ZADD z 1 a 2 b");
  EXPECT_EQ(events_of("BZPOPMIN z 1"), Events{"zpopmin z"});
  EXPECT_EQ(events_of("BZPOPMAX z 1"), (Events{"zpopmax z", "del z"}));
}

TEST_F(NotifyTest, ZsetStores) {
  flags("Ezg");
  h.call("ZADD z1 1 a 2 b");
  h.call("ZADD z2 2 b 3 c");
  EXPECT_EQ(events_of("ZUNIONSTORE zu 2 z1 z2"), Events{"zunionstore zu"});
  EXPECT_EQ(events_of("ZINTERSTORE zi 2 z1 z2"), Events{"zinterstore zi"});
  EXPECT_EQ(events_of("ZDIFFSTORE zd 2 z1 z2"), Events{"zdiffstore zd"});
  EXPECT_EQ(events_of("ZDIFFSTORE zd 2 z1 z1"), Events{"del zd"});
  EXPECT_EQ(events_of("ZINTERSTORE zi 2 z1 nosuch"), Events{"del zi"});
  EXPECT_EQ(events_of("ZRANGESTORE zr z1 0 -1"), Events{"zrangestore zr"});
  EXPECT_EQ(events_of("ZRANGESTORE zr z1 5 6"), Events{"del zr"});
  EXPECT_EQ(events_of("ZRANGESTORE zr2 z1 5 6"), Events{});
}

// --- SORT ----------------------------------------------------------------------------------

TEST_F(NotifyTest, SortStore) {
  flags("Elg");
  h.call("RPUSH l 3 1 2");
  EXPECT_EQ(events_of("SORT l STORE out"), Events{"sortstore out"});
  EXPECT_EQ(events_of("SORT l STORE out"), Events{"sortstore out"});
  EXPECT_EQ(events_of("SORT nosuch STORE out"), Events{"del out"});
  EXPECT_EQ(events_of("SORT nosuch STORE out2"), Events{});
  EXPECT_EQ(events_of("SORT l"), Events{});
}

// --- keymiss -------------------------------------------------------------------------------

TEST_F(NotifyTest, KeymissOnReadMisses) {
  flags("Em");
  EXPECT_EQ(events_of("GET nosuch"), Events{"keymiss nosuch"});
  EXPECT_EQ(events_of("MGET a b"), (Events{"keymiss a", "keymiss b"}));
  EXPECT_EQ(events_of("EXISTS nosuch"), Events{"keymiss nosuch"});
  EXPECT_EQ(events_of("TYPE nosuch"), Events{"keymiss nosuch"});
  EXPECT_EQ(events_of("TTL nosuch"), Events{"keymiss nosuch"});
  EXPECT_EQ(events_of("LLEN nosuch"), Events{"keymiss nosuch"});
  EXPECT_EQ(events_of("HGET nosuch f"), Events{"keymiss nosuch"});
  EXPECT_EQ(events_of("GETDEL nosuch"), Events{"keymiss nosuch"});
  EXPECT_EQ(events_of("SET n2 v GET"), Events{"keymiss n2"});
  // Misses of write lookups and of OBJECT are silent.
  EXPECT_EQ(events_of("OBJECT ENCODING nosuch"), Events{});
  EXPECT_EQ(events_of("OBJECT FREQ nosuch"), Events{});
  EXPECT_EQ(events_of("LPOP nosuch"), Events{});
  EXPECT_EQ(events_of("INCR c"), Events{});
  EXPECT_EQ(events_of("SETNX n3 v"), Events{});
  EXPECT_EQ(events_of("GET c"), Events{});
}

// --- expired -------------------------------------------------------------------------------

TEST_F(NotifyTest, ExpiredLazilyOnce) {
  flags("KEA");
  h.state.keyspace().expiry_settings().active_expire_enabled = false;
  h.call("SET k v PX 100");
  h.advance_ms(200);
  EXPECT_EQ(run("GET k"), (Events{"__keyspace@0__:k expired", "__keyevent@0__:expired k"}));
  EXPECT_EQ(run("GET k"), Events{});
  EXPECT_EQ(run("EXISTS k"), Events{});
}

TEST_F(NotifyTest, ExpiredBeforeKeymissAndWriteEvents) {
  flags("KEAm");
  h.call("SET k v PX 100");
  h.call("RPUSH l a");
  h.call("PEXPIRE l 100");
  h.advance_ms(200);
  EXPECT_EQ(run("GET k"), (Events{"__keyspace@0__:k expired", "__keyevent@0__:expired k",
                                  "__keyspace@0__:k keymiss", "__keyevent@0__:keymiss k"}));
  flags("Elgx");
  EXPECT_EQ(events_of("LPUSH l b"), (Events{"expired l", "lpush l"}));
}

TEST_F(NotifyTest, ExpiredByActiveCycleOnce) {
  flags("Ex");
  h.call("SET k v PX 100");
  h.call("SELECT 4");
  h.call("HSET h a 1");
  h.call("PEXPIRE h 50");
  h.call("SELECT 0");
  h.advance_ms(200);
  listener.take();
  h.active_expire();
  Events events = listener.take();
  std::sort(events.begin(), events.end());
  EXPECT_EQ(events, (Events{"__keyevent@0__:expired k", "__keyevent@4__:expired h"}));
  h.active_expire();
  EXPECT_EQ(listener.take(), Events{});
  EXPECT_EQ(run("GET k"), Events{});
}

TEST_F(NotifyTest, ExpiredFilteredByClass) {
  flags("KEg");
  h.call("SET k v PX 100");
  h.advance_ms(200);
  EXPECT_EQ(run("GET k"), Events{});
  flags("Kx");
  h.call("SET k v PX 100");
  h.advance_ms(200);
  EXPECT_EQ(run("GET k"), Events{"__keyspace@0__:k expired"});
}

TEST_F(NotifyTest, EvictedHook) {
  flags("KEe");
  listener.take();
  h.state.key_evicted(2, "victim", false);
  EXPECT_EQ(listener.take(),
            (Events{"__keyspace@2__:victim evicted", "__keyevent@2__:evicted victim"}));
  flags("KEg");
  h.state.key_evicted(2, "victim", false);
  EXPECT_EQ(listener.take(), Events{});
}

// --- Transactions --------------------------------------------------------------------------

TEST_F(NotifyTest, EventsOfExecInOrder) {
  flags("E$l");
  h.call("MULTI");
  EXPECT_EQ(events_of("SET a 1"), Events{});  // queued: nothing yet
  h.call("LPUSH l a");
  h.call("INCR a");
  EXPECT_EQ(events_of("EXEC"), (Events{"set a", "lpush l", "incrby a"}));
}

}  // namespace
}  // namespace keywarden
