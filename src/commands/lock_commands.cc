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
//
// Fencing (FENCE): a new hold draws the next token from the per-slot counter that
// libkeywarden's FencedLock draws from (common/fence_keys.h) and keeps it in the lock hash
// under kFencingTokenField; a re-entry reads it back. The grant then propagates, inside
// MULTI/EXEC, as SET counter <token> KEEPTTL, HINCRBY, HSET name <token field> <token>,
// PEXPIREAT: the counter is data like any other, so it survives restarts and failovers and
// never goes back. LOCK.FENCED resource token command… runs a write only when the token is at
// least the highest one the resource has seen (a field of the slot's marks hash).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands/context.h"
#include "commands/acl.h"
#include "commands/command_table.h"
#include "commands/dispatcher.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "common/ascii.h"
#include "common/fence_keys.h"
#include "common/number.h"
#include "types/hash_value.h"
#include "types/value.h"

namespace keywarden {
namespace {

constexpr std::string_view kAcquireName = "lock.acquire";
constexpr std::string_view kFencedName = "lock.fenced";

// LOCK.ACQUIRE name owner lease-ms [TIMEOUT ms] [BIND], parsed.
struct AcquireRequest {
  std::string_view name;
  std::string_view owner;
  int64_t lease_ms = 0;
  bool wait = false;         // TIMEOUT given: may block
  int64_t deadline_ms = 0;   // absolute; 0: no limit
  bool bind = false;
  bool fence = false;        // reply [holds, token]
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
    } else if (equals_ignore_case(option, "fence")) {
      request->fence = true;
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

// Whether the lock hash holds only reserved fields besides `owner`'s (the fencing token): the
// hash then goes with the owner's last hold.
bool only_owner_left(const HashValue& hash, std::string_view owner) {
  const size_t reserved = hash.find(kFencingTokenField).has_value() ? 1 : 0;
  return hash.size() == 1 + reserved && hash.find(owner).has_value();
}

// An integer kept as a string value (a token counter); false when it is none.
bool read_counter(const Entry* entry, int64_t* value) {
  if (entry->value.type() != ValueType::kString) return false;
  if (entry->value.is_int()) {
    *value = entry->value.int_value();
    return true;
  }
  char scratch[kInt64BufferSize];
  return parse_int64(entry->value.string_view(scratch), value);
}

// Draws the next fencing token for lock `name`: one more than the highest of the slot's shared
// counter and Redisson's per-name counter (kept by FencedLock users of that layout), stored in
// the shared counter. Replies the error and returns false when the counter holds no integer.
bool draw_token(CommandContext& ctx, std::string_view name, int64_t* token) {
  const std::string counter_key = fence_counter_key(name);
  Entry* counter = ctx.lookup_write(counter_key);
  int64_t latest = 0;
  if (counter != nullptr && !read_counter(counter, &latest)) {
    ctx.error(counter->value.type() == ValueType::kString ? errors::kNotInteger
                                                          : errors::kWrongType);
    return false;
  }
  const std::string legacy_key = legacy_fence_counter_key(name);
  if (const Entry* legacy = ctx.lookup_write(legacy_key); legacy != nullptr) {
    int64_t legacy_value;
    if (read_counter(legacy, &legacy_value)) latest = std::max(latest, legacy_value);
  }
  if (latest == std::numeric_limits<int64_t>::max()) {
    ctx.error(errors::kOverflow);
    return false;
  }
  *token = latest + 1;
  if (counter != nullptr) {
    counter = ctx.db().overwrite(counter, Value::make_int(*token), /*keep_ttl=*/true);
  } else {
    ctx.db().add(counter_key, Value::make_int(*token));
    ctx.created(counter_key);
  }
  ctx.changed(counter_key, kNotifyString, "incrby");
  char digits[kMaxInt64Chars];
  ctx.propagate({"SET", counter_key, std::string_view(digits, int64_to_chars(*token, digits)),
                 "KEEPTTL"});
  return true;
}

// Gives `request.owner` one more hold (`holds` after it) of the lock at `entry` (null: the
// lock is free and its hash is created) with a fresh lease, and replies the hold count (with
// FENCE, [holds, token]).
void grant(CommandContext& ctx, Entry* entry, const AcquireRequest& request, int64_t holds) {
  Database& db = ctx.db();
  // FENCE: the hold's token, read back on a re-entry, drawn for a new hold (or a hold taken
  // without FENCE, which has none yet).
  int64_t token = 0;
  bool new_token = false;
  if (request.fence) {
    std::optional<std::string_view> kept;
    if (entry != nullptr) kept = entry->value.as<HashValue>().find(kFencingTokenField);
    if (!kept.has_value() || !parse_int64(*kept, &token)) {
      if (!draw_token(ctx, request.name, &token)) return;
      new_token = true;
    }
  }
  if (entry == nullptr) {
    entry = db.add(request.name, Value::make_hash());
    ctx.created(request.name);
  }
  char digits[kMaxInt64Chars];
  HashValue& hash = entry->value.as<HashValue>();
  hash.set(request.owner, std::string_view(digits, int64_to_chars(holds, digits)),
           ctx.server.settings().hash_limits);
  char token_digits[kMaxInt64Chars];
  const std::string_view token_text(token_digits, int64_to_chars(token, token_digits));
  if (new_token) hash.set(kFencingTokenField, token_text, ctx.server.settings().hash_limits);
  const int64_t deadline_ms = ctx.now_ms + request.lease_ms;
  entry = db.set_expiry(entry, deadline_ms);
  ctx.changed(request.name, kNotifyHash, "hincrby");
  ctx.also_notify(kNotifyGeneric, "expire", request.name);
  char deadline_digits[kMaxInt64Chars];
  ctx.propagate({"HINCRBY", request.name, request.owner, "1"});
  if (new_token) ctx.propagate({"HSET", request.name, kFencingTokenField, token_text});
  ctx.propagate({"PEXPIREAT", request.name,
                 std::string_view(deadline_digits, int64_to_chars(deadline_ms, deadline_digits))});
  // The counter and the hash change together on the AOF and the replicas too (inside MULTI or
  // a script, the transaction or the script wraps everything).
  if (new_token && !ctx.session.transaction.in_multi() && !ctx.session.script_client) {
    ctx.server.propagator().wrap_pending_in_transaction();
  }

  LockTable& locks = ctx.server.locks();
  ++locks.stats().grants;
  if (ctx.session.blocked.blocked()) ++locks.stats().handoffs;
  locks.granted(ctx.session.db, request.name);
  prune_lock_table(ctx);
  if (request.bind) remember_binding(ctx, request);
  if (request.fence) {
    ctx.reply.array_header(2);
    ctx.reply.integer(holds);
    ctx.reply.integer(token);
  } else {
    ctx.reply.integer(holds);
  }
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
        request.owner == kFencingTokenField ? std::nullopt
                                            : entry->value.as<HashValue>().find(request.owner);
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
  // The queue runs again when the lease ends, not only when expiry gets round to the key.
  if (entry != nullptr) {
    const int64_t lease_end = ctx.db().deadline_of(entry);
    if (lease_end != kNoExpiry) {
      ctx.server.locks().watch_lease(lease_end, ctx.session.db, request.name);
    }
  }
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
  if (owner == kFencingTokenField) return ctx.reply.null();
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
  if (only_owner_left(hash, owner)) {
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

// LOCK.INFO name: holder, holds, lease-ms (as PTTL: -1 without lease, -2 when free), the
// queue, oldest first, as [owner, waited-ms] pairs, and the hold's fencing token (nil when it
// has none).
void lock_info_command(CommandContext& ctx) {
  const std::string_view name = ctx.args[1];
  const Entry* entry = ctx.lookup_read(name, CommandContext::kLookupNoTouch);
  if (entry != nullptr && entry->value.type() != ValueType::kHash) {
    return ctx.error(errors::kWrongType);
  }
  std::optional<std::string_view> holder;
  std::string holds_text;
  std::optional<int64_t> token;
  if (entry != nullptr) {
    entry->value.as<HashValue>().for_each([&](std::string_view field, std::string_view value) {
      if (field == kFencingTokenField) {
        int64_t parsed;
        if (parse_int64(value, &parsed)) token = parsed;
      } else if (!holder.has_value()) {
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
  ctx.reply.map_header(5);
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
  ctx.reply.bulk("fencing-token");
  if (token.has_value()) {
    ctx.reply.integer(*token);
  } else {
    ctx.reply.null();
  }
}

// LOCK.FENCED resource token command [arg ...]: runs the write `command` (its reply is the
// reply) only when `token` is at least the highest token used for `resource` so far, and
// records it as the highest; else replies -FENCED. The highest tokens are the fields of the
// slot's marks hash (fence_marks_key), so fencing many resources leaves no key per resource.
// The token counts as used once checked, even when the command then fails (WRONGTYPE…).
// Propagates as HSET <marks> resource token (when it raised the mark) followed by the inner
// command's own effects, inside MULTI/EXEC.
void lock_fenced_command(CommandContext& ctx) {
  const std::string_view resource = ctx.args[1];
  int64_t token;
  if (!parse_int64(ctx.args[2], &token)) return ctx.error(errors::kLockFenceToken);
  const std::span<const std::string_view> inner_args = ctx.args.subspan(3);
  const Command* inner = ctx.server.commands().find_for_args(inner_args);
  if (inner == nullptr || inner->spec->handler == nullptr) {
    if (inner != nullptr && inner_args.size() > 1) {
      return ctx.error(errors::unknown_subcommand(inner->full_name, inner_args[1]));
    }
    if (inner != nullptr) return ctx.error(errors::wrong_arity(inner->full_name));
    return ctx.error(errors::unknown_command(inner_args[0], inner_args.data() + 1,
                                             inner_args.size() - 1));
  }
  const int arity = inner->spec->arity;
  const int count = static_cast<int>(inner_args.size());
  if ((arity > 0 && arity != count) || count < -arity) {
    return ctx.error(errors::wrong_arity(inner->full_name));
  }
  if (inner->full_name == kFencedName) return ctx.error(errors::kLockFencedNested);
  if (inner->has(kBlocking)) return ctx.error(errors::kLockFencedBlocking);
  if (inner->has(kAdmin) || inner->has(kNoScript) || inner->has(kNoMulti) ||
      inner->has(kRunsScripts) || inner->has(kPubSub) || inner->has(kRunsInMulti)) {
    return ctx.error(errors::kLockFencedNotAllowed);
  }
  if (!inner->has(kWrite) || CommandTable::keys(*inner, inner_args).empty()) {
    return ctx.error(errors::kLockFencedNotWrite);
  }
  // The caller's permissions for the inner command and its keys, as a script's redis.call.
  if (ctx.session.user != nullptr && !ctx.session.user->unrestricted()) {
    AclStore& acl = ctx.server.acl();
    const AclVerdict verdict = acl.check(*ctx.session.user, *inner, inner_args);
    if (!verdict.allowed()) {
      const std::string_view object =
          verdict.denial == AclDenial::kCommand
              ? std::string_view(inner->full_name)
              : inner_args[static_cast<size_t>(verdict.position)];
      const char* context = ctx.session.script_client           ? "lua"
                            : ctx.session.transaction.in_multi() ? "multi"
                                                                 : "toplevel";
      acl.log(ctx.session, &ctx.command, verdict.denial, context, object, ctx.session.user->name,
              ctx.now_ms);
      if (verdict.denial == AclDenial::kKey) return ctx.error(errors::kNoPermKeys);
      if (verdict.denial == AclDenial::kChannel) return ctx.error(errors::kNoPermChannels);
      return ctx.error(errors::no_permission_to_run(inner->full_name));
    }
  }

  const std::string marks_key = fence_marks_key(resource);
  Entry* marks = ctx.lookup_write(marks_key);
  if (marks != nullptr && marks->value.type() != ValueType::kHash) {
    return ctx.error(errors::kWrongType);
  }
  std::optional<int64_t> highest;
  if (marks != nullptr) {
    if (const std::optional<std::string_view> mark = marks->value.as<HashValue>().find(resource)) {
      int64_t parsed;
      if (!parse_int64(*mark, &parsed)) return ctx.error(errors::kHashValueNotInteger);
      highest = parsed;
    }
  }
  if (highest.has_value() && token < *highest) {
    return ctx.error(errors::fenced_refusal(token, *highest));
  }
  if (!highest.has_value() || token > *highest) {
    if (marks == nullptr) {
      marks = ctx.db().add(marks_key, Value::make_hash());
      ctx.created(marks_key);
    }
    char digits[kMaxInt64Chars];
    const std::string_view token_text(digits, int64_to_chars(token, digits));
    marks->value.as<HashValue>().set(resource, token_text, ctx.server.settings().hash_limits);
    ctx.changed(marks_key, kNotifyHash, "hset");
    ctx.propagate({"HSET", marks_key, resource, token_text});
  }
  Dispatcher& dispatcher = ctx.service<Dispatcher>();
  const int64_t duration_us =
      dispatcher.execute_nested(ctx.session, inner_args, ctx.reply, *inner, ctx.now_ms);
  dispatcher.report_nested(ctx.session, inner_args, *inner, duration_us);
  if (!ctx.session.transaction.in_multi() && !ctx.session.script_client) {
    ctx.server.propagator().wrap_pending_in_transaction();
  }
}

// --- Table ---------------------------------------------------------------------------------

constexpr CommandSpec kLockCommands[] = {
    {"lock.acquire", -4, kWrite | kDenyOom | kBlocking, 1, 1, 1, kAclHash, lock_acquire_command,
     "hash", "keywarden",
     "Acquire a reentrant lock (a Redisson lock hash) for an owner with a lease, waiting in a "
     "server-side FIFO queue when TIMEOUT is given, with a fencing token when FENCE is given",
     "O(1)"},
    {"lock.release", -3, kWrite | kFast, 1, 1, 1, kAclHash, lock_release_command, "hash",
     "keywarden",
     "Release one hold (or ALL holds) of a lock, handing it to the first queued waiter when it "
     "becomes free",
     "O(1)"},
    {"lock.fenced", -4, kWrite | kDenyOom, 1, 1, 1, kAclHash, lock_fenced_command, "hash",
     "keywarden",
     "Run a write command only if a fencing token is at least the highest one used for a "
     "resource, and record it",
     "O(1) plus the complexity of the command"},
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
