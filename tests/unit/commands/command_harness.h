// Dispatcher-level test harness: a server state with every data family registered, one client
// session, a manual clock and a recorder of the propagation stream. Commands are written as
// one string split like an inline request ("SET k \"a b\" EX 10"); replies come back rendered
// by to_debug_string (+OK, :5, "bulk", (nil), [a, b], -ERR …) so expectations read like a
// redis-cli session.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
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

// The reply every command gives for a key of another type.
inline constexpr std::string_view kWrongType =
    "-WRONGTYPE Operation against a key holding the wrong kind of value";

// A client's pub/sub side: its messages are appended to its pending replies, in the protocol
// its session speaks at the time.
class HarnessSubscriber final : public Subscriber {
 public:
  HarnessSubscriber(const ClientSession& session, std::string& out)
      : session_(session), writer_(&out) {}
  ReplyWriter* pubsub_writer() override {
    writer_.set_resp(session_.resp);
    return &writer_;
  }

 private:
  const ClientSession& session_;
  ReplyWriter writer_;
};

// Another client of the same server, for blocking commands, WATCH and pub/sub: its own
// session, and the replies it received outside its own commands (served or timed out while
// blocked, published messages), as raw RESP.
struct HarnessClient {
  ClientSession session;
  std::string pending;
  HarnessSubscriber subscriber{session, pending};
};

class CommandHarness {
 public:
  CommandHarness() : state(clock, 16), dispatcher(state) {
    register_data_commands(state.commands());
    state.propagator().add_sink(&propagated);
    session.id = 1;
    session.authenticated = true;
    session.subscriber = &subscriber;
    outputs_[&session] = &pending;
  }

  // A new client (ids 2, 3, …), authenticated, in database 0.
  HarnessClient& new_client() {
    clients_.push_back(std::make_unique<HarnessClient>());
    HarnessClient& client = *clients_.back();
    client.session.id = clients_.size() + 1;
    client.session.authenticated = true;
    client.session.subscriber = &client.subscriber;
    outputs_[&client.session] = &client.pending;
    return client;
  }
  // Runs one command as the main client and renders every reply it wrote ("; "-separated):
  // for commands with several replies (SUBSCRIBE a b).
  std::string call_all(std::string_view line) {
    std::vector<std::string> args;
    EXPECT_TRUE(split_arguments(line, args)) << "unbalanced quotes in test command: " << line;
    std::vector<std::string_view> views(args.begin(), args.end());
    std::string out;
    ReplyWriter writer(&out, session.resp);
    dispatcher.execute(session, views, writer);
    serve_blocked();
    last_raw = out;
    return render_all(out);
  }
  // What the main client received outside its own commands (messages), "; "-separated.
  std::string take_pending() {
    std::string rendered = render_all(pending);
    pending.clear();
    return rendered;
  }
  // Runs one command as `client`: its reply, or "(blocked)" when it blocked.
  std::string call_as(HarnessClient& client, std::string_view line) {
    std::vector<std::string> args;
    EXPECT_TRUE(split_arguments(line, args)) << "unbalanced quotes in test command: " << line;
    std::vector<std::string_view> views(args.begin(), args.end());
    std::string out;
    ReplyWriter writer(&out, client.session.resp);
    dispatcher.execute(client.session, views, writer);
    serve_blocked();
    if (out.empty() && client.session.blocked.blocked()) return "(blocked)";
    return render_all(out);
  }
  // The replies `client` got since the last look (served or timed out), "; "-separated;
  // empty when none.
  std::string replies_of(HarnessClient& client) {
    std::string rendered = render_all(client.pending);
    client.pending.clear();
    return rendered;
  }
  // Gives every blocked client whose deadline has passed its timeout reply.
  void time_out_blocked() {
    for (ClientSession* waiter : state.blocking().timed_out(clock.wall_ms())) {
      std::string& out = *outputs_.at(waiter);
      ReplyWriter writer(&out, waiter->resp);
      dispatcher.end_blocked(*waiter, writer);
    }
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
    serve_blocked();
    ReplyParser parser;
    EXPECT_EQ(parser.parse(out), ReplyParseStatus::kValue) << "incomplete reply: " << out;
    EXPECT_EQ(parser.consumed(), out.size()) << "more than one reply: " << out;
    last_raw = out;
    return parser.take_value();
  }

  // OBJECT ENCODING of `key`, rendered ("\"listpack\"", or (nil)).
  std::string encoding(std::string_view key) { return call("OBJECT ENCODING " + std::string(key)); }
  // The propagated lines since the last call.
  std::vector<std::string> take_propagated() {
    std::vector<std::string> lines = std::move(propagated.lines);
    propagated.lines.clear();
    return lines;
  }
  // Runs a SCAN-family command (`command` + cursor + `options`, e.g. "HSCAN h", "COUNT 7") from
  // cursor 0 until it returns 0, calling between(step) after every step (writes the scan must
  // survive). Returns every item of every step, in order; *steps gets the number of calls.
  std::vector<std::string> scan_all(std::string_view command, std::string_view options,
                                    const std::function<void(int)>& between = {},
                                    int* steps = nullptr) {
    std::vector<std::string> items;
    std::string cursor = "0";
    int calls = 0;
    do {
      RespValue reply =
          this->reply(std::string(command) + " " + cursor + " " + std::string(options));
      if (reply.elements.size() != 2) {
        ADD_FAILURE() << command << ": " << to_debug_string(reply);
        break;
      }
      cursor = reply.elements[0].str;
      for (const RespValue& item : reply.elements[1].elements) items.push_back(item.str);
      ++calls;
      if (between) between(calls);
    } while (cursor != "0" && calls < 100'000);
    EXPECT_EQ(cursor, "0") << command << ": no end after " << calls << " calls";
    if (steps != nullptr) *steps = calls;
    return items;
  }
  // Changes counted so far (INFO rdb_changes_since_last_save).
  uint64_t dirty() { return state.stats().dirty; }

  void advance_ms(int64_t ms) { clock.advance_ms(ms); }
  // One full slow active-expiry cycle.
  void active_expire() {
    state.keyspace().active_expire_slice();
    state.propagator().flush();
  }

  ManualClock clock;
  ServerState state;
  Dispatcher dispatcher;
  ClientSession session;
  RecordingSink propagated;
  std::string last_raw;  // the raw RESP bytes of the last reply
  std::string pending;   // replies the main session got while blocked, and its messages
  HarnessSubscriber subscriber{session, pending};

 private:
  // What the server does after every command: runs the commands of clients whose keys
  // became ready, each reply going to that client.
  void serve_blocked() {
    dispatcher.serve_ready_keys([this](ClientSession& waiter) {
      std::string& out = *outputs_.at(&waiter);
      ReplyWriter writer(&out, waiter.resp);
      dispatcher.retry_blocked(waiter, writer);
    });
  }
  static std::string render_all(std::string_view raw) {
    std::string rendered;
    ReplyParser parser;
    while (!raw.empty()) {
      EXPECT_EQ(parser.parse(raw), ReplyParseStatus::kValue) << "incomplete reply: " << raw;
      if (parser.consumed() == 0) break;
      if (!rendered.empty()) rendered += "; ";
      rendered += to_debug_string(parser.take_value());
      raw.remove_prefix(parser.consumed());
    }
    return rendered;
  }

  std::vector<std::unique_ptr<HarnessClient>> clients_;
  std::map<const ClientSession*, std::string*> outputs_;
};

}  // namespace keywarden::testing
