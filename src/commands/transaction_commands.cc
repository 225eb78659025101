// The transaction family: MULTI, EXEC, DISCARD, WATCH, UNWATCH (Redis 7.0's multi.c).
// Queueing itself happens in the dispatcher, which sees every command first; these handlers
// open, run and drop the queue and manage the watched keys (state in transactions.h).
#include <string>
#include <vector>

#include "commands/context.h"
#include "commands/dispatcher.h"
#include "commands/errors.h"

namespace keywarden {
namespace {

void multi_command(CommandContext& ctx) {
  ClientTransaction& transaction = ctx.session.transaction;
  if (transaction.in_multi()) {
    ctx.error(errors::kMultiNested);
    return;
  }
  transaction.begin();
  ctx.reply.simple_string("OK");
}

void discard_command(CommandContext& ctx) {
  ClientTransaction& transaction = ctx.session.transaction;
  if (!transaction.in_multi()) {
    ctx.error(errors::kDiscardWithoutMulti);
    return;
  }
  transaction.discard();
  ctx.reply.simple_string("OK");
}

// EXEC's second ACL check of a queued command: "" when still allowed, else Redis's error (and
// an ACL LOG entry in the multi context).
std::string acl_recheck(CommandContext& ctx, const QueuedCommand& queued) {
  const std::shared_ptr<AclUser>& user = ctx.session.user;
  if (user == nullptr || user->unrestricted()) return {};
  const std::vector<std::string_view> args = queued.views();
  AclStore& acl = ctx.server.acl();
  const AclVerdict verdict = acl.check(*user, *queued.command, args);
  if (verdict.allowed()) return {};
  std::string_view reason = "no permission to execute the command or subcommand";
  std::string_view object = queued.command->full_name;
  if (verdict.denial == AclDenial::kKey) {
    reason = "no permission to touch the specified keys";
  } else if (verdict.denial == AclDenial::kChannel) {
    reason = "no permission to access one of the channels used as arguments";
  }
  if (verdict.denial != AclDenial::kCommand) object = args[static_cast<size_t>(verdict.position)];
  acl.log(ctx.session, &ctx.command, verdict.denial, "multi", object, user->name, ctx.now_ms);
  return "NOPERM ACLs rules changed between the moment the transaction was accumulated and the "
         "EXEC call. This command is no longer allowed for the following reason: " +
         std::string(reason);
}

void exec_command(CommandContext& ctx) {
  ClientTransaction& transaction = ctx.session.transaction;
  if (!transaction.in_multi()) {
    ctx.error(errors::kExecWithoutMulti);
    return;
  }
  // A key watched while alive that has expired since counts as changed, even if nothing
  // deleted it yet.
  const bool expired = transaction.watched_key_expired(ctx.server.keyspace(), ctx.now_ms);
  if (transaction.dirty_exec()) {
    transaction.discard();
    ctx.error(errors::kExecAbort);
    return;
  }
  if (transaction.dirty_cas() || expired) {
    transaction.discard();
    ctx.reply.null_array();
    return;
  }

  // Unwatch first: the transaction's own writes must not touch it. The client stays in MULTI
  // while its queue runs (CLIENT LIST inside shows flags=x), as in Redis.
  transaction.unwatch_all();
  Dispatcher& dispatcher = ctx.service<Dispatcher>();
  std::vector<QueuedCommand>& queue = transaction.queue();
  ctx.reply.array_header(queue.size());
  // Every command sees the EXEC's instant, as Redis freezes time for a transaction. No queued
  // command can edit the queue (MULTI, EXEC, DISCARD, WATCH, RESET are never queued).
  for (size_t i = 0; i < queue.size(); ++i) {
    // The rules may have changed since the command was queued (ACL SETUSER from another
    // client): Redis checks each command again and answers an error in its place.
    if (std::string refusal = acl_recheck(ctx, queue[i]); !refusal.empty()) {
      ctx.server.count_error(refusal);
      ctx.reply.error(refusal);
      continue;
    }
    dispatcher.execute_queued(ctx.session, queue[i], ctx.reply, ctx.now_ms);
  }
  transaction.discard();
  ctx.server.propagator().wrap_pending_in_transaction();
}

void watch_command(CommandContext& ctx) {
  ClientTransaction& transaction = ctx.session.transaction;
  if (transaction.in_multi()) {
    ctx.error(errors::kWatchInsideMulti);
    return;
  }
  // Already doomed: watching more changes nothing.
  if (!transaction.dirty_cas()) {
    Database& db = ctx.db();
    for (size_t i = 1; i < ctx.args.size(); ++i) {
      Entry* entry = db.find_raw(ctx.args[i]);
      const bool expired_now = entry != nullptr && db.is_expired(entry, ctx.now_ms);
      transaction.watch(ctx.server.watches(), ctx.session.db, ctx.args[i], expired_now);
    }
  }
  ctx.reply.simple_string("OK");
}

void unwatch_command(CommandContext& ctx) {
  ClientTransaction& transaction = ctx.session.transaction;
  transaction.unwatch_all();
  transaction.clear_dirty_cas();
  ctx.reply.simple_string("OK");
}

// --- Table ---------------------------------------------------------------------------------

constexpr uint32_t kTransactionFlags = kNoScript | kLoading | kStale;

constexpr CommandSpec kTransactionCommands[] = {
    {"multi", 1, kTransactionFlags | kFast | kAllowBusy | kRunsInMulti, 0, 0, 0, kAclTransaction,
     multi_command, "transactions", "1.2.0", "Mark the start of a transaction block", "O(1)"},
    {"exec", 1,
     kTransactionFlags | kSkipSlowlog | kRunsInMulti | kEndsMulti | kExecutesQueue | kRunsScripts,
     0, 0, 0, kAclTransaction, exec_command,
     "transactions", "1.2.0", "Execute all commands issued after MULTI",
     "Depends on commands in the transaction"},
    {"discard", 1, kTransactionFlags | kFast | kAllowBusy | kRunsInMulti | kEndsMulti, 0, 0, 0,
     kAclTransaction, discard_command, "transactions", "2.0.0",
     "Discard all commands issued after MULTI", "O(N), when N is the number of queued commands"},
    {"watch", -2, kTransactionFlags | kFast | kAllowBusy | kRunsInMulti, 1, -1, 1, kAclTransaction,
     watch_command, "transactions", "2.2.0",
     "Watch the given keys to determine execution of the MULTI/EXEC block",
     "O(1) for every key."},
    {"unwatch", 1, kTransactionFlags | kFast | kAllowBusy, 0, 0, 0, kAclTransaction,
     unwatch_command, "transactions", "2.2.0", "Forget about all watched keys", "O(1)"},
};

}  // namespace

void register_transaction_commands(CommandTable& table) { table.add(kTransactionCommands); }

}  // namespace keywarden
