// Native lock commands: LOCK.ACQUIRE, LOCK.RELEASE and LOCK.INFO, with a FIFO queue of
// waiters that the server serves itself (docs/locks.md).
//
// A lock is a Redisson lock hash: one field per owner id holding its hold count, the lease as
// the key's TTL. Script clients (Redisson, libkeywarden's Lua path) and native clients
// therefore contend on the same key: the lock is free exactly when the key does not exist,
// which is Redisson's test too.
//
// LOCK.ACQUIRE that finds the lock held by another owner parks the client in the
// BlockingRegistry under the lock's name, in arrival order, waking on any signal of the key
// (block_until_key_changes). Every path that removes a key signals it — DEL/UNLINK, the last
// HDEL, a script's DEL after HINCRBY to 0, RENAME/MOVE away, FLUSHDB/FLUSHALL, expiry (lazy or
// active) and eviction — and the server runs the waiters again, oldest first, right after the
// command (or the cron step) that freed it: the first one finds the key gone and takes the
// lock, the others find it held and stay queued. A script client, which polls, cannot take a
// freed lock before the queue's head, since nothing runs in between. For the same reason a new
// LOCK.ACQUIRE never overtakes the queue: while waiters are queued it queues behind them (or,
// not blocking, gets nil).
//
// Every grant propagates as HINCRBY name owner 1 + PEXPIREAT name <deadline>, a release as
// HINCRBY name owner -1, HDEL or DEL: the AOF and replicas see an ordinary hash, and a
// hand-off, which runs as the waiter's command, propagates the same way.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands/context.h"
#include "commands/dispatcher.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "common/ascii.h"
#include "common/number.h"
#include "types/hash_value.h"
#include "types/value.h"

namespace keywarden {
namespace {

constexpr std::string_view kAcquireName = "lock.acquire";

// LOCK.ACQUIRE name owner lease-ms [TIMEOUT ms] [BIND], parsed.
struct AcquireRequest {
  std::string_view name;
  std::string_view owner;
  int64_t lease_ms = 0;
  bool wait = false;         // TIMEOUT given: may block
  int64_t deadline_ms = 0;   // absolute; 0: no limit
  bool bind = false;
};

bool parse_acquire(CommandContext& ctx, AcquireRequest* request) {
  request->name = ctx.args[1];
  request->owner = ctx.args[2];
  if (!parse_int64(ctx.args[3], &request->lease_ms) || request->lease_ms <= 0) {
    ctx.error(errors::kLockLease);
    return false;
  }
  if (request->lease_ms > std::numeric_limits<int64_t>::max() - ctx.now_ms) {
    ctx.error(errors::kLockLeaseTooLong);
    return false;
  }
  for (size_t i = 4; i < ctx.args.size(); ++i) {
    const std::string_view option = ctx.args[i];
    if (equals_ignore_case(option, "timeout") && i + 1 < ctx.args.size()) {
      int64_t timeout_ms;
      if (!parse_int64(ctx.args[++i], &timeout_ms)) {
        ctx.error(errors::kTimeoutNotInteger);
        return false;
      }
      if (timeout_ms < 0) {
        ctx.error(errors::kTimeoutNegative);
        return false;
      }
      request->wait = true;
      // 0 waits without limit, as BLPOP's 0 does; a huge timeout saturates.
      request->deadline_ms = timeout_ms == 0 ? 0
                             : timeout_ms > std::numeric_limits<int64_t>::max() - ctx.now_ms
                                 ? std::numeric_limits<int64_t>::max()
                                 : ctx.now_ms + timeout_ms;
    } else if (equals_ignore_case(option, "bind")) {
      request->bind = true;
    } else {
      ctx.error(errors::kSyntax);
      return false;
    }
  }
  if (request->bind && ctx.session.script_client) {
    ctx.error(errors::kLockBindInScript);
    return false;
  }
  return true;
}

bool is_lock_waiter(const ClientSession* waiter) {
  return waiter->blocked.blocked() && waiter->blocked.wakes_on_any_change() &&
         waiter->blocked.command() != nullptr &&
         waiter->blocked.command()->full_name == kAcquireName;
}

// Queued LOCK.ACQUIRE clients on `name` in the current database, oldest first.
std::vector<ClientSession*> lock_waiters(CommandContext& ctx, std::string_view name) {
  std::vector<ClientSession*> waiters = ctx.server.blocking().waiters(ctx.session.db, name);
  std::erase_if(waiters, [](const ClientSession* waiter) { return !is_lock_waiter(waiter); });
  return waiters;
}

void remember_binding(CommandContext& ctx, const AcquireRequest& request) {
  std::vector<LockGrant>& bound = ctx.session.bound_locks;
  for (const LockGrant& grant : bound) {
    if (grant.db == ctx.session.db && grant.name == request.name &&
        grant.owner == request.owner) {
      return;
    }
  }
  bound.push_back({ctx.session.db, std::string(request.name), std::string(request.owner)});
}

void forget_binding(CommandContext& ctx, std::string_view name, std::string_view owner) {
  std::erase_if(ctx.session.bound_locks, [&](const LockGrant& grant) {
    return grant.db == ctx.session.db && grant.name == name && grant.owner == owner;
  });
}

// Forgets the names whose lock is gone (deleted by a script, a DEL…) and the queues that have
// emptied, once the sets have doubled since the last time.
void prune_lock_table(CommandContext& ctx) {
  LockTable& locks = ctx.server.locks();
  if (!locks.prune_due()) return;
  Keyspace& keyspace = ctx.server.keyspace();
  std::erase_if(locks.held(), [&](const LockTable::Name& name) {
    Database& db = keyspace.db(name.first);
    const Entry* entry = db.find_raw(name.second);
    return entry == nullptr || db.is_expired(entry, ctx.now_ms);
  });
  std::erase_if(locks.contended(), [&](const LockTable::Name& name) {
    for (const ClientSession* waiter : ctx.server.blocking().waiters(name.first, name.second)) {
      if (is_lock_waiter(waiter)) return false;
    }
    return true;
  });
  locks.pruned();
}

// Gives `request.owner` one more hold (`holds` after it) of the lock at `entry` (null: the
// lock is free and its hash is created) with a fresh lease, and replies the hold count.
void grant(CommandContext& ctx, Entry* entry, const AcquireRequest& request, int64_t holds) {
  Database& db = ctx.db();
  if (entry == nullptr) {
    entry = db.add(request.name, Value::make_hash());
    ctx.created(request.name);
  }
  char digits[kMaxInt64Chars];
  entry->value.as<HashValue>().set(request.owner,
                                   std::string_view(digits, int64_to_chars(holds, digits)),
                                   ctx.server.settings().hash_limits);
  const int64_t deadline_ms = ctx.now_ms + request.lease_ms;
  db.set_expiry(entry, deadline_ms);
  ctx.changed(request.name, kNotifyHash, "hincrby");
  ctx.also_notify(kNotifyGeneric, "expire", request.name);
  char deadline_digits[kMaxInt64Chars];
  ctx.propagate({"HINCRBY", request.name, request.owner, "1"});
  ctx.propagate({"PEXPIREAT", request.name,
                 std::string_view(deadline_digits, int64_to_chars(deadline_ms, deadline_digits))});

  LockTable& locks = ctx.server.locks();
  ++locks.stats().grants;
  if (ctx.session.blocked.blocked()) ++locks.stats().handoffs;
  locks.granted(ctx.session.db, request.name);
  prune_lock_table(ctx);
  if (request.bind) remember_binding(ctx, request);
  ctx.reply.integer(holds);
}

void lock_acquire_command(CommandContext& ctx) {
  AcquireRequest request;
  if (!parse_acquire(ctx, &request)) return;
  const bool queued = ctx.session.blocked.blocked();  // run again from the queue
  Entry* entry = ctx.lookup_write(request.name);
  if (entry != nullptr && entry->value.type() != ValueType::kHash) {
    return ctx.error(errors::kWrongType);
  }
  if (entry != nullptr) {
    // Held: by this owner (reentrant) or by another.
    const std::optional<std::string_view> value =
        entry->value.as<HashValue>().find(request.owner);
    if (value.has_value()) {
      int64_t holds;
      if (!parse_int64(*value, &holds)) return ctx.error(errors::kHashValueNotInteger);
      if (holds == std::numeric_limits<int64_t>::max()) return ctx.error(errors::kOverflow);
      return grant(ctx, entry, request, holds + 1);
    }
  } else if (queued || lock_waiters(ctx, request.name).empty()) {
    // Free, and nobody queued before this client (a queued client runs again oldest first).
    return grant(ctx, nullptr, request, 1);
  }
  if (!request.wait || !ctx.may_block()) return ctx.reply.null_array();
  ctx.block_until_key_changes(request.name, request.deadline_ms);
  ctx.server.locks().queued(ctx.session.db, request.name);
  prune_lock_table(ctx);
}

// LOCK.RELEASE name owner [ALL]: one hold less (every hold with ALL). Replies the holds left
// (0: released), or nil when `owner` does not hold the lock.
void lock_release_command(CommandContext& ctx) {
  const std::string_view name = ctx.args[1];
  const std::string_view owner = ctx.args[2];
  bool all = false;
  if (ctx.args.size() > 3) {
    if (ctx.args.size() > 4 || !equals_ignore_case(ctx.args[3], "all")) {
      return ctx.error(errors::kSyntax);
    }
    all = true;
  }
  Entry* entry = ctx.lookup_write(name);
  if (entry == nullptr) return ctx.reply.null();
  if (entry->value.type() != ValueType::kHash) return ctx.error(errors::kWrongType);
  HashValue& hash = entry->value.as<HashValue>();
  const std::optional<std::string_view> value = hash.find(owner);
  if (!value.has_value()) return ctx.reply.null();
  int64_t holds;
  if (!parse_int64(*value, &holds)) return ctx.error(errors::kHashValueNotInteger);
  if (!all && holds > 1) {
    char digits[kMaxInt64Chars];
    hash.set(owner, std::string_view(digits, int64_to_chars(holds - 1, digits)),
             ctx.server.settings().hash_limits);
    ctx.changed(name, kNotifyHash, "hincrby");
    ctx.propagate({"HINCRBY", name, owner, "-1"});
    return ctx.reply.integer(holds - 1);
  }
  forget_binding(ctx, name, owner);
  if (hash.size() == 1) {
    ctx.db().remove(entry);
    ctx.changed(name, kNotifyGeneric, "del");
    ctx.propagate({"DEL", name});
    ctx.server.locks().released(ctx.session.db, name);
  } else {
    // Not a plain Redisson lock (other fields beside the owner): only the owner's field goes.
    hash.remove(owner);
    ctx.changed(name, kNotifyHash, "hdel");
    ctx.propagate({"HDEL", name, owner});
  }
  ctx.reply.integer(0);
}

// LOCK.INFO name: holder, holds, lease-ms (as PTTL: -1 without lease, -2 when free) and the
// queue, oldest first, as [owner, waited-ms] pairs.
void lock_info_command(CommandContext& ctx) {
  const std::string_view name = ctx.args[1];
  const Entry* entry = ctx.lookup_read(name, CommandContext::kLookupNoTouch);
  if (entry != nullptr && entry->value.type() != ValueType::kHash) {
    return ctx.error(errors::kWrongType);
  }
  std::optional<std::string_view> holder;
  std::string holds_text;
  if (entry != nullptr) {
    entry->value.as<HashValue>().for_each([&](std::string_view field, std::string_view value) {
      if (!holder.has_value()) {
        holder = field;
        holds_text.assign(value);
      }
    });
  }
  int64_t holds = 0;
  if (holder.has_value() && !parse_int64(holds_text, &holds)) holds = 0;
  int64_t lease_ms = -2;
  if (entry != nullptr) {
    const int64_t deadline = ctx.db().deadline_of(entry);
    lease_ms = deadline == kNoExpiry ? -1 : std::max<int64_t>(0, deadline - ctx.now_ms);
  }
  const std::vector<ClientSession*> waiters = lock_waiters(ctx, name);
  ctx.reply.map_header(4);
  ctx.reply.bulk("holder");
  if (holder.has_value()) {
    ctx.reply.bulk(*holder);
  } else {
    ctx.reply.null();
  }
  ctx.reply.bulk("holds");
  ctx.reply.integer(holds);
  ctx.reply.bulk("lease-ms");
  ctx.reply.integer(lease_ms);
  ctx.reply.bulk("waiters");
  ctx.reply.array_header(waiters.size());
  for (const ClientSession* waiter : waiters) {
    ctx.reply.array_header(2);
    ctx.reply.bulk(waiter->blocked.args()[2]);
    ctx.reply.integer(std::max<int64_t>(0, ctx.now_ms - waiter->blocked.blocked_since_ms()));
  }
}

// --- Table ---------------------------------------------------------------------------------

constexpr CommandSpec kLockCommands[] = {
    {"lock.acquire", -4, kWrite | kDenyOom | kBlocking, 1, 1, 1, kAclHash, lock_acquire_command,
     "hash", "keywarden",
     "Acquire a reentrant lock (a Redisson lock hash) for an owner with a lease, waiting in a "
     "server-side FIFO queue when TIMEOUT is given",
     "O(1)"},
    {"lock.release", -3, kWrite | kFast, 1, 1, 1, kAclHash, lock_release_command, "hash",
     "keywarden",
     "Release one hold (or ALL holds) of a lock, handing it to the first queued waiter when it "
     "becomes free",
     "O(1)"},
    {"lock.info", 2, kReadonly, 1, 1, 1, kAclHash, lock_info_command, "hash", "keywarden",
     "Show a lock's holder, hold count, remaining lease and queue of waiters",
     "O(N) where N is the number of queued waiters"},
};

}  // namespace

void register_lock_commands(CommandTable& table) { table.add(kLockCommands); }

void release_bound_locks(Dispatcher& dispatcher, ClientSession& session, int64_t now_ms) {
  if (session.bound_locks.empty()) return;
  const Command* release = dispatcher.server().commands().find("lock.release");
  if (release == nullptr) return;
  std::vector<LockGrant> grants;
  grants.swap(session.bound_locks);
  // Inside an execution that has effects pending (CLIENT KILL in EXEC), ours join its batch
  // and go out with it; otherwise nothing else will flush them.
  const bool flush = dispatcher.server().propagator().pending_count() == 0;
  const int saved_db = session.db;
  std::string discarded;
  ReplyWriter writer(&discarded, session.resp);
  for (const LockGrant& grant : grants) {
    const std::string_view args[] = {"lock.release", grant.name, grant.owner, "ALL"};
    session.db = grant.db;
    dispatcher.execute_nested(session, args, writer, *release, now_ms);
  }
  session.db = saved_db;
  if (flush) dispatcher.server().propagator().flush();
}

}  // namespace keywarden
