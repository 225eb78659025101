// The dispatcher's generic checks and what execute() reports. Each test sets up two or more
// conditions that would each refuse the command and checks that the one Redis 7.0's
// processCommand tests first answers (the e2e test test_dispatch_order.py checks the orderings
// that can be produced from outside against redis-server itself). The server state the checks
// read — loading, a write refusal, a busy script, CLIENT PAUSE, maxmemory — is set directly.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "command_harness.h"
#include "commands/context.h"
#include "commands/errors.h"

namespace keywarden {
namespace {

using testing::CommandHarness;
using Outcome = ExecutionResult::Outcome;

constexpr std::string_view kBusy =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
constexpr std::string_view kMisconf = "MISCONF test: the disk is gone";

std::string error_reply(std::string_view text) { return "-" + std::string(text); }

void ok_handler(CommandContext& ctx) { ctx.reply.simple_string("OK"); }

// Commands the data families do not have: a protected one (as DEBUG) and a no-multi write (as
// SAVE is no-multi, with write and denyoom so that every later check would apply too).
constexpr CommandSpec kTestCommands[] = {
    {"protectedcmd", 1, kProtected | kWrite | kDenyOom, 0, 0, 0, 0, ok_handler, "server", "7.0.0",
     "test", "O(1)"},
    {"nomultiwrite", 1, kNoMulti | kWrite | kDenyOom, 0, 0, 0, 0, ok_handler, "server", "7.0.0",
     "test", "O(1)"},
};

class DispatcherTest : public ::testing::Test {
 protected:
  DispatcherTest() {
    h.state.commands().add(kTestCommands);
    h.state.eviction().set_memory_gauge([this] { return used_memory; });
  }

  // Runs `line` as the main client; the reply, rendered, goes to *reply.
  ExecutionResult run(std::string_view line, std::string* reply = nullptr) {
    return run_as(h.session, line, reply);
  }
  ExecutionResult run_as(ClientSession& session, std::string_view line,
                         std::string* reply = nullptr) {
    std::vector<std::string> args;
    EXPECT_TRUE(split_arguments(line, args));
    std::vector<std::string_view> views(args.begin(), args.end());
    std::string out;
    ReplyWriter writer(&out, session.resp);
    const ExecutionResult result = h.dispatcher.execute(session, views, writer);
    if (reply != nullptr) {
      ReplyParser parser;
      *reply = out.empty() ? "" : (parser.parse(out), to_debug_string(parser.take_value()));
    }
    return result;
  }
  std::string reply_to(std::string_view line) {
    std::string reply;
    run(line, &reply);
    return reply;
  }

  void require_password() {
    h.state.acl().set_default_password("secret");  // what requirepass does
    h.session.authenticated = false;
  }
  // Memory over a 1000-byte limit, with noeviction: denyoom commands get -OOM.
  void out_of_memory() {
    h.state.eviction().settings().maxmemory = 1000;
    used_memory = 2000;
  }

  CommandHarness h;
  size_t used_memory = 0;
};

TEST_F(DispatcherTest, UnknownThenArityThenProtectedThenAuth) {
  require_password();
  out_of_memory();
  h.state.set_loading(true);
  h.state.set_busy_reply(kBusy);
  EXPECT_EQ(reply_to("NOSUCH a b"),
            "-ERR unknown command 'NOSUCH', with args beginning with: 'a' 'b' ");
  EXPECT_EQ(reply_to("GET"), "-ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(reply_to("PROTECTEDCMD"), error_reply(errors::kDebugDisabled));
  EXPECT_EQ(reply_to("GET k"), error_reply(errors::kNoAuth));
  // AUTH is no-auth, and also loading and allow-busy: it runs.
  EXPECT_EQ(reply_to("AUTH secret"), "+OK");
}

TEST_F(DispatcherTest, NoMultiComesBeforeMemoryAndEverythingAfter) {
  EXPECT_EQ(reply_to("MULTI"), "+OK");
  out_of_memory();
  h.state.set_write_refusal(ServerState::DiskError::kRdb, kMisconf);
  h.state.set_loading(true);
  h.state.set_busy_reply(kBusy);
  EXPECT_EQ(reply_to("NOMULTIWRITE"), error_reply(errors::kNotAllowedInMulti));
  // While a busy script lets clients in, nothing is evicted nor refused for memory (its
  // effects must not mix with eviction's).
  EXPECT_EQ(reply_to("GET k"), error_reply(errors::kLoading));
  h.state.set_busy_reply({});
  // Over maxmemory inside MULTI everything that does not end the transaction is refused,
  // denyoom or not: queueing takes memory.
  EXPECT_EQ(reply_to("GET k"), error_reply(errors::kOom));
  EXPECT_EQ(reply_to("WATCH k"), error_reply(errors::kOom));
  // A refusal aborts the transaction.
  h.state.set_write_refusal(ServerState::DiskError::kRdb, {});
  h.state.set_loading(false);
  used_memory = 0;
  EXPECT_EQ(reply_to("EXEC"), error_reply(errors::kExecAbort));
}

TEST_F(DispatcherTest, AuthComesBeforeNoMulti) {
  EXPECT_EQ(reply_to("MULTI"), "+OK");
  require_password();
  EXPECT_EQ(reply_to("NOMULTIWRITE"), error_reply(errors::kNoAuth));
}

TEST_F(DispatcherTest, OomComesBeforeMisconf) {
  out_of_memory();
  h.state.set_write_refusal(ServerState::DiskError::kRdb, kMisconf);
  EXPECT_EQ(reply_to("SET k v"), error_reply(errors::kOom));
  // Not denyoom: the disk error refuses it.
  EXPECT_EQ(reply_to("DEL k"), error_reply(kMisconf));
  EXPECT_EQ(reply_to("PING"), error_reply(kMisconf));
  EXPECT_EQ(reply_to("GET k"), "(nil)");
}

TEST_F(DispatcherTest, MisconfComesBeforeTheSubscribedContextWhichComesBeforeLoading) {
  EXPECT_EQ(h.call_all("SUBSCRIBE ch"), "[\"subscribe\", \"ch\", :1]");
  h.state.set_write_refusal(ServerState::DiskError::kRdb, kMisconf);
  h.state.set_loading(true);
  h.state.set_busy_reply(kBusy);
  EXPECT_EQ(reply_to("SET k v"), error_reply(kMisconf));
  EXPECT_EQ(reply_to("PING"), error_reply(kMisconf));
  EXPECT_EQ(reply_to("GET k"),
            "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / "
            "RESET are allowed in this context");
  h.state.set_write_refusal(ServerState::DiskError::kRdb, {});
  // PING is allowed while subscribed but has no loading flag.
  EXPECT_EQ(reply_to("PING"), error_reply(errors::kLoading));
}

TEST_F(DispatcherTest, LoadingComesBeforeBusyWhichComesBeforePause) {
  h.state.set_loading(true);
  h.state.set_busy_reply(kBusy);
  h.state.client_pause().pause(h.clock.wall_ms() + 1000, false, h.clock.wall_ms());
  EXPECT_EQ(reply_to("GET k"), error_reply(errors::kLoading));
  h.state.set_loading(false);
  EXPECT_EQ(reply_to("GET k"), error_reply(kBusy));
  h.state.set_busy_reply({});
  std::string reply = "unset";
  EXPECT_EQ(run("GET k", &reply).outcome, Outcome::kPostponed);
  EXPECT_EQ(reply, "");
}

TEST_F(DispatcherTest, LoadingRefusesExecWhenAQueuedCommandLacksTheLoadingFlag) {
  EXPECT_EQ(reply_to("MULTI"), "+OK");
  EXPECT_EQ(reply_to("GET k"), "+QUEUED");
  h.state.set_loading(true);
  EXPECT_EQ(reply_to("EXEC"),
            "-EXECABORT Transaction discarded because of: LOADING Redis is loading the dataset "
            "in memory");
  EXPECT_FALSE(h.session.transaction.in_multi());
}

TEST_F(DispatcherTest, RefusalsInsideMultiAbortTheTransaction) {
  EXPECT_EQ(reply_to("MULTI"), "+OK");
  h.state.set_loading(true);
  EXPECT_EQ(reply_to("GET k"), error_reply(errors::kLoading));
  h.state.set_loading(false);
  EXPECT_EQ(reply_to("GET k"), "+QUEUED");
  EXPECT_EQ(reply_to("EXEC"), error_reply(errors::kExecAbort));
}

TEST_F(DispatcherTest, WhatMustBeObeyedIsNotRefusedForTheServerState) {
  ClientSession replay;
  replay.authenticated = true;
  replay.must_obey = true;
  h.state.set_loading(true);
  h.state.set_write_refusal(ServerState::DiskError::kAof, kMisconf);
  h.state.client_pause().pause(h.clock.wall_ms() + 1000, false, h.clock.wall_ms());
  std::string reply;
  EXPECT_EQ(run_as(replay, "SET k v", &reply).outcome, Outcome::kRan);
  EXPECT_EQ(reply, "+OK");
  // Unknown commands and arity still apply.
  EXPECT_EQ(run_as(replay, "SET k", &reply).outcome, Outcome::kRejected);
}

TEST_F(DispatcherTest, TheRdbErrorIsGivenBeforeTheAofOne) {
  h.state.set_write_refusal(ServerState::DiskError::kAof, "MISCONF aof");
  EXPECT_EQ(reply_to("SET k v"), "-MISCONF aof");
  h.state.set_write_refusal(ServerState::DiskError::kRdb, "MISCONF rdb");
  EXPECT_EQ(reply_to("SET k v"), "-MISCONF rdb");
  h.state.set_write_refusal(ServerState::DiskError::kRdb, {});
  EXPECT_EQ(reply_to("SET k v"), "-MISCONF aof");
  h.state.set_write_refusal(ServerState::DiskError::kAof, {});
  EXPECT_EQ(reply_to("SET k v"), "+OK");
}

TEST_F(DispatcherTest, PauseAllHoldsEveryValidCommandButNotErrors) {
  const int64_t now = h.clock.wall_ms();
  h.state.client_pause().pause(now + 1000, false, now);
  const uint64_t processed = h.state.stats().total_commands_processed;
  std::string reply = "unset";
  EXPECT_EQ(run("GET k", &reply).outcome, Outcome::kPostponed);
  EXPECT_EQ(reply, "");
  EXPECT_EQ(h.session.last_command, h.state.commands().find("get"));  // CLIENT LIST cmd=
  EXPECT_EQ(run("PING", &reply).outcome, Outcome::kPostponed);
  // Errors found before the pause check are replied at once.
  EXPECT_EQ(run("GET", &reply).outcome, Outcome::kRejected);
  EXPECT_EQ(reply, "-ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(run("NOSUCH", &reply).outcome, Outcome::kRejected);
  EXPECT_EQ(h.state.stats().total_commands_processed, processed);
  EXPECT_EQ(h.state.commands().find("get")->stats.calls, 0u);

  h.clock.advance_ms(1000);
  h.state.client_pause().end_if_due(h.clock.wall_ms());
  EXPECT_TRUE(h.state.client_pause().take_ended());
  EXPECT_FALSE(h.state.client_pause().take_ended());
  EXPECT_EQ(run("GET k", &reply).outcome, Outcome::kRan);
}

TEST_F(DispatcherTest, PauseWriteHoldsWhatMayWriteOrReplicate) {
  const int64_t now = h.clock.wall_ms();
  EXPECT_EQ(reply_to("MULTI"), "+OK");
  EXPECT_EQ(reply_to("INCR n"), "+QUEUED");
  h.state.client_pause().pause(now + 1000, true, now);
  // EXEC is judged by what it queued.
  EXPECT_EQ(run("EXEC").outcome, Outcome::kPostponed);
  EXPECT_EQ(reply_to("DISCARD"), "+OK");
  EXPECT_EQ(run("GET k").outcome, Outcome::kRan);
  EXPECT_EQ(run("SET k v").outcome, Outcome::kPostponed);
  EXPECT_EQ(run("PUBLISH ch m").outcome, Outcome::kPostponed);  // may-replicate
  // Inside MULTI the pause is checked before queueing, as in Redis.
  EXPECT_EQ(reply_to("MULTI"), "+OK");
  EXPECT_EQ(run("SET k v").outcome, Outcome::kPostponed);
  EXPECT_EQ(run("GET k").outcome, Outcome::kQueued);
  EXPECT_EQ(run("EXEC").outcome, Outcome::kRan);  // only reads queued
}

TEST_F(DispatcherTest, APauseIsNeverShortenedNorWeakened) {
  ClientPause& pause = h.state.client_pause();
  const int64_t now = h.clock.wall_ms();
  pause.pause(now - 1, false, now);  // a deadline in the past pauses nothing
  EXPECT_FALSE(pause.active());
  EXPECT_FALSE(h.state.keyspace().expiry_held());
  pause.pause(now + 1000, false, now);
  pause.pause(now + 10, true, now);
  EXPECT_EQ(pause.deadline_ms(), now + 1000);
  EXPECT_FALSE(pause.write_only());
  EXPECT_TRUE(h.state.keyspace().expiry_held());
  pause.unpause();
  EXPECT_FALSE(pause.active());
  EXPECT_FALSE(h.state.keyspace().expiry_held());
  // Once over, a new pause is whatever it says.
  pause.pause(now + 10, true, now);
  EXPECT_TRUE(pause.write_only());
  EXPECT_EQ(pause.deadline_ms(), now + 10);
}

TEST_F(DispatcherTest, OutcomesSayWhatHappened) {
  std::string reply;
  ExecutionResult result = run("SET k v", &reply);
  EXPECT_EQ(result.outcome, Outcome::kRan);
  EXPECT_TRUE(result.ran());
  EXPECT_EQ(result.dirty, 1u);
  EXPECT_EQ(run("MSET a 1 b 2").dirty, 2u);
  result = run("GET k");
  EXPECT_EQ(result.outcome, Outcome::kRan);
  EXPECT_EQ(result.dirty, 0u);

  result = run("GET");
  EXPECT_EQ(result.outcome, Outcome::kRejected);
  EXPECT_FALSE(result.ran());
  EXPECT_EQ(h.state.commands().find("get")->stats.rejected_calls, 1u);

  EXPECT_EQ(run("MULTI").outcome, Outcome::kRan);
  result = run("INCR n");
  EXPECT_EQ(result.outcome, Outcome::kQueued);
  EXPECT_FALSE(result.ran());
  result = run("EXEC");
  EXPECT_EQ(result.outcome, Outcome::kRan);
  EXPECT_EQ(result.dirty, 1u);

  result = run("BLPOP list 0");
  EXPECT_EQ(result.outcome, Outcome::kBlocked);
  EXPECT_TRUE(result.ran());
  h.state.blocking().unblock(h.session);
}

TEST_F(DispatcherTest, OnlyRunCommandsCountAsProcessed) {
  const uint64_t before = h.state.stats().total_commands_processed;
  run("GET");    // rejected
  run("MULTI");  // ran
  run("GET k");  // queued
  run("EXEC");   // ran, and GET inside it
  EXPECT_EQ(h.state.stats().total_commands_processed - before, 3u);
}

TEST_F(DispatcherTest, TheDispatchersFlagsSitOnTheRightRows) {
  CommandTable& table = h.state.commands();
  auto with = [&](uint32_t flag) {
    std::vector<std::string> names;
    for (const auto& [name, command] : table.commands()) {
      if (command->has(flag)) names.push_back(name);
    }
    return names;
  };
  using Names = std::vector<std::string>;
  EXPECT_EQ(with(kRunsInMulti), (Names{"discard", "exec", "multi", "quit", "reset", "watch"}));
  EXPECT_EQ(with(kEndsMulti), (Names{"discard", "exec", "quit", "reset"}));
  EXPECT_EQ(with(kExecutesQueue), (Names{"exec"}));
  EXPECT_EQ(with(kSubscribedContext),
            (Names{"ping", "psubscribe", "punsubscribe", "quit", "reset", "ssubscribe", "subscribe",
                   "sunsubscribe", "unsubscribe"}));
  EXPECT_EQ(with(kRefusedOnDiskError), (Names{"ping"}));
  // The scripting layer adds EVAL*/FCALL* (scripting tests); here only EXEC runs scripts.
  EXPECT_EQ(with(kRunsScripts), (Names{"exec"}));
  // Subcommands named like a flagged command are not flagged.
  EXPECT_FALSE(table.find_for_args(std::vector<std::string_view>{"pubsub", "channels"})
                   ->has(kSubscribedContext));
}

TEST_F(DispatcherTest, InternalFlagsAreNotCommandFlags) {
  EXPECT_TRUE(CommandTable::flag_names(kInternalFlags).empty());
  EXPECT_EQ(CommandTable::flag_names(kFast | kRunsInMulti | kSubscribedContext),
            std::vector<std::string_view>{"fast"});
  EXPECT_EQ(h.call("COMMAND INFO ping"),
            "[[\"ping\", :-1, [+fast], :0, :0, :0, [+@fast, +@connection], "
            "[\"request_policy:all_shards\", \"response_policy:all_succeeded\"], [], []]]");
}

}  // namespace
}  // namespace keywarden
