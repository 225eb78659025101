// Runs one command for one client: looks it up in the table, applies the generic checks in
// Redis 7's order (unknown command or subcommand, arity, protected commands, authentication),
// calls the handler with a fresh time snapshot, updates the per-command counters and flushes
// the execution's effects to the propagation path.
//
// It knows nothing of sockets: the caller passes a session and a reply writer, so the same
// path serves network clients and dispatcher-level tests.
#pragma once

#include <functional>
#include <span>
#include <string_view>

#include "commands/client_session.h"
#include "commands/server_state.h"
#include "resp/reply_writer.h"

namespace keywarden {

class Dispatcher {
 public:
  // Makes itself the state's dispatcher (ServiceRegistry), for EXEC and scripts.
  explicit Dispatcher(ServerState& server);

  // Returns how long the handler ran, in microseconds (0 when the command was refused), for
  // the slow log and latency monitor.
  int64_t execute(ClientSession& session, std::span<const std::string_view> args,
                  ReplyWriter& reply) {
    return execute(session, args, reply, server_.commands().find_for_args(args));
  }
  // The same with the command already looked up (CommandTable::find_for_args; null when
  // unknown), for callers that needed it before execution.
  int64_t execute(ClientSession& session, std::span<const std::string_view> args,
                  ReplyWriter& reply, Command* command);

  ServerState& server() { return server_; }

  // Runs a command on behalf of a script (redis.call) or a transaction: no checks (the caller
  // made them), the caller's time snapshot, counted like any command, effects left pending
  // for the caller's batch. Returns how long the handler ran, in microseconds.
  int64_t execute_nested(ClientSession& session, std::span<const std::string_view> args,
                         ReplyWriter& reply, const Command& command, int64_t now_ms);
  // Runs one command queued by MULTI, for EXEC: no checks (they ran when it was queued), the
  // EXEC's time snapshot, counted like any command, effects left pending for EXEC's batch,
  // reported to the nested observer.
  void execute_queued(ClientSession& session, QueuedCommand& queued, ReplyWriter& reply,
                      int64_t now_ms);

  // Commands that ran inside another one (EXEC's queue, a script's redis.call) are reported
  // here once they ran, as Redis's call() reports every command it runs, nested or not: the
  // server layer shows them to the slow log, the latency monitor and MONITOR. Internal calls
  // (persistence running FUNCTION DUMP/LOAD) are not reported.
  using NestedObserver =
      std::function<void(const ClientSession& session, std::span<const std::string_view> args,
                         const Command& command, int64_t duration_us)>;
  void set_nested_observer(NestedObserver observer) { nested_observer_ = std::move(observer); }
  void report_nested(const ClientSession& session, std::span<const std::string_view> args,
                     const Command& command, int64_t duration_us) const {
    if (nested_observer_) nested_observer_(session, args, command, duration_us);
  }

  // Blocked clients (see blocking.h). After a command, while writes have made keys ready,
  // calls `rerun` for each waiter, oldest first, whose key now holds the type it waits for;
  // `rerun` is expected to call retry_blocked with that client's reply writer.
  void serve_ready_keys(const std::function<void(ClientSession&)>& rerun);
  // Runs a blocked client's command again; true when it was served (and is unblocked), false
  // when it blocked again.
  bool retry_blocked(ClientSession& session, ReplyWriter& reply);
  // Ends a blocked client's wait with the timeout reply, a null array (deadline passed, CLIENT
  // UNBLOCK … TIMEOUT), or with `error` (CLIENT UNBLOCK … ERROR).
  void end_blocked(ClientSession& session, ReplyWriter& reply, std::string_view error = {});

 private:
  // Replies with an error for a command refused before it ran.
  void reject(Command* command, ReplyWriter& reply, std::string_view text);
  // The same for a client's command, which also aborts the client's transaction if it is in
  // MULTI (an EXEC refused there ends it at once with EXECABORT).
  void refuse(ClientSession& session, Command* command, ReplyWriter& reply,
              std::string_view text);

  // maxmemory: evicts as the policy says and refuses a command that may not run while memory
  // stays over the limit (-OOM). False when refused.
  bool admit_under_maxmemory(ClientSession& session, Command* command,
                             std::span<const std::string_view> args, ReplyWriter& reply);

  static void count_call(const Command& command, int64_t elapsed_us, bool failed);

  ServerState& server_;
  NestedObserver nested_observer_;
};

}  // namespace keywarden
