// Runs one command for one client: looks it up in the table, applies the generic checks in
// Redis 7's order (unknown command or subcommand, arity, protected commands, authentication),
// calls the handler with a fresh time snapshot, updates the per-command counters and flushes
// the execution's effects to the propagation path.
//
// It knows nothing of sockets: the caller passes a session and a reply writer, so the same
// path serves network clients and dispatcher-level tests.
#pragma once

#include <span>
#include <string_view>

#include "commands/client_session.h"
#include "commands/server_state.h"
#include "resp/reply_writer.h"

namespace keywarden {

class Dispatcher {
 public:
  explicit Dispatcher(ServerState& server) : server_(server) {}

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

 private:
  // Replies with an error for a command refused before it ran.
  void reject(Command* command, ReplyWriter& reply, std::string_view text);

  ServerState& server_;
};

}  // namespace keywarden
