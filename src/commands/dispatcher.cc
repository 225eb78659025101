#include "commands/dispatcher.h"

#include <string>
#include <vector>

#include "commands/context.h"
#include "commands/errors.h"

namespace keywarden {


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
  if (command != nullptr && command->has(kExecutesQueue)) {
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

std::string Dispatcher::check(ClientSession& session, Command* command,
                              std::span<const std::string_view> args, bool* postponed) {
  // Unknown command or subcommand.
  if (command == nullptr) {
    Command* base = server_.commands().find(args[0]);
    if (base != nullptr && base->is_container()) {
      return errors::unknown_subcommand(args[0], args[1]);
    }
    return errors::unknown_command(args[0], args.data() + 1, args.size() - 1);
  }
  // Arity.
  const int arity = command->spec->arity;
  const int argc = static_cast<int>(args.size());
  if ((arity > 0 && arity != argc) || argc < -arity) {
    return errors::wrong_arity(command->full_name);
  }
  // Protected commands (enable-debug-command).
  if (command->has(kProtected)) {
    const int access = server_.settings().enable_debug_command;
    if (access == kDebugCommandNo || (access == kDebugCommandLocal && !session.is_local)) {
      return std::string(errors::kDebugDisabled);
    }
  }
  // Authentication: needed while the default user has a password (or is off).
  if (!session.authenticated && !server_.acl().default_user_open() && !command->has(kNoAuth)) {
    return std::string(errors::kNoAuth);
  }
  const bool in_multi = session.transaction.in_multi();
  if (in_multi && command->has(kNoMulti)) return std::string(errors::kNotAllowedInMulti);

  // ACL: the command, its keys (found through the key specifications), its channels. A user
  // allowed everything (the default user, usually) costs one test.
  if (session.user != nullptr && !session.user->unrestricted()) {
    const AclVerdict verdict = server_.acl().check(*session.user, *command, args);
    if (!verdict.allowed()) return acl_refusal(session, *command, args, verdict);
  }

  // maxmemory. With no maxmemory this is the whole cost: one comparison.
  // What the server must apply (a primary's stream, the AOF) evicts but is never refused.
  if (server_.eviction().enabled() && !admit_under_maxmemory(session, command, args) &&
      !session.must_obey) {
    return std::string(errors::kOom);
  }
  // The dataset cannot be persisted (-MISCONF): writes are refused, and PING so that health
  // checks notice. What must be obeyed is applied regardless.
  if (!server_.write_refusal().empty() && !session.must_obey &&
      (command->has(kRefusedOnDiskError) ||
       (effective_flags(session, *command, args, kWrite) & kWrite) != 0)) {
    return std::string(server_.write_refusal());
  }
  // Replication: -NOREPLICAS for a write while fewer good replicas than min-replicas-to-write
  // are connected, then -READONLY for a write on a read-only replica (not from its primary).
  const ReplicationRole& role = server_.replication();
  if ((role.replica || role.min_replicas_to_write != 0) && !session.must_obey) {
    const bool write = (effective_flags(session, *command, args, kWrite) & kWrite) != 0;
    if (write && role.too_few_replicas()) return std::string(errors::kNoReplicas);
    if (write && role.replica && role.read_only && !session.primary_link) {
      return std::string(errors::kReadOnlyReplica);
    }
  }

  // RESP3 delivers messages as push frames, so a subscribed RESP3 client may run anything.
  if (session.resp == 2 && session.subscribed() && !command->has(kSubscribedContext)) {
    std::string text(errors::kSubscribedModePrefix);
    text += command->full_name;
    text += errors::kSubscribedModeSuffix;
    return text;
  }
  // Replication again: -MASTERDOWN on a replica cut from its primary with
  // replica-serve-stale-data no, for a command without the stale flag (EXEC: when a queued one
  // lacks it).
  if (role.replica && !role.link_up && !role.serve_stale_data && !session.primary_link &&
      (!command->has(kStale) || queued_without(session, *command, kStale))) {
    return std::string(errors::kMasterDown);
  }

  // Loading the dataset at start-up. EXEC also when a queued command lacks the loading flag.
  if (server_.loading() && !session.must_obey &&
      (!command->has(kLoading) || queued_without(session, *command, kLoading))) {
    return std::string(errors::kLoading);
  }
  // A script running past busy-reply-threshold.
  if (!server_.busy_reply().empty() && !command->has(kAllowBusy)) {
    return std::string(server_.busy_reply());
  }
  // A replica's own connection may not touch the keyspace (it is never paused, below).
  if (session.replica && (command->has(kWrite) || command->has(kReadonly) ||
                          command->has(kMayReplicate))) {
    return std::string(errors::kReplicaKeyspace);
  }

  // CLIENT PAUSE holds the command back: every command under a pause of ALL; under WRITE
  // those that may write or replicate, judged by a script's declared flags and, for EXEC, by
  // what the transaction queued.
  const ClientPause& pause = server_.client_pause();
  if (pause.active() && !session.must_obey && !session.replica) {
    constexpr uint32_t kMayWrite = kWrite | kMayReplicate;
    if (!pause.write_only() || (effective_flags(session, *command, args, kMayWrite) != 0)) {
      *postponed = true;
    }
  }
  return {};
}

std::string Dispatcher::acl_refusal(ClientSession& session, const Command& command,
                                    std::span<const std::string_view> args,
                                    const AclVerdict& verdict) {
  // The log keeps the client's CLIENT LIST line showing the denied command, as Redis (whose
  // lookup sets the client's last command before any check) shows it.
  session.last_command = &command;
  const std::string_view object =
      verdict.denial == AclDenial::kCommand ? std::string_view(command.full_name)
                                            : args[static_cast<size_t>(verdict.position)];
  server_.acl().log(session, &command, verdict.denial, session.transaction.in_multi() ? "multi" : "toplevel",
                    object, session.user->name, server_.clock().wall_ms());
  if (verdict.denial == AclDenial::kKey) return std::string(errors::kNoPermKeys);
  if (verdict.denial == AclDenial::kChannel) return std::string(errors::kNoPermChannels);
  return errors::no_permission_to_run(command.full_name);
}

uint32_t Dispatcher::effective_flags(const ClientSession& session, const Command& command,
                                     std::span<const std::string_view> args, uint32_t mask) const {
  uint32_t flags = server_.command_flags(command, args) & mask;
  if (flags == 0 && command.has(kExecutesQueue) && session.transaction.in_multi()) {
    for (const QueuedCommand& queued : session.transaction.queue()) {
      flags |= server_.command_flags(*queued.command, queued.views()) & mask;
      if (flags != 0) break;
    }
  }
  return flags;
}

bool Dispatcher::queued_without(const ClientSession& session, const Command& command,
                                uint32_t mask) {
  if (!command.has(kExecutesQueue) || !session.transaction.in_multi()) return false;
  for (const QueuedCommand& queued : session.transaction.queue()) {
    if (!queued.command->has(mask)) return true;
  }
  return false;
}

namespace {

// CLIENT CACHING YES|NO applies to the next command only: any command but a CLIENT one ends
// it, outside MULTI (Redis's resetClient; CLIENT CACHING itself sets it).
class CachingFlagReset {
 public:
  CachingFlagReset(ClientSession& session, const Command* command)
      : session_(session), command_(command) {}
  ~CachingFlagReset() {
    if (!session_.tracking.caching || session_.transaction.in_multi()) return;
    const Command* top = command_;
    while (top != nullptr && top->parent != nullptr) top = top->parent;
    if (top == nullptr || top->spec->name != "client") session_.tracking.caching = false;
  }

 private:
  ClientSession& session_;
  const Command* command_;
};

}  // namespace

ExecutionResult Dispatcher::execute(ClientSession& session, std::span<const std::string_view> args,
                                    ReplyWriter& reply, Command* command,
                                    const ClockReading* started_at, OwnedArguments owned) {
  ExecutionResult result;
  CachingFlagReset caching_reset(session, command);
  bool postponed = false;
  if (std::string refusal = check(session, command, args, &postponed); !refusal.empty()) {
    refuse(session, command, reply, refusal);
    return result;
  }
  if (postponed) {
    session.last_command = command;  // CLIENT LIST cmd= shows what is held, as in Redis
    result.outcome = ExecutionResult::Outcome::kPostponed;
    return result;
  }
  if (session.transaction.in_multi() && !command->has(kRunsInMulti)) {
    session.transaction.queue(command, args, owned);
    session.last_command = command;
    reply.simple_string("QUEUED");
    result.outcome = ExecutionResult::Outcome::kQueued;
    return result;
  }

  const Clock& clock = server_.clock();
  const ClockReading start = started_at != nullptr ? *started_at : clock.read();
  const int64_t start_us = start.monotonic_us;
  const uint64_t dirty_before = server_.stats().dirty;
  CommandContext context(server_, session, reply, args, *command, start.wall_ms);
  context.owned_arguments = owned;
  session.last_command = command;  // CLIENT LIST cmd= while it runs (EXEC's queue included)
  KeyTracking& tracking = server_.tracking();
  ClientSession* const outer_client = tracking.begin_command(session);
  command->spec->handler(context);
  // One reading for the end of this command and, through finished_at, the start of the next.
  result.finished_at = clock.read();
  const int64_t elapsed_us = result.finished_at.monotonic_us - start_us;
  context.finish_effects();
  if (tracking.active()) tracking.remember(*command, args);
  // Invalidations for this client itself go after its reply.
  tracking.end_command(outer_client);

  // A command that blocked is counted when its client is served or times out, as in Redis.
  if (!session.blocked.blocked()) count_call(*command, elapsed_us, context.failed());
  ++server_.stats().total_commands_processed;
  session.last_command = command;
  server_.propagator().flush();
  // Where the replication stream stood after the client's latest command (Redis's woff): what
  // WAIT waits for replicas to acknowledge.
  session.write_offset = server_.replication().offset;
  result.outcome = session.blocked.blocked() ? ExecutionResult::Outcome::kBlocked
                                             : ExecutionResult::Outcome::kRan;
  result.duration_us = elapsed_us;
  // A save run by the command (SAVE, FLUSHALL) starts the count again, as Redis's call()
  // counts no negative change.
  const uint64_t dirty_after = server_.stats().dirty;
  result.dirty = dirty_after > dirty_before ? dirty_after - dirty_before : 0;
  return result;
}

bool Dispatcher::admit_under_maxmemory(ClientSession& session, Command* command,
                                       std::span<const std::string_view> args) {
  // Not while a busy script lets other clients in: its effects must not mix with the DELs.
  if (!server_.busy_reply().empty()) return true;
  const bool in_multi = session.transaction.in_multi();
  Evictor& evictor = server_.eviction();
  const bool out_of_memory = evictor.perform() == Evictor::Result::kFail;
  if (out_of_memory) {
    // Queueing can take unbounded memory, so inside MULTI everything but what ends the
    // transaction is refused; EXEC only when a queued command is denyoom.
    bool refused = in_multi && !command->has(kEndsMulti);
    if (!refused) refused = evictor.denies_oom(*command, args, session);
    if (refused) return false;
  }
  // A script judges its first write by the memory state when it started (so does EXEC for
  // the scripts it runs), not by what its own Lua stack has used since.
  if (command->has(kRunsScripts)) evictor.set_script_oom(out_of_memory);
  return true;
}

void Dispatcher::execute_queued(ClientSession& session, QueuedCommand& queued,
                                ReplyWriter& reply, int64_t now_ms) {
  const std::vector<std::string_view> args = queued.views();
  const int64_t elapsed_us =
      execute_nested(session, args, reply, *queued.command, now_ms, queued.owned);
  report_nested(session, args, *queued.command, elapsed_us);
}

int64_t Dispatcher::execute_nested(ClientSession& session, std::span<const std::string_view> args,
                                   ReplyWriter& reply, const Command& command, int64_t now_ms,
                                   OwnedArguments owned) {
  const Clock& clock = server_.clock();
  const int64_t start_us = clock.monotonic_us();
  CommandContext context(server_, session, reply, args, command, now_ms);
  context.owned_arguments = owned;
  command.spec->handler(context);
  const int64_t elapsed_us = clock.monotonic_us() - start_us;
  // Into the caller's batch: flushed (and wrapped in MULTI/EXEC) when the caller ends.
  context.finish_effects();
  // The keys a script or a transaction reads count for the client that runs it.
  if (server_.tracking().active()) server_.tracking().remember(command, args);
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
        if (!waiter->blocked.blocked()) continue;
        if (!waiter->blocked.wakes_on_any_change()) {
          Entry* entry = db.find_raw(ready.key);
          if (entry == nullptr || db.is_expired(entry, server_.clock().wall_ms())) continue;
          if (entry->value.type() != waiter->blocked.type()) continue;
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
  if (error.empty() && blocked.reply_on_timeout()) {
    blocked.set_timing_out(true);
    retry_blocked(session, reply);
    return;
  }
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
