#include "commands/dispatcher.h"

#include <string>
#include <vector>

#include "commands/context.h"
#include "commands/errors.h"

namespace keywarden {

namespace {

bool is_command(const Command* command, std::string_view name) {
  return command != nullptr && command->parent == nullptr && command->spec->name == name;
}

// Commands that act on the transaction itself run at once inside MULTI; all others queue.
bool runs_inside_multi(const Command& command) {
  if (command.parent != nullptr) return false;
  const std::string_view name = command.spec->name;
  return name == "exec" || name == "discard" || name == "multi" || name == "watch" ||
         name == "quit" || name == "reset";
}

// What a RESP2 client may run while subscribed (Redis's pub/sub context).
bool allowed_when_subscribed(const Command& command) {
  if (command.parent != nullptr) return false;
  const std::string_view name = command.spec->name;
  return name == "ping" || name == "subscribe" || name == "ssubscribe" || name == "unsubscribe" ||
         name == "sunsubscribe" || name == "psubscribe" || name == "punsubscribe" ||
         name == "quit" || name == "reset";
}

}  // namespace

Dispatcher::Dispatcher(ServerState& server) : server_(server) {
  server_.services().provide<Dispatcher>(this);
}

void Dispatcher::reject(Command* command, ReplyWriter& reply, std::string_view text) {
  if (command != nullptr) ++command->stats.rejected_calls;
  server_.count_error(text);
  reply.error(text);
}

void Dispatcher::refuse(ClientSession& session, Command* command, ReplyWriter& reply,
                        std::string_view text) {
  ClientTransaction& transaction = session.transaction;
  if (is_command(command, "exec")) {
    // Redis ends the transaction here rather than leave the client in MULTI with an EXEC
    // that can never succeed; it answers so (and unwatches) even outside MULTI.
    std::string abort(errors::kExecAbortBecause);
    abort += text.starts_with("ERR ") ? text.substr(4) : text;
    transaction.discard();
    reject(command, reply, abort);
    return;
  }
  transaction.flag_error();
  reject(command, reply, text);
}

int64_t Dispatcher::execute(ClientSession& session, std::span<const std::string_view> args,
                            ReplyWriter& reply, Command* command) {
  CommandTable& table = server_.commands();
  if (command == nullptr) {
    Command* base = table.find(args[0]);
    if (base != nullptr && base->is_container()) {
      refuse(session, nullptr, reply, errors::unknown_subcommand(args[0], args[1]));
    } else {
      refuse(session, nullptr, reply,
             errors::unknown_command(args[0], args.data() + 1, args.size() - 1));
    }
    return 0;
  }

  const int arity = command->spec->arity;
  const int argc = static_cast<int>(args.size());
  if ((arity > 0 && arity != argc) || argc < -arity) {
    refuse(session, command, reply, errors::wrong_arity(command->full_name));
    return 0;
  }
  if (command->has(kProtected)) {
    DebugCommandAccess access = server_.settings().enable_debug_command;
    if (access == DebugCommandAccess::kNo ||
        (access == DebugCommandAccess::kLocal && !session.is_local)) {
      refuse(session, command, reply, errors::kDebugDisabled);
      return 0;
    }
  }
  if (!session.authenticated && !server_.settings().requirepass.empty() &&
      !command->has(kNoAuth)) {
    refuse(session, command, reply, errors::kNoAuth);
    return 0;
  }
  // With no maxmemory this is the whole cost: one comparison.
  if (server_.eviction().enabled() && !admit_under_maxmemory(session, command, args, reply)) {
    return 0;
  }
  // RESP3 delivers messages as push frames, so a subscribed RESP3 client may run anything.
  if (session.resp == 2 && session.subscribed() && !allowed_when_subscribed(*command)) {
    std::string text(errors::kSubscribedModePrefix);
    text += command->full_name;
    text += errors::kSubscribedModeSuffix;
    refuse(session, command, reply, text);
    return 0;
  }
  if (!server_.busy_reply().empty() && !command->has(kAllowBusy)) {
    refuse(session, command, reply, server_.busy_reply());
    return 0;
  }
  if (!server_.write_refusal().empty() &&
      ((server_.command_flags(*command, args) & kWrite) != 0 || is_command(command, "ping"))) {
    refuse(session, command, reply, server_.write_refusal());
    return 0;
  }
  if (session.transaction.in_multi()) {
    if (command->has(kNoMulti)) {
      refuse(session, command, reply, errors::kNotAllowedInMulti);
      return 0;
    }
    if (!runs_inside_multi(*command)) {
      session.transaction.queue(command, args.data(), args.size());
      session.last_command = command;
      reply.simple_string("QUEUED");
      return 0;
    }
  }

  const Clock& clock = server_.clock();
  const ClockReading start = clock.read();
  const int64_t start_us = start.monotonic_us;
  CommandContext context(server_, session, reply, args, *command, start.wall_ms);
  session.last_command = command;  // CLIENT LIST cmd= while it runs (EXEC's queue included)
  command->spec->handler(context);
  const int64_t elapsed_us = clock.monotonic_us() - start_us;
  context.finish_effects();

  // A command that blocked is counted when its client is served or times out, as in Redis.
  if (!session.blocked.blocked()) count_call(*command, elapsed_us, context.failed());
  ++server_.stats().total_commands_processed;
  session.last_command = command;
  server_.propagator().flush();
  return elapsed_us;
}

bool Dispatcher::admit_under_maxmemory(ClientSession& session, Command* command,
                                       std::span<const std::string_view> args,
                                       ReplyWriter& reply) {
  // Not while a busy script lets other clients in: its effects must not mix with the DELs.
  if (!server_.busy_reply().empty()) return true;
  const bool in_multi = session.transaction.in_multi();
  // Refused for being in MULTI further on, before any memory check, as in Redis.
  if (in_multi && command->has(kNoMulti)) return true;
  Evictor& evictor = server_.eviction();
  const bool out_of_memory = evictor.perform() == Evictor::Result::kFail;
  if (out_of_memory) {
    // Queueing can take unbounded memory, so inside MULTI everything but what ends the
    // transaction is refused; EXEC only when a queued command is denyoom.
    bool refused = in_multi && !is_command(command, "exec") && !is_command(command, "discard") &&
                   !is_command(command, "quit") && !is_command(command, "reset");
    if (!refused) refused = evictor.denies_oom(*command, args, session);
    if (refused) {
      refuse(session, command, reply, errors::kOom);
      return false;
    }
  }
  if (command->parent == nullptr) {
    const std::string_view name = command->spec->name;
    // A script judges its first write by the memory state when it started (so does EXEC for
    // the scripts it runs), not by what its own Lua stack has used since.
    if (name.starts_with("eval") || name.starts_with("fcall") || name == "exec") {
      evictor.set_script_oom(out_of_memory);
    }
  }
  return true;
}

void Dispatcher::execute_queued(ClientSession& session, QueuedCommand& queued,
                                ReplyWriter& reply, int64_t now_ms) {
  std::vector<std::string_view> args(queued.args.begin(), queued.args.end());
  const int64_t elapsed_us = execute_nested(session, args, reply, *queued.command, now_ms);
  report_nested(session, args, *queued.command, elapsed_us);
}

int64_t Dispatcher::execute_nested(ClientSession& session, std::span<const std::string_view> args,
                                   ReplyWriter& reply, const Command& command, int64_t now_ms) {
  const Clock& clock = server_.clock();
  const int64_t start_us = clock.monotonic_us();
  CommandContext context(server_, session, reply, args, command, now_ms);
  command.spec->handler(context);
  const int64_t elapsed_us = clock.monotonic_us() - start_us;
  // Into the caller's batch: flushed (and wrapped in MULTI/EXEC) when the caller ends.
  context.finish_effects();
  count_call(command, elapsed_us, context.failed());
  ++server_.stats().total_commands_processed;
  return elapsed_us;
}

void Dispatcher::count_call(const Command& command, int64_t elapsed_us, bool failed) {
  ++command.stats.calls;
  command.stats.usec += static_cast<uint64_t>(elapsed_us);
  if (failed) ++command.stats.failed_calls;
}

void Dispatcher::serve_ready_keys(const std::function<void(ClientSession&)>& rerun) {
  BlockingRegistry& registry = server_.blocking();
  Keyspace& keyspace = server_.keyspace();
  while (registry.has_ready()) {
    for (const BlockingRegistry::ReadyKey& ready : registry.take_ready()) {
      Database& db = keyspace.db(ready.db);
      for (ClientSession* waiter : registry.waiters(ready.db, ready.key)) {
        // An earlier waiter may have emptied or replaced the key, or served this waiter
        // through another of its keys.
        Entry* entry = db.find_raw(ready.key);
        if (entry == nullptr || db.is_expired(entry, server_.clock().wall_ms())) break;
        if (!waiter->blocked.blocked() || entry->value.type() != waiter->blocked.type()) {
          continue;
        }
        waiter->blocked.set_serving_key(ready.key);
        rerun(*waiter);
        waiter->blocked.set_serving_key({});
      }
    }
  }
}

bool Dispatcher::retry_blocked(ClientSession& session, ReplyWriter& reply) {
  BlockedCommand& blocked = session.blocked;
  std::vector<std::string_view> args(blocked.args().begin(), blocked.args().end());
  const Command& command = *blocked.command();
  const Clock& clock = server_.clock();
  const ClockReading start = clock.read();
  CommandContext context(server_, session, reply, args, command, start.wall_ms);
  session.last_command = &command;
  command.spec->handler(context);
  const int64_t elapsed_us = clock.monotonic_us() - start.monotonic_us;
  context.finish_effects();
  server_.propagator().flush();
  if (context.blocked_again()) return false;
  server_.blocking().unblock(session);
  count_call(command, elapsed_us, context.failed());
  return true;
}

void Dispatcher::end_blocked(ClientSession& session, ReplyWriter& reply, std::string_view error) {
  BlockedCommand& blocked = session.blocked;
  if (!blocked.blocked()) return;
  const Command& command = *blocked.command();
  if (!error.empty()) {
    server_.count_error(error);
    reply.error(error);
  } else {
    // Every blocking command of Redis 7.0 times out with a null array, BLMOVE included.
    reply.null_array();
  }
  server_.blocking().unblock(session);
  count_call(command, 0, !error.empty());
}

}  // namespace keywarden
