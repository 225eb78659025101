// The server the dispatcher-level fuzz targets (command, lua_script, aof_load) run commands
// in: the command layer with every data family, DUMP/RESTORE and LASTSAVE (an RdbService that
// never touches the disk: SAVE and BGSAVE are not registered) and the scripting engine, on a
// manual clock, with a few in-memory clients. It is what tests/unit/commands/command_harness.h
// builds, without GoogleTest and with what a fuzzer needs on top:
//
// - Runaway scripts end: the busy threshold is 0, so the engine calls the busy handler every
//   100k Lua instructions, and the handler stops the script after kScriptHookBudget calls
//   (as SCRIPT KILL would), so `while true do end` costs a few milliseconds, not a timeout.
// - SAVE and BGSAVE are neutered (they reply an error): they would write files and fork.
//   PFSELFTEST too: its ten million additions would time the fuzzer out.
// - Clients leave cleanly (unblocked, unsubscribed) before the state goes, as a closed
//   connection does.
//
// The server-layer families (CONFIG, INFO, CLIENT, DEBUG, SHUTDOWN, MONITOR, MEMORY, SLOWLOG,
// LATENCY…) need a whole Server (sockets, the process) and are not reachable here.
//
// Building one costs about a millisecond under ASan (two Lua states, sixteen databases, the
// command table), more than most inputs take, so a target keeps one and calls reset() before
// each input: new clients, every database emptied, fresh Lua states when a script or function
// ran, the clock back at its start. Every input thus starts from the same state and a crash
// reproduces from its input file alone.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commands/context.h"
#include "commands/dispatcher.h"
#include "commands/families.h"
#include "commands/server_state.h"
#include "common/clock.h"
#include "common/log.h"
#include "persistence/rdb_service.h"
#include "resp/reply_writer.h"
#include "scripting/eval_commands.h"
#include "scripting/script_engine.h"

namespace keywarden::fuzzing {

// Busy-handler calls (100k Lua instructions each) before a script is stopped.
inline constexpr int kScriptHookBudget = 20;

// One client: its session, and everything written to it (replies and pub/sub messages).
class FuzzClient final : public Subscriber {
 public:
  explicit FuzzClient(uint64_t id) {
    session.id = id;
    session.authenticated = true;
    session.subscriber = this;
  }
  ReplyWriter* pubsub_writer() override {
    writer_.set_resp(session.resp);
    return &writer_;
  }

  ClientSession session;
  std::string output;

 private:
  ReplyWriter writer_{&output};
};

class FuzzServer {
  // Declared first so that it outlives the command table pointing into it.
  std::vector<std::unique_ptr<CommandSpec>> neutered_;

 public:
  static constexpr int64_t kStartWallMs = 1'700'000'000'000;

  explicit FuzzServer(int client_count = 1)
      : clock(kStartWallMs),
        state(clock, 16),
        dispatcher(state),
        rdb(state),
        client_count_(client_count) {
    register_data_commands(state.commands());
    register_persistence_commands(state.commands());
    register_eval_commands(state.commands());
    rdb.settings().save_points.clear();
    // SAVE and BGSAVE write files (BGSAVE forks): they answer an error instead, from commands,
    // scripts and AOF replays alike.
    neuter("save");
    neuter("bgsave");
    // PFSELFTEST adds ten million elements: seconds of work under ASan, a fuzzer timeout.
    neuter("pfselftest");
    engine = std::make_unique<ScriptEngine>(state);
    engine->busy_reply_threshold_ms = 0;
    engine->set_busy_handler([this] {
      if (++hook_calls_ >= kScriptHookBudget) engine->abort();
    });
    add_clients();
  }
  ~FuzzServer() { drop_clients(); }
  FuzzServer(const FuzzServer&) = delete;
  FuzzServer& operator=(const FuzzServer&) = delete;

  // Back to the state of a new FuzzServer (see the header comment).
  void reset() {
    drop_clients();
    add_clients();
    for (int i = 0; i < state.keyspace().database_count(); ++i) state.keyspace().db(i).clear(false);
    if (scripting_used_ || engine->cached_scripts() > 0 || engine->library_count() > 0) {
      engine->flush();
      engine->function_flush();
      scripting_used_ = false;
    }
    state.set_busy_reply({});
    clock.set_wall_ms(kStartWallMs);
  }
  // Callers that run commands without execute() (the AOF loader) say when scripts may have run.
  void mark_scripting_used() { scripting_used_ = true; }

  // Runs one command as `client`, then what the server runs after every command: the
  // commands of clients whose keys became ready. Replies are appended to the clients' output.
  void execute(FuzzClient& client, std::span<const std::string_view> args) {
    hook_calls_ = 0;
    if (!args.empty()) {
      const Command* command = state.commands().find(args[0]);
      if (command != nullptr && (command->spec->acl_categories & kAclScripting) != 0) {
        scripting_used_ = true;
      }
    }
    ReplyWriter writer(&client.output, client.session.resp);
    dispatcher.execute(client.session, args, writer);
    dispatcher.serve_ready_keys([this](ClientSession& waiter) {
      FuzzClient& owner = owner_of(waiter);
      ReplyWriter waiter_writer(&owner.output, waiter.resp);
      dispatcher.retry_blocked(waiter, waiter_writer);
    });
  }
  // Gives every blocked client whose deadline has passed its timeout reply.
  void time_out_blocked() {
    for (ClientSession* waiter : state.blocking().timed_out(clock.wall_ms())) {
      FuzzClient& owner = owner_of(*waiter);
      ReplyWriter writer(&owner.output, waiter->resp);
      dispatcher.end_blocked(*waiter, writer);
    }
  }
  // Ends a client's wait as if its deadline had passed (a client cannot send while blocked).
  void unblock(FuzzClient& client) {
    if (!client.session.blocked.blocked()) return;
    ReplyWriter writer(&client.output, client.session.resp);
    dispatcher.end_blocked(client.session, writer);
  }

  // Makes `name` reply an error instead of running (kept in the table: the generic checks and
  // COMMAND still see it).
  void neuter(std::string_view name) {
    Command* command = state.commands().find(name);
    if (command == nullptr) return;
    neutered_.push_back(std::make_unique<CommandSpec>(*command->spec));
    neutered_.back()->handler = [](CommandContext& ctx) {
      ctx.error("ERR command disabled in the fuzz target");
    };
    command->spec = neutered_.back().get();
  }

  FuzzClient& owner_of(const ClientSession& session) {
    for (auto& client : clients) {
      if (&client->session == &session) return *client;
    }
    __builtin_trap();  // a session the server does not know
  }

  ManualClock clock;
  ServerState state;
  Dispatcher dispatcher;
  RdbService rdb;
  std::unique_ptr<ScriptEngine> engine;
  std::vector<std::unique_ptr<FuzzClient>> clients;

 private:
  void add_clients() {
    for (int i = 0; i < client_count_; ++i) {
      clients.push_back(std::make_unique<FuzzClient>(static_cast<uint64_t>(i + 1)));
    }
  }
  // As a closed connection leaves: unblocked, unsubscribed (its transaction unwatches itself).
  void drop_clients() {
    for (auto& client : clients) {
      state.blocking().unblock(client->session);
      state.pubsub().unsubscribe_all(client.get());
    }
    clients.clear();
  }

  int client_count_;
  int hook_calls_ = 0;
  bool scripting_used_ = false;
};

// Sends the server's log to /dev/null: the targets provoke every warning there is.
inline void silence_log() {
  set_log_level(LogLevel::kWarning);
  set_log_file("/dev/null");
}

}  // namespace keywarden::fuzzing
