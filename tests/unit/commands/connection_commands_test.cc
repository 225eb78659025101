#include "command_harness.h"

namespace keywarden::testing {
namespace {

TEST(ConnectionCommands, PingAndEcho) {
  CommandHarness h;
  EXPECT_EQ(h.call("PING"), "+PONG");
  EXPECT_EQ(h.call("ping hello"), "\"hello\"");
  EXPECT_EQ(h.call("PING a b"), "-ERR wrong number of arguments for 'ping' command");
  EXPECT_EQ(h.call("ECHO \"a b\""), "\"a b\"");
  EXPECT_EQ(h.call("ECHO"), "-ERR wrong number of arguments for 'echo' command");
}

TEST(ConnectionCommands, UnknownCommandQuotesArguments) {
  CommandHarness h;
  EXPECT_EQ(h.call("FOO a b"), "-ERR unknown command 'FOO', with args beginning with: 'a' 'b' ");
  EXPECT_EQ(h.call("nope"), "-ERR unknown command 'nope', with args beginning with: ");
  // Newlines in arguments cannot reach the error line.
  EXPECT_EQ(h.call("FOO \"x\\ny\""), "-ERR unknown command 'FOO', with args beginning with: 'x y' ");
}

TEST(ConnectionCommands, Select) {
  CommandHarness h;
  EXPECT_EQ(h.call("SELECT 15"), "+OK");
  EXPECT_EQ(h.session.db, 15);
  EXPECT_EQ(h.call("SELECT 16"), "-ERR DB index is out of range");
  EXPECT_EQ(h.call("SELECT -1"), "-ERR DB index is out of range");
  EXPECT_EQ(h.call("SELECT x"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.session.db, 15);
}

TEST(ConnectionCommands, AuthWithoutPassword) {
  CommandHarness h;
  EXPECT_EQ(h.call("AUTH secret"),
            "-ERR AUTH <password> called without any password configured for the default user. "
            "Are you sure your configuration is correct?");
  EXPECT_EQ(h.call("AUTH default anything"), "+OK");
  EXPECT_EQ(h.call("AUTH someone anything"),
            "-WRONGPASS invalid username-password pair or user is disabled.");
  EXPECT_EQ(h.call("AUTH a b c"), "-ERR syntax error");
}

TEST(ConnectionCommands, RequirePassGatesCommands) {
  CommandHarness h;
  h.state.acl().set_default_password("pw");  // what requirepass does
  h.session.authenticated = false;
  EXPECT_EQ(h.call("PING"), "-NOAUTH Authentication required.");
  EXPECT_EQ(h.call("NOSUCH"), "-ERR unknown command 'NOSUCH', with args beginning with: ");
  EXPECT_EQ(h.call("AUTH wrong"),
            "-WRONGPASS invalid username-password pair or user is disabled.");
  EXPECT_EQ(h.call("AUTH pw"), "+OK");
  EXPECT_EQ(h.call("PING"), "+PONG");
  EXPECT_EQ(h.call("RESET"), "+RESET");
  EXPECT_EQ(h.call("PING"), "-NOAUTH Authentication required.");
  EXPECT_EQ(h.state.stats().error_counts["NOAUTH"], 2u);
}

TEST(ConnectionCommands, HelloSwitchesProtocol) {
  CommandHarness h;
  RespValue hello = h.reply("HELLO 3");
  ASSERT_EQ(hello.type, RespType::kMap);
  ASSERT_EQ(hello.elements.size(), 14u);
  EXPECT_EQ(hello.elements[4].str, "proto");
  EXPECT_EQ(hello.elements[5].integer, 3);
  EXPECT_EQ(h.session.resp, 3);
  EXPECT_EQ(h.call("HELLO 4"), "-NOPROTO unsupported protocol version");
  EXPECT_EQ(h.call("HELLO x"), "-ERR Protocol version is not an integer or out of range");
  EXPECT_EQ(h.call("HELLO 3 FOO"), "-ERR Syntax error in HELLO option 'FOO'");
  EXPECT_EQ(h.call("HELLO 2 SETNAME \"a b\""),
            "-ERR Client names cannot contain spaces, newlines or special characters.");
  EXPECT_EQ(h.reply("HELLO 2 SETNAME app").type, RespType::kArray);
  EXPECT_EQ(h.session.name, "app");
  EXPECT_EQ(h.session.resp, 2);
}

TEST(ConnectionCommands, CommandStatsCountCallsAndRejections) {
  CommandHarness h;
  h.call("PING");
  // Like Redis, PING checks its extra arguments itself: a failed call, not a rejected one.
  h.call("PING a b");
  h.call("SELECT");
  const Command* ping = h.state.commands().find("ping");
  EXPECT_EQ(ping->stats.calls, 2u);
  EXPECT_EQ(ping->stats.failed_calls, 1u);
  EXPECT_EQ(ping->stats.rejected_calls, 0u);
  EXPECT_EQ(h.state.commands().find("select")->stats.rejected_calls, 1u);
}

}  // namespace
}  // namespace keywarden::testing
