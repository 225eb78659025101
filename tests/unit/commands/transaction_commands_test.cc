#include "command_harness.h"

#include <memory>

#include "commands/errors.h"

namespace keywarden::testing {
namespace {

// A second client on the harness's server, for WATCH tests.
class OtherClient {
 public:
  explicit OtherClient(CommandHarness& h, uint64_t id = 2) : h_(h) {
    session.id = id;
    session.authenticated = true;
  }
  std::string call(std::string_view line) {
    std::vector<std::string> args;
    EXPECT_TRUE(split_arguments(line, args));
    std::vector<std::string_view> views(args.begin(), args.end());
    std::string out;
    ReplyWriter writer(&out, session.resp);
    h_.dispatcher.execute(session, views, writer);
    ReplyParser parser;
    EXPECT_EQ(parser.parse(out), ReplyParseStatus::kValue);
    return to_debug_string(parser.take_value());
  }
  ClientSession session;

 private:
  CommandHarness& h_;
};

TEST(TransactionCommands, QueuesAndExecutes) {
  CommandHarness h;
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_TRUE(h.session.transaction.in_multi());
  EXPECT_EQ(h.call("SET k v"), "+QUEUED");
  EXPECT_EQ(h.call("GET k"), "+QUEUED");
  EXPECT_EQ(h.call("INCR n"), "+QUEUED");
  EXPECT_EQ(h.session.transaction.queued_count(), 3u);
  EXPECT_EQ(h.state.keyspace().db(0).size(), 0u);  // nothing ran yet
  EXPECT_EQ(h.call("EXEC"), "[+OK, \"v\", :1]");
  EXPECT_FALSE(h.session.transaction.in_multi());
  EXPECT_EQ(h.call("GET k"), "\"v\"");
}

TEST(TransactionCommands, EmptyTransactionAndRawReplies) {
  CommandHarness h;
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "[]");
  EXPECT_EQ(h.last_raw, "*0\r\n");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("PING"), "+QUEUED");
  EXPECT_EQ(h.last_raw, "+QUEUED\r\n");
  EXPECT_EQ(h.call("EXEC"), "[+PONG]");
  EXPECT_EQ(h.last_raw, "*1\r\n+PONG\r\n");
}

TEST(TransactionCommands, ControlErrors) {
  CommandHarness h;
  EXPECT_EQ(h.call("EXEC"), "-ERR EXEC without MULTI");
  EXPECT_EQ(h.call("DISCARD"), "-ERR DISCARD without MULTI");
  EXPECT_EQ(h.call("MULTI x"), "-ERR wrong number of arguments for 'multi' command");
  EXPECT_EQ(h.call("EXEC x"),
            "-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' "
            "command");
  EXPECT_EQ(h.call("WATCH"), "-ERR wrong number of arguments for 'watch' command");
  EXPECT_EQ(h.call("UNWATCH x"), "-ERR wrong number of arguments for 'unwatch' command");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  // Neither error aborts the transaction.
  EXPECT_EQ(h.call("MULTI"), "-ERR MULTI calls can not be nested");
  EXPECT_EQ(h.call("WATCH k"), "-ERR WATCH inside MULTI is not allowed");
  EXPECT_EQ(h.call("SET k 1"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC"), "[+OK]");
}

TEST(TransactionCommands, QueueingErrorsAbortExec) {
  CommandHarness h;
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SET k v"), "+QUEUED");
  EXPECT_EQ(h.call("NOSUCH a"), "-ERR unknown command 'NOSUCH', with args beginning with: 'a' ");
  EXPECT_TRUE(h.session.transaction.dirty_exec());
  EXPECT_EQ(h.call("GET"), "-ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(h.call("SET k2 v"), "+QUEUED");  // still answered QUEUED, but not kept
  EXPECT_EQ(h.session.transaction.queued_count(), 1u);
  EXPECT_EQ(h.call("EXEC"), "-EXECABORT Transaction discarded because of previous errors.");
  EXPECT_FALSE(h.session.transaction.in_multi());
  EXPECT_EQ(h.call("EXISTS k k2"), ":0");
  EXPECT_EQ(h.call("EXEC"), "-ERR EXEC without MULTI");
  EXPECT_EQ(h.state.stats().error_counts["EXECABORT"], 1u);
}

TEST(TransactionCommands, UnknownSubcommandAborts) {
  CommandHarness h;
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("OBJECT NOPE k"),
            "-ERR unknown subcommand 'NOPE'. Try OBJECT HELP.");
  EXPECT_EQ(h.call("EXEC"), "-EXECABORT Transaction discarded because of previous errors.");
}

TEST(TransactionCommands, ExecWithWrongArityInsideMultiEndsIt) {
  CommandHarness h;
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SET k v"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC x"),
            "-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' "
            "command");
  EXPECT_FALSE(h.session.transaction.in_multi());
  EXPECT_EQ(h.call("EXISTS k"), ":0");
  // Even outside MULTI a refused EXEC answers EXECABORT, and unwatches.
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  EXPECT_EQ(h.call("EXEC x"),
            "-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' "
            "command");
  EXPECT_TRUE(h.session.transaction.watched().empty());
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("DISCARD x"), "-ERR wrong number of arguments for 'discard' command");
  EXPECT_TRUE(h.session.transaction.in_multi());
  EXPECT_EQ(h.call("DISCARD"), "+OK");
}

TEST(TransactionCommands, NoAuthInsideMultiAborts) {
  CommandHarness h;
  EXPECT_EQ(h.call("MULTI"), "+OK");
  h.state.acl().set_default_password("secret");  // what requirepass does
  h.session.authenticated = false;
  EXPECT_EQ(h.call("SET k v"), "-NOAUTH Authentication required.");
  EXPECT_EQ(h.call("EXEC"),
            "-EXECABORT Transaction discarded because of: NOAUTH Authentication required.");
  EXPECT_FALSE(h.session.transaction.in_multi());
}

TEST(TransactionCommands, NoMultiCommandsAreRefused) {
  CommandHarness h;
  // Mark a harmless command no-multi for the test: the data families have none (SHUTDOWN is a
  // server-layer command).
  Command* echo = h.state.commands().find("echo");
  CommandSpec spec = *echo->spec;
  spec.flags |= kNoMulti;
  const CommandSpec* original = echo->spec;
  echo->spec = &spec;
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("ECHO x"), "-ERR Command not allowed inside a transaction");
  EXPECT_EQ(h.call("EXEC"), "-EXECABORT Transaction discarded because of previous errors.");
  echo->spec = original;
}

TEST(TransactionCommands, RuntimeErrorsDoNotRollBack) {
  CommandHarness h;
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SET a x"), "+QUEUED");
  EXPECT_EQ(h.call("INCR a"), "+QUEUED");
  EXPECT_EQ(h.call("SET b 2"), "+QUEUED");
  EXPECT_EQ(h.call("SET c v BADOPT"), "+QUEUED");  // syntax is checked when it runs
  EXPECT_EQ(h.call("EXEC"),
            "[+OK, -ERR value is not an integer or out of range, +OK, -ERR syntax error]");
  EXPECT_EQ(h.call("MGET a b c"), "[\"x\", \"2\", (nil)]");
}

TEST(TransactionCommands, DiscardDropsQueueAndWatches) {
  CommandHarness h;
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SET k v"), "+QUEUED");
  EXPECT_EQ(h.call("DISCARD"), "+OK");
  EXPECT_FALSE(h.session.transaction.in_multi());
  EXPECT_TRUE(h.session.transaction.watched().empty());
  EXPECT_TRUE(h.state.watches().empty());
  EXPECT_EQ(h.call("EXISTS k"), ":0");
}

TEST(TransactionCommands, SelectInsideTransactionSticks) {
  CommandHarness h;
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SELECT 2"), "+QUEUED");
  EXPECT_EQ(h.session.db, 0);
  EXPECT_EQ(h.call("SET k v"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC"), "[+OK, +OK]");
  EXPECT_EQ(h.session.db, 2);
  EXPECT_EQ(h.state.keyspace().db(2).size(), 1u);
}

TEST(TransactionCommands, Resp3) {
  CommandHarness h;
  h.session.resp = 3;
  OtherClient other(h);
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SET k v"), "+QUEUED");
  EXPECT_EQ(h.call("GET k"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC"), "[+OK, \"v\"]");
  EXPECT_EQ(h.last_raw, "*2\r\n+OK\r\n$1\r\nv\r\n");
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  EXPECT_EQ(other.call("SET k w"), "+OK");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  h.call("EXEC");
  EXPECT_EQ(h.last_raw, "_\r\n");
}

TEST(TransactionCommands, WatchAbortsOnChangeByAnotherClient) {
  CommandHarness h;
  OtherClient other(h);
  EXPECT_EQ(h.call("SET k 1"), "+OK");
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  EXPECT_EQ(other.call("SET k 2"), "+OK");
  EXPECT_TRUE(h.session.transaction.dirty_cas());
  EXPECT_TRUE(h.state.watches().empty());  // a dirty client stops watching
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SET k 3"), "+QUEUED");
  h.call("EXEC");
  EXPECT_EQ(h.last_raw, "*-1\r\n");
  EXPECT_EQ(h.call("GET k"), "\"2\"");
  EXPECT_FALSE(h.session.transaction.dirty_cas());
  // The next transaction starts clean.
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "[]");
}

TEST(TransactionCommands, WatchAbortsOnOwnChange) {
  CommandHarness h;
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  EXPECT_EQ(h.call("SET k 1"), "+OK");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("PING"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC"), "(nil)");
}

TEST(TransactionCommands, WatchUnrelatedKeyOrReadsDoNotAbort) {
  CommandHarness h;
  OtherClient other(h);
  EXPECT_EQ(h.call("SET k 1"), "+OK");
  EXPECT_EQ(h.call("WATCH k missing"), "+OK");
  EXPECT_EQ(other.call("SET other 1"), "+OK");
  EXPECT_EQ(other.call("GET k"), "\"1\"");
  EXPECT_EQ(other.call("DEL missing"), ":0");        // deleted nothing: no change
  EXPECT_EQ(other.call("EXPIRE k 100 XX"), ":0");    // condition failed: no change
  EXPECT_EQ(other.call("PERSIST k"), ":0");
  EXPECT_EQ(other.call("GETEX k"), "\"1\"");
  EXPECT_EQ(other.call("SETRANGE k 0 \"\""), ":1");
  EXPECT_EQ(other.call("SETNX k 5"), ":0");
  EXPECT_EQ(other.call("RENAME k k"), "+OK");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("GET k"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC"), "[\"1\"]");
}

TEST(TransactionCommands, UnwatchForgetsKeysAndDirtiness) {
  CommandHarness h;
  OtherClient other(h);
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  EXPECT_EQ(h.call("UNWATCH"), "+OK");
  EXPECT_EQ(other.call("SET k 1"), "+OK");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "[]");

  EXPECT_EQ(h.call("WATCH k"), "+OK");
  EXPECT_EQ(other.call("SET k 2"), "+OK");
  EXPECT_TRUE(h.session.transaction.dirty_cas());
  // Watching more once dirty changes nothing; UNWATCH clears the flag.
  EXPECT_EQ(h.call("WATCH j"), "+OK");
  EXPECT_TRUE(h.session.transaction.watched().empty());
  EXPECT_EQ(h.call("UNWATCH"), "+OK");
  EXPECT_FALSE(h.session.transaction.dirty_cas());
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "[]");
}

TEST(TransactionCommands, ExecUnwatchesEvenWhenItRuns) {
  CommandHarness h;
  OtherClient other(h);
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SET k mine"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC"), "[+OK]");
  EXPECT_TRUE(h.state.watches().empty());
  EXPECT_EQ(other.call("SET k 2"), "+OK");
  EXPECT_FALSE(h.session.transaction.dirty_cas());
}

TEST(TransactionCommands, WatchIsPerDatabase) {
  CommandHarness h;
  OtherClient other(h);
  EXPECT_EQ(h.call("SELECT 3"), "+OK");
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  EXPECT_EQ(h.call("WATCH k"), "+OK");  // twice is once
  EXPECT_EQ(h.session.transaction.watched().size(), 1u);
  EXPECT_EQ(other.call("SET k 1"), "+OK");  // db 0
  EXPECT_FALSE(h.session.transaction.dirty_cas());
  // Watching from another db after a SELECT adds a second key.
  EXPECT_EQ(h.call("SELECT 0"), "+OK");
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  EXPECT_EQ(h.session.transaction.watched().size(), 2u);
  EXPECT_EQ(other.call("SELECT 3"), "+OK");
  EXPECT_EQ(other.call("SET k 1"), "+OK");
  EXPECT_TRUE(h.session.transaction.dirty_cas());
}

// Each write below must dirty a client watching `k` in db 0 (`setup` runs unwatched first, by
// the writing client, which stays in the database the setup selected).
struct WriteCase {
  const char* setup;
  const char* write;
};

class WatchedWrite : public ::testing::TestWithParam<WriteCase> {};

TEST_P(WatchedWrite, AbortsExec) {
  CommandHarness h;
  OtherClient other(h);
  const WriteCase& c = GetParam();
  std::vector<std::string> setup;
  std::string text = c.setup;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find(';', start);
    if (end == std::string::npos) end = text.size();
    setup.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  for (const std::string& line : setup) {
    if (!line.empty()) other.call(line);
  }
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  const std::string reply = other.call(c.write);
  EXPECT_EQ(reply.rfind("-", 0), std::string::npos) << c.write << " failed: " << reply;
  EXPECT_TRUE(h.session.transaction.dirty_cas()) << c.write;
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "(nil)") << c.write;
}

INSTANTIATE_TEST_SUITE_P(
    AllFamilies, WatchedWrite,
    ::testing::Values(
        WriteCase{"", "SET k v"}, WriteCase{"", "SET k v NX"}, WriteCase{"SET k 1", "SET k 1"},
        WriteCase{"SET k 1", "SET k v XX GET"}, WriteCase{"", "SETNX k v"},
        WriteCase{"", "SETEX k 100 v"}, WriteCase{"", "PSETEX k 100000 v"},
        WriteCase{"SET k 1", "GETSET k 2"}, WriteCase{"SET k 1", "GETDEL k"},
        WriteCase{"SET k 1", "GETEX k EX 100"}, WriteCase{"SET k 1 EX 100", "GETEX k PERSIST"},
        WriteCase{"SET k 1", "GETEX k PXAT 1"}, WriteCase{"", "MSET a 1 k 2"},
        WriteCase{"", "MSETNX a 1 k 2"}, WriteCase{"", "APPEND k x"},
        WriteCase{"SET k 1", "APPEND k \"\""}, WriteCase{"", "SETRANGE k 2 x"},
        WriteCase{"", "INCR k"}, WriteCase{"", "DECR k"}, WriteCase{"", "INCRBY k 0"},
        WriteCase{"", "DECRBY k 5"}, WriteCase{"", "INCRBYFLOAT k 1.5"},
        WriteCase{"SET k 1", "DEL a k"}, WriteCase{"SET k 1", "UNLINK k"},
        WriteCase{"SET k 1", "EXPIRE k 100"}, WriteCase{"SET k 1", "PEXPIRE k 100000"},
        WriteCase{"SET k 1", "EXPIREAT k 1"}, WriteCase{"SET k 1", "PEXPIREAT k 99999999999999"},
        WriteCase{"SET k 1", "EXPIRE k 0"}, WriteCase{"SET k 1 EX 100", "PERSIST k"},
        WriteCase{"SET k 1", "RENAME k j"}, WriteCase{"SET j 1", "RENAME j k"},
        WriteCase{"SET j 1", "RENAMENX j k"}, WriteCase{"SET j 1", "COPY j k"},
        WriteCase{"SELECT 1;SET j 1", "COPY j k DB 0"}, WriteCase{"SET k 1", "MOVE k 1"},
        WriteCase{"SELECT 1;SET k 1", "MOVE k 0"}, WriteCase{"SET k 1", "FLUSHDB"},
        WriteCase{"SET k 1", "FLUSHALL"}, WriteCase{"SET k 1", "SWAPDB 0 1"},
        WriteCase{"SELECT 1;SET k 1", "SWAPDB 1 0"}, WriteCase{"SET k 1;SELECT 1;SET k 1",
                                                                "SWAPDB 0 1"}));

TEST(TransactionCommands, FlushAndSwapTouchOnlyStoredKeys) {
  CommandHarness h;
  OtherClient other(h);
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  EXPECT_EQ(other.call("SET j 1"), "+OK");
  EXPECT_EQ(other.call("FLUSHDB"), "+OK");  // k did not exist
  EXPECT_EQ(other.call("SWAPDB 2 3"), "+OK");
  EXPECT_EQ(other.call("SWAPDB 0 1"), "+OK");  // absent on both sides
  EXPECT_EQ(other.call("SWAPDB 0 0"), "+OK");
  EXPECT_EQ(other.call("SELECT 1"), "+OK");
  EXPECT_EQ(other.call("SET k 1"), "+OK");  // another db
  EXPECT_EQ(other.call("FLUSHDB"), "+OK");
  EXPECT_FALSE(h.session.transaction.dirty_cas());
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "[]");
}

TEST(TransactionCommands, WatchedKeyExpiring) {
  // A key watched while alive that reaches its deadline fails EXEC, whether it is still
  // stored, deleted lazily by a read, or reclaimed by active expiry.
  CommandHarness h;
  OtherClient other(h);
  EXPECT_EQ(h.call("SET k 1 PX 100"), "+OK");
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  h.advance_ms(200);
  EXPECT_FALSE(h.session.transaction.dirty_cas());
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "(nil)");

  EXPECT_EQ(h.call("SET k 1 PX 100"), "+OK");
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  h.advance_ms(200);
  EXPECT_EQ(other.call("GET k"), "(nil)");
  EXPECT_TRUE(h.session.transaction.dirty_cas());
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "(nil)");

  EXPECT_EQ(h.call("SET k 1 PX 100"), "+OK");
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  h.advance_ms(200);
  h.active_expire();
  EXPECT_EQ(h.state.keyspace().db(0).find_raw("k"), nullptr);
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "(nil)");

  // A deadline still ahead at EXEC is no change.
  EXPECT_EQ(h.call("SET k 1 PX 100"), "+OK");
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  h.advance_ms(100);
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "[]");
}

TEST(TransactionCommands, WatchingAnAlreadyExpiredKey) {
  // Stored but past its deadline when WATCHed: logically absent, so its deletion by expiry
  // changes nothing (Redis 7.0.15); writing it again does.
  CommandHarness h;
  OtherClient other(h);
  auto stale = [&](std::string_view key) {
    EXPECT_EQ(other.call("SET " + std::string(key) + " 1 PX 100"), "+OK");
    h.advance_ms(200);
    ASSERT_NE(h.state.keyspace().db(other.session.db).find_raw(key), nullptr);
  };
  stale("k");
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  EXPECT_TRUE(h.session.transaction.watched()[0].expired_at_watch);
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "[]");

  stale("k");
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  EXPECT_EQ(other.call("GET k"), "(nil)");
  EXPECT_FALSE(h.session.transaction.watched()[0].expired_at_watch);
  EXPECT_EQ(other.call("DEL k"), ":0");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "[]");

  stale("k");
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  h.active_expire();
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "[]");

  stale("k");
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  EXPECT_EQ(h.call("SET k 2"), "+OK");  // deletes the expired key, then writes a new one
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "(nil)");

  stale("k");
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  EXPECT_EQ(other.call("FLUSHDB"), "+OK");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "[]");

  // SWAPDB: stale on this side, absent on the other; then absent here, stale there.
  stale("w");
  EXPECT_EQ(h.call("WATCH w"), "+OK");
  EXPECT_EQ(other.call("SWAPDB 0 1"), "+OK");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "[]");
  EXPECT_EQ(other.call("FLUSHALL"), "+OK");
  EXPECT_EQ(other.call("SELECT 1"), "+OK");
  stale("w");
  EXPECT_EQ(h.call("WATCH w"), "+OK");
  EXPECT_EQ(other.call("SWAPDB 0 1"), "+OK");
  EXPECT_TRUE(h.session.transaction.watched()[0].expired_at_watch);
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "[]");
  // Alive on the other side: a change.
  EXPECT_EQ(other.call("SET w 1"), "+OK");
  EXPECT_EQ(h.call("WATCH w"), "+OK");
  EXPECT_EQ(other.call("SWAPDB 0 1"), "+OK");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EXEC"), "(nil)");
}

TEST(TransactionCommands, QueuedCommandsShareTheExecInstant) {
  CommandHarness h;
  EXPECT_EQ(h.call("SET k v PX 100"), "+OK");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("PTTL k"), "+QUEUED");
  h.advance_ms(60);
  EXPECT_EQ(h.call("PTTL k"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC"), "[:40, :40]");
}

TEST(TransactionCommands, PropagatesAsOneUnit) {
  CommandHarness h;
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SET a 1"), "+QUEUED");
  EXPECT_EQ(h.call("GET a"), "+QUEUED");
  EXPECT_EQ(h.call("SELECT 1"), "+QUEUED");
  EXPECT_EQ(h.call("INCR b"), "+QUEUED");
  EXPECT_EQ(h.call("INCR a"), "+QUEUED");  // runs in db 1: a is missing there
  EXPECT_TRUE(h.propagated.lines.empty());  // nothing before EXEC
  EXPECT_EQ(h.call("EXEC"), "[+OK, \"1\", +OK, :1, :1]");
  EXPECT_EQ(h.propagated.lines,
            (std::vector<std::string>{"0:MULTI", "0:SET a 1", "1:INCR b", "1:INCR a", "1:EXEC"}));
}

TEST(TransactionCommands, SingleWriteIsNotWrapped) {
  CommandHarness h;
  const int64_t now = h.clock.wall_ms();
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SET a 1 PX 1000"), "+QUEUED");
  EXPECT_EQ(h.call("GET a"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC"), "[+OK, \"1\"]");
  EXPECT_EQ(h.propagated.lines,
            (std::vector<std::string>{"0:SET a 1 PXAT " + std::to_string(now + 1000)}));
  h.propagated.lines.clear();
  // Reads only, failed writes, aborted transactions: nothing.
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("GET a"), "+QUEUED");
  EXPECT_EQ(h.call("INCR a x"), "-ERR wrong number of arguments for 'incr' command");
  EXPECT_EQ(h.call("EXEC"), "-EXECABORT Transaction discarded because of previous errors.");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("GET a"), "+QUEUED");
  EXPECT_EQ(h.call("LCS a a"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC"), "[\"1\", \"1\"]");
  EXPECT_TRUE(h.propagated.lines.empty());
}

TEST(TransactionCommands, ExpiredKeyDeletionJoinsTheUnit) {
  CommandHarness h;
  EXPECT_EQ(h.call("SET a 1 PX 100"), "+OK");
  h.propagated.lines.clear();
  h.advance_ms(200);
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SET a 2"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC"), "[+OK]");
  EXPECT_EQ(h.propagated.lines,
            (std::vector<std::string>{"0:MULTI", "0:DEL a", "0:SET a 2", "0:EXEC"}));
}

TEST(TransactionCommands, CountsInnerCommands) {
  CommandHarness h;
  const uint64_t before = h.state.stats().total_commands_processed;
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SET a 1"), "+QUEUED");
  EXPECT_EQ(h.call("GET a"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC"), "[+OK, \"1\"]");
  // MULTI, SET, GET, EXEC: queueing is not running.
  EXPECT_EQ(h.state.stats().total_commands_processed - before, 4u);
  EXPECT_EQ(h.state.commands().find("set")->stats.calls, 1u);
  EXPECT_EQ(h.state.commands().find("exec")->stats.calls, 1u);
  EXPECT_EQ(h.session.last_command, h.state.commands().find("exec"));
}

TEST(TransactionCommands, ResetAndQuit) {
  CommandHarness h;
  EXPECT_EQ(h.call("WATCH k"), "+OK");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SET k v"), "+QUEUED");
  EXPECT_EQ(h.call("RESET"), "+RESET");
  EXPECT_FALSE(h.session.transaction.in_multi());
  EXPECT_TRUE(h.state.watches().empty());
  EXPECT_EQ(h.call("EXEC"), "-ERR EXEC without MULTI");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("QUIT"), "+OK");  // not queued
  EXPECT_TRUE(h.session.close_after_reply);
}

TEST(TransactionCommands, ClientGoneUnwatches) {
  CommandHarness h;
  {
    OtherClient other(h, 7);
    EXPECT_EQ(other.call("WATCH a b"), "+OK");
    EXPECT_FALSE(h.state.watches().empty());
  }
  EXPECT_TRUE(h.state.watches().empty());
  EXPECT_EQ(h.call("SET a 1"), "+OK");  // no dangling watcher to touch
}

TEST(TransactionCommands, ManyWatchersOneKey) {
  CommandHarness h;
  std::vector<std::unique_ptr<OtherClient>> clients;
  for (uint64_t id = 10; id < 20; ++id) {
    clients.push_back(std::make_unique<OtherClient>(h, id));
    EXPECT_EQ(clients.back()->call("WATCH k other"), "+OK");
  }
  EXPECT_EQ(h.call("SET k 1"), "+OK");
  for (auto& client : clients) EXPECT_TRUE(client->session.transaction.dirty_cas());
  EXPECT_TRUE(h.state.watches().empty());
}

TEST(TransactionCommands, CommandTableRows) {
  CommandHarness h;
  const std::string quick = "[+noscript, +loading, +stale, +fast, +allow_busy], :0, :0, :0, "
                            "[+@fast, +@transaction], [], [], []]";
  EXPECT_EQ(h.call("COMMAND INFO multi exec discard unwatch"),
            "[[\"multi\", :1, " + quick +
                ", [\"exec\", :1, [+noscript, +loading, +stale, +skip_slowlog], :0, :0, :0, "
                "[+@slow, +@transaction], [], [], []], [\"discard\", :1, " +
                quick + ", [\"unwatch\", :1, " + quick + "]");
  const Command* watch = h.state.commands().find("watch");
  ASSERT_NE(watch, nullptr);
  EXPECT_EQ(watch->spec->arity, -2);
  EXPECT_EQ(watch->spec->first_key, 1);
  EXPECT_EQ(watch->spec->last_key, -1);
  EXPECT_EQ(watch->spec->key_step, 1);
  EXPECT_EQ(h.call("COMMAND GETKEYS WATCH a b"), "[\"a\", \"b\"]");
}

TEST(TransactionCommands, QueuedCommandsAreReportedAsNestedInOrder) {
  // What the server's slow log and MONITOR see of a transaction: each queued command once it
  // ran, with the database it left selected; MULTI and EXEC themselves are not nested.
  CommandHarness h;
  std::vector<std::string> seen;
  h.dispatcher.set_nested_observer([&](const ClientSession& session,
                                       std::span<const std::string_view> args,
                                       const Command& command, int64_t duration_us) {
    EXPECT_EQ(&session, &h.session);
    EXPECT_GE(duration_us, 0);
    std::string line = std::to_string(session.db) + ":" + command.full_name;
    for (std::string_view arg : args.subspan(1)) line += " " + std::string(arg);
    seen.push_back(line);
  });
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SET k v"), "+QUEUED");
  EXPECT_EQ(h.call("SELECT 3"), "+QUEUED");
  EXPECT_EQ(h.call("LPUSH k x"), "+QUEUED");
  EXPECT_TRUE(seen.empty());  // queueing runs nothing
  EXPECT_EQ(h.call("EXEC"), "[+OK, +OK, :1]");
  EXPECT_EQ(seen, (std::vector<std::string>{"0:set k v", "3:select 3", "3:lpush k x"}));
  // An aborted or a discarded transaction runs nothing, so reports nothing.
  seen.clear();
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("GET"), "-ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(h.call("EXEC"), "-EXECABORT Transaction discarded because of previous errors.");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("SET a b"), "+QUEUED");
  EXPECT_EQ(h.call("DISCARD"), "+OK");
  EXPECT_TRUE(seen.empty());
}

}  // namespace
}  // namespace keywarden::testing
