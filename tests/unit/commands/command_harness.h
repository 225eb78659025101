// Dispatcher-level test harness: a server state with every data family registered, one client
// session, a manual clock and a recorder of the propagation stream. Commands are written as
// one string split like an inline request ("SET k \"a b\" EX 10"); replies come back rendered
// by to_debug_string (+OK, :5, "bulk", (nil), [a, b], -ERR …) so expectations read like a
// redis-cli session.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "commands/dispatcher.h"
#include "commands/families.h"
#include "commands/server_state.h"
#include "common/clock.h"
#include "resp/reply_parser.h"
#include "resp/reply_writer.h"
#include "resp/split_arguments.h"

namespace keywarden::testing {

// Records every propagated command as "db:ARG ARG …".
class RecordingSink final : public PropagationSink {
 public:
  void write_batch(std::span<const PropagatedCommand> batch) override {
    for (const PropagatedCommand& command : batch) {
      std::string line = std::to_string(command.db) + ":";
      for (size_t i = 0; i < command.args.size(); ++i) {
        if (i > 0) line += ' ';
        line += command.args[i];
      }
      lines.push_back(std::move(line));
    }
  }
  std::vector<std::string> lines;
};

class CommandHarness {
 public:
  CommandHarness() : state(clock, 16), dispatcher(state) {
    register_data_commands(state.commands());
    state.propagator().add_sink(&propagated);
    session.id = 1;
    session.authenticated = true;
  }

  // Runs one command and returns its reply as to_debug_string renders it.
  std::string call(std::string_view line) { return to_debug_string(reply(line)); }
  std::string call_args(const std::vector<std::string>& args) {
    return to_debug_string(reply_args(args));
  }

  RespValue reply(std::string_view line) {
    std::vector<std::string> args;
    EXPECT_TRUE(split_arguments(line, args)) << "unbalanced quotes in test command: " << line;
    return reply_args(args);
  }

  RespValue reply_args(const std::vector<std::string>& args) {
    std::vector<std::string_view> views(args.begin(), args.end());
    std::string out;
    ReplyWriter writer(&out, session.resp);
    dispatcher.execute(session, views, writer);
    ReplyParser parser;
    EXPECT_EQ(parser.parse(out), ReplyParseStatus::kValue) << "incomplete reply: " << out;
    EXPECT_EQ(parser.consumed(), out.size()) << "more than one reply: " << out;
    last_raw = out;
    return parser.take_value();
  }

  void advance_ms(int64_t ms) { clock.advance_ms(ms); }
  // One full slow active-expiry cycle.
  void active_expire() {
    state.keyspace().active_expire_cycle(Keyspace::CycleKind::kSlow, 10);
    state.propagator().flush();
  }

  ManualClock clock;
  ServerState state;
  Dispatcher dispatcher;
  ClientSession session;
  RecordingSink propagated;
  std::string last_raw;  // the raw RESP bytes of the last reply
};

}  // namespace keywarden::testing
