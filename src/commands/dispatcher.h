// Runs one command for one client: looks it up in the table, applies every generic check in
// the order of Redis 7.0's processCommand, by the command's flags (never by its name), then
// queues it inside MULTI or calls the handler with a fresh time snapshot, updates the
// per-command counters and flushes the execution's effects to the propagation path. It says
// what happened (ExecutionResult): the caller needs no other way to tell a command that ran
// from one refused, queued or held back.
//
// The checks, in order (the first that applies answers):
//   unknown command or subcommand; arity; protected (enable-debug-command); authentication
//   (-NOAUTH); no-multi inside MULTI; ACL (-NOPERM, logged in the ACL log); maxmemory (-OOM);
//   -MISCONF (the RDB or the AOF cannot persist); [-NOREPLICAS, -READONLY on a replica: replication,
//   to come]; the RESP2 subscribed context; [-MASTERDOWN: replication, to come]; -LOADING;
//   -BUSY; [a replica's connection may not touch the keyspace: replication, to come];
//   CLIENT PAUSE (postponed, not refused); then MULTI queueing or the call.
// Errors before the handler runs count as rejected calls, and inside MULTI they abort the
// transaction (EXEC itself refused ends it with -EXECABORT), as Redis's rejectCommand.
//
// It knows nothing of sockets: the caller passes a session and a reply writer, so the same
// path serves network clients and dispatcher-level tests.
#pragma once

#include <functional>
#include <span>
#include <string_view>

#include "commands/client_session.h"
#include "commands/server_state.h"
#include "common/string_block.h"
#include "resp/reply_writer.h"

namespace keywarden {

// What Dispatcher::execute did with a command.
struct ExecutionResult {
  enum class Outcome : uint8_t {
    kRan,        // the handler ran and replied
    kRejected,   // refused by a generic check, with an error reply; the handler did not run
    kQueued,     // queued inside MULTI (+QUEUED)
    kBlocked,    // the handler ran and blocked the client on keys (no reply yet)
    kPostponed,  // held back by CLIENT PAUSE: nothing ran, nothing was replied; the caller
                 // offers the same command again once the pause ends
  };
  Outcome outcome = Outcome::kRejected;
  // How long the handler ran, in microseconds (0 when it did not), for the slow log and the
  // latency monitor.
  int64_t duration_us = 0;
  // Changes to the dataset the command made (what it added to INFO rdb_changes_since_last_save).
  uint64_t dirty = 0;
  // The clock as the handler returned (zero when it did not run): a caller that runs another
  // command straight away may pass it as that command's start, saving a clock read per command.
  ClockReading finished_at{0, 0};

  // The handler ran (and the command counts as processed), blocking or not.
  bool ran() const { return outcome == Outcome::kRan || outcome == Outcome::kBlocked; }
};

class Dispatcher {
 public:
  // Makes itself the state's dispatcher (ServiceRegistry), for EXEC and scripts.
  explicit Dispatcher(ServerState& server);

  ExecutionResult execute(ClientSession& session, std::span<const std::string_view> args,
                          ReplyWriter& reply) {
    return execute(session, args, reply, server_.commands().find_for_args(args));
  }
  // The same with the command already looked up (CommandTable::find_for_args; null when
  // unknown), for callers that needed it before execution. `started_at`, when given, is a
  // reading the caller took just before (the end of its previous command, or its socket read):
  // the command's time snapshot and the start of its duration, instead of a fresh reading.
  // `owned`: arguments whose blocks the command may take (CommandContext::take_argument);
  // a command queued by MULTI copies its arguments and takes none.
  ExecutionResult execute(ClientSession& session, std::span<const std::string_view> args,
                          ReplyWriter& reply, Command* command,
                          const ClockReading* started_at = nullptr, OwnedArguments owned = {});

  ServerState& server() { return server_; }

  // Runs a command on behalf of a script (redis.call) or a transaction: no checks (the caller
  // made them), the caller's time snapshot, counted like any command, effects left pending
  // for the caller's batch. Returns how long the handler ran, in microseconds. `owned`: the
  // arguments held in blocks the command may keep (a queued big argument), as for execute().
  int64_t execute_nested(ClientSession& session, std::span<const std::string_view> args,
                         ReplyWriter& reply, const Command& command, int64_t now_ms,
                         OwnedArguments owned = {});
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

  // The generic checks, in order; the error text of the first that refuses the command, or
  // "" when it may go on. Sets *postponed instead when CLIENT PAUSE holds it back.
  std::string check(ClientSession& session, Command* command,
                    std::span<const std::string_view> args, bool* postponed);

  // An ACL denial: logged, and the -NOPERM text for it.
  std::string acl_refusal(ClientSession& session, const Command& command,
                          std::span<const std::string_view> args, const AclVerdict& verdict);

  // maxmemory: evicts as the policy says and refuses a command that may not run while memory
  // stays over the limit (-OOM). False when refused.
  bool admit_under_maxmemory(ClientSession& session, Command* command,
                             std::span<const std::string_view> args);

  // The command's flags for its arguments (a script's declared ones, see
  // ServerState::command_flags), and for EXEC, those any queued command has in `mask`.
  uint32_t effective_flags(const ClientSession& session, const Command& command,
                           std::span<const std::string_view> args, uint32_t mask) const;
  // For EXEC: whether some queued command lacks every flag of `mask` (Redis's cmd_inv_flags).
  static bool queued_without(const ClientSession& session, const Command& command, uint32_t mask);

  static void count_call(const Command& command, int64_t elapsed_us, bool failed);

  ServerState& server_;
  NestedObserver nested_observer_;
};

}  // namespace keywarden
