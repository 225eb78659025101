// Pub/sub commands through the dispatcher: confirmations and counts, messages in RESP2 and
// RESP3, the RESP2 subscribed mode, RESET, MULTI, PUBSUB introspection and the command table.
#include "command_harness.h"

namespace keywarden::testing {
namespace {

constexpr std::string_view kSubscribedMode =
    "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context";

std::string refused(std::string_view name) {
  return "-ERR Can't execute '" + std::string(name) + std::string(kSubscribedMode);
}

TEST(PubSubCommands, SubscribeConfirmsEachChannelWithTheCount) {
  CommandHarness h;
  EXPECT_EQ(h.call_all("SUBSCRIBE a b a"),
            "[\"subscribe\", \"a\", :1]; [\"subscribe\", \"b\", :2]; [\"subscribe\", \"a\", :2]");
  EXPECT_EQ(h.call_all("PSUBSCRIBE p*"), "[\"psubscribe\", \"p*\", :3]");
  // Shard channels are counted apart.
  EXPECT_EQ(h.call_all("SSUBSCRIBE s1 s2"),
            "[\"ssubscribe\", \"s1\", :1]; [\"ssubscribe\", \"s2\", :2]");
  EXPECT_EQ(h.call_all("UNSUBSCRIBE b zz"),
            "[\"unsubscribe\", \"b\", :2]; [\"unsubscribe\", \"zz\", :2]");
  EXPECT_EQ(h.call_all("PUNSUBSCRIBE"), "[\"punsubscribe\", \"p*\", :1]");
  EXPECT_EQ(h.call_all("PUNSUBSCRIBE"), "[\"punsubscribe\", (nil), :1]");
  EXPECT_EQ(h.call_all("UNSUBSCRIBE"), "[\"unsubscribe\", \"a\", :0]");
  // Only shard channels left: still subscribed.
  EXPECT_EQ(h.call_all("UNSUBSCRIBE"), "[\"unsubscribe\", (nil), :0]");
  EXPECT_TRUE(h.session.subscribed());
  EXPECT_EQ(h.call_all("SUNSUBSCRIBE"),
            "[\"sunsubscribe\", \"s1\", :1]; [\"sunsubscribe\", \"s2\", :0]");
  EXPECT_FALSE(h.session.subscribed());
  EXPECT_EQ(h.call_all("SUNSUBSCRIBE"), "[\"sunsubscribe\", (nil), :0]");
  EXPECT_EQ(h.call("PING"), "+PONG");
}

TEST(PubSubCommands, UnsubscribeWhenSubscribedToNothing) {
  CommandHarness h;
  EXPECT_EQ(h.call_all("UNSUBSCRIBE"), "[\"unsubscribe\", (nil), :0]");
  EXPECT_EQ(h.call_all("UNSUBSCRIBE x y"),
            "[\"unsubscribe\", \"x\", :0]; [\"unsubscribe\", \"y\", :0]");
  EXPECT_EQ(h.call_all("PUNSUBSCRIBE x"), "[\"punsubscribe\", \"x\", :0]");
  EXPECT_EQ(h.call_all("SUNSUBSCRIBE x"), "[\"sunsubscribe\", \"x\", :0]");
  EXPECT_FALSE(h.session.subscribed());
  EXPECT_EQ(h.call("PING"), "+PONG");
}

TEST(PubSubCommands, PublishReachesChannelAndPatternSubscribers) {
  CommandHarness h;
  HarnessClient& a = h.new_client();
  HarnessClient& b = h.new_client();
  EXPECT_EQ(h.call_as(a, "SUBSCRIBE news"), "[\"subscribe\", \"news\", :1]");
  EXPECT_EQ(h.call_as(b, "PSUBSCRIBE n*"), "[\"psubscribe\", \"n*\", :1]");
  EXPECT_EQ(h.call("PUBLISH news hello"), ":2");
  EXPECT_EQ(h.replies_of(a), "[\"message\", \"news\", \"hello\"]");
  EXPECT_EQ(h.replies_of(b), "[\"pmessage\", \"n*\", \"news\", \"hello\"]");
  EXPECT_EQ(h.call("PUBLISH nothing x"), ":1");
  EXPECT_EQ(h.replies_of(a), "");
  EXPECT_EQ(h.call("PUBLISH other x"), ":0");
  EXPECT_EQ(h.call("PUBLISH a"), "-ERR wrong number of arguments for 'publish' command");
  // Propagated as received (replicas republish it).
  EXPECT_EQ(h.take_propagated(),
            (std::vector<std::string>{"0:PUBLISH news hello", "0:PUBLISH nothing x",
                                      "0:PUBLISH other x"}));
  EXPECT_EQ(h.dirty(), 0u);
}

TEST(PubSubCommands, SpublishReachesShardSubscribersOnly) {
  CommandHarness h;
  HarnessClient& a = h.new_client();
  HarnessClient& b = h.new_client();
  h.call_as(a, "SSUBSCRIBE s");
  h.call_as(b, "PSUBSCRIBE *");
  EXPECT_EQ(h.call("SPUBLISH s v"), ":1");
  EXPECT_EQ(h.replies_of(a), "[\"smessage\", \"s\", \"v\"]");
  EXPECT_EQ(h.replies_of(b), "");
  EXPECT_EQ(h.call("PUBLISH s v"), ":1");
  EXPECT_EQ(h.replies_of(a), "");
  EXPECT_EQ(h.replies_of(b), "[\"pmessage\", \"*\", \"s\", \"v\"]");
}

TEST(PubSubCommands, Resp3ConfirmationsAndMessagesArePushes) {
  CommandHarness h;
  HarnessClient& a = h.new_client();
  a.session.resp = 3;
  EXPECT_EQ(h.call_as(a, "SUBSCRIBE c"), ">[\"subscribe\", \"c\", :1]");
  EXPECT_EQ(h.call_as(a, "UNSUBSCRIBE x"), ">[\"unsubscribe\", \"x\", :1]");
  EXPECT_EQ(h.call_as(a, "PUNSUBSCRIBE"), ">[\"punsubscribe\", (nil), :1]");
  // RESP3 allows every command while subscribed, and PING answers normally.
  EXPECT_EQ(h.call_as(a, "SET k v"), "+OK");
  EXPECT_EQ(h.call_as(a, "PING"), "+PONG");
  EXPECT_EQ(h.call_as(a, "PING x"), "\"x\"");
  EXPECT_EQ(h.call("PUBLISH c m"), ":1");
  EXPECT_EQ(h.replies_of(a), ">[\"message\", \"c\", \"m\"]");
  // HELLO 2 while subscribed: back to RESP2 subscribed mode.
  h.call_as(a, "HELLO 2");
  EXPECT_EQ(h.call_as(a, "GET k"), refused("get"));
  EXPECT_EQ(h.call("PUBLISH c m"), ":1");
  EXPECT_EQ(h.replies_of(a), "[\"message\", \"c\", \"m\"]");
}

TEST(PubSubCommands, Resp2SubscribedModeAllowsOnlySomeCommands) {
  CommandHarness h;
  h.call_all("SUBSCRIBE c");
  EXPECT_EQ(h.call("GET k"), refused("get"));
  EXPECT_EQ(h.call("OBJECT ENCODING x"), refused("object|encoding"));
  EXPECT_EQ(h.call("MULTI"), refused("multi"));
  EXPECT_EQ(h.call("HELLO 3"), refused("hello"));
  EXPECT_EQ(h.call("PUBLISH c x"), refused("publish"));
  // Unknown commands and wrong arity come first.
  EXPECT_EQ(h.call("NOPE"), "-ERR unknown command 'NOPE', with args beginning with: ");
  EXPECT_EQ(h.call("GET"), "-ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(h.call("PING"), "[\"pong\", \"\"]");
  EXPECT_EQ(h.call("PING hi"), "[\"pong\", \"hi\"]");
  EXPECT_EQ(h.call_all("PSUBSCRIBE p"), "[\"psubscribe\", \"p\", :2]");
  EXPECT_EQ(h.call_all("SSUBSCRIBE s"), "[\"ssubscribe\", \"s\", :1]");
  EXPECT_EQ(h.call_all("SUNSUBSCRIBE"), "[\"sunsubscribe\", \"s\", :0]");
  EXPECT_EQ(h.call("RESET"), "+RESET");
  EXPECT_FALSE(h.session.subscribed());
  EXPECT_EQ(h.call("PUBSUB NUMSUB c"), "[\"c\", :0]");
  EXPECT_EQ(h.call("PUBSUB NUMPAT"), ":0");
  EXPECT_EQ(h.call("GET k"), "(nil)");
  // Refusals count as rejected calls (the wrong arity above too).
  EXPECT_EQ(h.state.commands().find("get")->stats.rejected_calls, 2u);
}

TEST(PubSubCommands, QuitIsAllowedWhenSubscribed) {
  CommandHarness h;
  h.call_all("SUBSCRIBE c");
  EXPECT_EQ(h.call("QUIT"), "+OK");
  EXPECT_TRUE(h.session.close_after_reply);
}

TEST(PubSubCommands, InsideMulti) {
  CommandHarness h;
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SUBSCRIBE a b"), "+QUEUED");
  EXPECT_EQ(h.call("SSUBSCRIBE s"), "+QUEUED");
  EXPECT_EQ(h.call("PING"), "+QUEUED");
  // SUBSCRIBE runs (two confirmations inside one EXEC element count, as in Redis), SSUBSCRIBE
  // is refused, and PING already sees the subscribed mode.
  EXPECT_EQ(h.call_all("EXEC"),
            "[[\"subscribe\", \"a\", :1], [\"subscribe\", \"b\", :2], "
            "-ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client]; [\"pong\", \"\"]");
  EXPECT_TRUE(h.session.subscribed());
  // Outside MULTI, EXEC is refused like any command, and answers as an aborted EXEC does.
  EXPECT_EQ(h.call("EXEC"), "-EXECABORT Transaction discarded because of: Can't execute 'exec" +
                                std::string(kSubscribedMode));
}

TEST(PubSubCommands, ExecRefusedInSubscribedMode) {
  CommandHarness h;
  HarnessClient& a = h.new_client();
  a.session.resp = 3;
  h.call_as(a, "SUBSCRIBE c");
  EXPECT_EQ(h.call_as(a, "MULTI"), "+OK");
  EXPECT_EQ(h.call_as(a, "PUBLISH c x"), "+QUEUED");
  h.call_as(a, "HELLO 2");  // HELLO is queued too
  EXPECT_EQ(h.call_as(a, "EXEC"),
            "[:1, [\"server\", \"redis\", \"version\", \"7.0.15\", "
            "\"proto\", :2, \"id\", :2, \"mode\", \"standalone\", "
            "\"role\", \"master\", \"modules\", []]]");
  EXPECT_EQ(h.call_as(a, "MULTI"), refused("multi"));
  EXPECT_EQ(h.call_as(a, "EXEC"),
            "-EXECABORT Transaction discarded because of: Can't execute "
            "'exec" +
                std::string(kSubscribedMode));
}

TEST(PubSubCommands, PubsubIntrospection) {
  CommandHarness h;
  HarnessClient& a = h.new_client();
  HarnessClient& b = h.new_client();
  h.call_as(a, "SUBSCRIBE news sport");
  h.call_as(b, "SUBSCRIBE news");
  h.call_as(a, "PSUBSCRIBE n* s*");
  h.call_as(b, "PSUBSCRIBE n*");
  h.call_as(b, "SSUBSCRIBE shard1 other");
  EXPECT_EQ(h.call("PUBSUB NUMSUB news sport none"), "[\"news\", :2, \"sport\", :1, \"none\", :0]");
  EXPECT_EQ(h.call("PUBSUB NUMSUB"), "[]");
  EXPECT_EQ(h.call("PUBSUB NUMPAT"), ":2");
  EXPECT_EQ(h.call("PUBSUB SHARDNUMSUB shard1 news"), "[\"shard1\", :1, \"news\", :0]");
  EXPECT_EQ(h.call("PUBSUB SHARDNUMSUB"), "[]");
  EXPECT_EQ(h.call("PUBSUB CHANNELS n*"), "[\"news\"]");
  EXPECT_EQ(h.call("PUBSUB CHANNELS x*"), "[]");
  EXPECT_EQ(h.reply("PUBSUB CHANNELS").elements.size(), 2u);
  EXPECT_EQ(h.call("PUBSUB SHARDCHANNELS s*"), "[\"shard1\"]");
  EXPECT_EQ(h.reply("PUBSUB SHARDCHANNELS").elements.size(), 2u);
  EXPECT_EQ(h.call("pubsub channels a b"),
            "-ERR unknown subcommand or wrong number of arguments for 'channels'. Try PUBSUB "
            "HELP.");
  EXPECT_EQ(h.call("PUBSUB SHARDCHANNELS a b"),
            "-ERR unknown subcommand or wrong number of arguments for 'SHARDCHANNELS'. Try "
            "PUBSUB HELP.");
  EXPECT_EQ(h.call("PUBSUB NUMPAT x"),
            "-ERR wrong number of arguments for 'pubsub|numpat' command");
  EXPECT_EQ(h.call("PUBSUB"), "-ERR wrong number of arguments for 'pubsub' command");
  EXPECT_EQ(h.call("PUBSUB FOO"), "-ERR unknown subcommand 'FOO'. Try PUBSUB HELP.");
  RespValue help = h.reply("PUBSUB HELP");
  ASSERT_EQ(help.elements.size(), 14u);
  EXPECT_EQ(help.elements[0].str,
            "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  EXPECT_EQ(help.elements[13].str, "    Prints this help.");
  // NUMSUB stays a flat array in RESP3.
  h.session.resp = 3;
  EXPECT_EQ(h.call("PUBSUB NUMSUB news"), "[\"news\", :2]");
}

TEST(PubSubCommands, ResetDropsEverySubscription) {
  CommandHarness h;
  HarnessClient& a = h.new_client();
  h.call_as(a, "SUBSCRIBE c");
  h.call_as(a, "PSUBSCRIBE p*");
  h.call_as(a, "SSUBSCRIBE s");
  EXPECT_EQ(h.call_as(a, "RESET"), "+RESET");
  EXPECT_FALSE(a.session.subscribed());
  EXPECT_TRUE(h.state.pubsub().idle());
  EXPECT_EQ(h.call("PUBLISH c x"), ":0");
  EXPECT_EQ(h.call("PUBLISH p1 x"), ":0");
  EXPECT_EQ(h.call("SPUBLISH s x"), ":0");
}

TEST(PubSubCommands, SubscriberPublishingToItselfInResp3) {
  CommandHarness h;
  h.session.resp = 3;
  h.call_all("SUBSCRIBE c");
  EXPECT_EQ(h.call("PUBLISH c self"), ":1");
  EXPECT_EQ(h.take_pending(), ">[\"message\", \"c\", \"self\"]");
}

TEST(PubSubCommands, CommandTableRows) {
  CommandHarness h;
  EXPECT_EQ(h.call("COMMAND INFO subscribe"),
            "[[\"subscribe\", :-2, [+pubsub, +noscript, +loading, +stale], :0, :0, :0, "
            "[+@pubsub, +@slow], [], [], []]]");
  EXPECT_EQ(h.call("COMMAND INFO publish"),
            "[[\"publish\", :3, [+pubsub, +loading, +stale, +fast], :0, :0, :0, "
            "[+@pubsub, +@fast], [], [], []]]");
  // Shard channels are in key positions (cluster routing) but are not keys.
  RespValue info = h.reply("COMMAND INFO spublish");
  EXPECT_EQ(to_debug_string(info.elements[0].elements[8]),
            "[[\"flags\", [+not_key], \"begin_search\", [\"type\", \"index\", \"spec\", "
            "[\"index\", :1]], \"find_keys\", [\"type\", \"range\", \"spec\", "
            "[\"lastkey\", :0, \"keystep\", :1, \"limit\", :0]]]]");
  EXPECT_EQ(h.call("COMMAND GETKEYS SPUBLISH ch msg"), "-ERR The command has no key arguments");
  EXPECT_EQ(h.call("COMMAND GETKEYS SSUBSCRIBE a b"), "-ERR The command has no key arguments");
  EXPECT_EQ(h.call("COMMAND INFO pubsub|numpat"),
            "[[\"pubsub|numpat\", :2, [+pubsub, +loading, +stale], :0, :0, :0, "
            "[+@pubsub, +@slow], [], [], []]]");
}

TEST(PubSubCommands, ConfirmationsTakeTheMessagePathWhenRepliesAreOff) {
  // Redis 7.0 confirms (un)subscriptions even under CLIENT REPLY OFF/SKIP: the command layer
  // writes them where messages go, which the connection delivers whatever the reply mode.
  for (ReplyMode mode : {ReplyMode::kOff, ReplyMode::kSkip}) {
    for (int resp : {2, 3}) {
      CommandHarness h;
      h.session.resp = resp;
      h.session.reply_mode = mode;
      const std::string push = resp == 3 ? ">" : "";  // how a RESP3 push frame renders
      EXPECT_EQ(h.call_all("SUBSCRIBE a"), "");
      EXPECT_EQ(h.take_pending(), push + "[\"subscribe\", \"a\", :1]");
      EXPECT_EQ(h.call_all("UNSUBSCRIBE"), "");
      EXPECT_EQ(h.take_pending(), push + "[\"unsubscribe\", \"a\", :0]");
      EXPECT_EQ(h.call_all("PUNSUBSCRIBE"), "");
      EXPECT_EQ(h.take_pending(), push + "[\"punsubscribe\", (nil), :0]");
      // Anything else is the command's own reply, which the connection drops.
      EXPECT_EQ(h.call_all("SUBSCRIBE"), "-ERR wrong number of arguments for 'subscribe' command");
      EXPECT_EQ(h.take_pending(), "");
    }
  }
}

}  // namespace
}  // namespace keywarden::testing
