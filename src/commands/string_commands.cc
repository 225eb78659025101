// String commands: GET, SET and its variants (SETNX, SETEX, PSETEX, GETSET), GETEX, GETDEL,
// MGET, MSET, MSETNX, APPEND, STRLEN, the INCR/DECR family, INCRBYFLOAT, GETRANGE/SUBSTR,
// SETRANGE and LCS, with Redis 7.0's replies, encodings, TTL handling and propagation.
//
// SET, SETNX, SETEX, PSETEX and GETSET share one core (set_generic). Writes that carry a
// relative time propagate it absolute (SET … PXAT, PEXPIREAT), INCRBYFLOAT propagates its
// result as SET … KEEPTTL so replicas never redo float arithmetic, and the rest propagate as
// received.
#include <xxhash.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commands/context.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "common/ascii.h"
#include "common/number.h"
#include "types/value.h"

namespace keywarden {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// Option keywords compare the way Redis reads them, as C strings: an argument ends at its first
// NUL byte, so "nx\0junk" is NX there and must be here too.
bool is_option(std::string_view arg, std::string_view keyword) {
  size_t nul = arg.find('\0');
  if (nul != std::string_view::npos) arg = arg.substr(0, nul);
  return equals_ignore_case(arg, keyword);
}

bool is_string(const Entry* entry) { return entry->value.type() == ValueType::kString; }

void reply_value(ReplyWriter& reply, const Value& value) {
  if (value.is_int()) return reply.bulk_integer(value.int_value());
  char scratch[kInt64BufferSize];
  reply.bulk(value.string_view(scratch));
}

// Replies with a looked-up string's value, or nil when absent. False after a WRONGTYPE reply.
bool reply_string_or_null(CommandContext& ctx, const Entry* entry) {
  if (entry == nullptr) {
    ctx.reply.null();
    return true;
  }
  if (!is_string(entry)) {
    ctx.error(errors::kWrongType);
    return false;
  }
  reply_value(ctx.reply, entry->value);
  return true;
}

// Redis's checkStringLength: a string may grow to proto-max-bulk-len bytes, and a size that
// overflows counts as too long.
bool check_string_length(CommandContext& ctx, int64_t size, int64_t append) {
  uint64_t total = static_cast<uint64_t>(size) + static_cast<uint64_t>(append);
  if (total > static_cast<uint64_t>(kInt64Max) ||
      static_cast<int64_t>(total) > ctx.server.settings().proto_max_bulk_len) {
    ctx.error(errors::kStringTooLong);
    return false;
  }
  return true;
}

// Replaces a key's value as SET does: with `owned` when given (the bytes kept as they are),
// else with a copy of `bytes`, in the old value's buffer when it fits.
// A collection it replaces is freed lazily under lazyfree-lazy-server-del, as Redis's setKey does.
// Returns the entry, which moves when its TTL goes.
[[nodiscard]] Entry* overwrite_string(Database& db, Entry* entry, std::string_view bytes,
                                      StringBlock owned, bool keep_ttl, bool lazy) {
  // A hash leaving the entry leaves the field-deadline index first.
  if (entry->value.type() == ValueType::kHash) db.forget_field_expiry(entry);
  if (lazy && entry->value.type() != ValueType::kString) {
    db.release_value(std::exchange(entry->value, Value()), true);
  }
  if (owned) {
    entry->value = Value::adopt_string(std::move(owned));
  } else {
    entry->value.assign_string(bytes);
  }
  if (!keep_ttl && entry->has_expiry()) entry = db.set_expiry(entry, kNoExpiry);
  return entry;
}

// Stores `value` at `key` as SET does: over `entry` (the key's live entry, or nullptr) keeping
// or dropping its TTL, or in a new entry; fires "set" (and "expire" for a deadline other than
// kNoExpiry, which it applies). `owned`, when given, holds value's bytes, kept without a copy.
// Returns the entry.
Entry* store_string(CommandContext& ctx, Entry* entry, std::string_view key,
                    std::string_view value, bool keep_ttl, int64_t deadline,
                    StringBlock owned = {}) {
  Database& db = ctx.db();
  if (entry != nullptr) {
    // With a new deadline to set, the old one is kept until then: dropping it would move the
    // entry to the shape without a TTL and straight back.
    entry = overwrite_string(db, entry, value, std::move(owned), keep_ttl || deadline != kNoExpiry,
                             ctx.server.settings().lazyfree_lazy_server_del);
    if (deadline != kNoExpiry) entry = db.set_expiry(entry, deadline);
  } else {
    entry = db.add(key, owned ? Value::adopt_string(std::move(owned)) : Value::make_string(value),
                   deadline);
    ctx.created(key);
  }
  ctx.changed(key, kNotifyString, "set");
  if (deadline != kNoExpiry) ctx.also_notify(kNotifyGeneric, "expire", key);
  return entry;
}

// --- SET / GETEX options -------------------------------------------------------------------

enum class ExpireKind : uint8_t { kNone, kEx, kPx, kExAt, kPxAt };

// Redis 8.4's compare-and-set conditions on the current value: equal / not equal to a value,
// or its digest (DIGEST's 16 hex digits, compared ignoring case) equal / not equal.
enum class Compare : uint8_t { kNone, kIfEq, kIfNe, kIfDeq, kIfDne };

Compare compare_keyword(std::string_view arg) {
  if (is_option(arg, "IFEQ")) return Compare::kIfEq;
  if (is_option(arg, "IFNE")) return Compare::kIfNe;
  if (is_option(arg, "IFDEQ")) return Compare::kIfDeq;
  if (is_option(arg, "IFDNE")) return Compare::kIfDne;
  return Compare::kNone;
}

constexpr size_t kDigestHexDigits = 16;

bool is_digest_compare(Compare compare) {
  return compare == Compare::kIfDeq || compare == Compare::kIfDne;
}

// The digest of a string value: XXH3-64 as 16 lowercase hex digits, leading zeros kept
// (Redis 8.4's DIGEST after redis/redis#14502).
std::string value_digest(std::string_view bytes) {
  char hex[kDigestHexDigits + 1];
  std::snprintf(hex, sizeof hex, "%016" PRIx64,
                static_cast<uint64_t>(XXH3_64bits(bytes.data(), bytes.size())));
  return std::string(hex, kDigestHexDigits);
}

// Whether the condition holds for `entry` (a string, or nullptr when the key is absent):
// IFEQ/IFDEQ need the key, IFNE/IFDNE hold for an absent one.
bool compare_holds(Compare compare, std::string_view operand, const Entry* entry) {
  if (entry == nullptr) return compare == Compare::kIfNe || compare == Compare::kIfDne;
  char scratch[kInt64BufferSize];
  const std::string_view current = entry->value.string_view(scratch);
  switch (compare) {
    case Compare::kIfEq: return current == operand;
    case Compare::kIfNe: return current != operand;
    case Compare::kIfDeq: return equals_ignore_case(value_digest(current), operand);
    case Compare::kIfDne: return !equals_ignore_case(value_digest(current), operand);
    case Compare::kNone: break;
  }
  return true;
}

struct StringOptions {
  bool nx = false;
  bool xx = false;
  Compare compare = Compare::kNone;
  std::string_view compare_arg;
  bool get = false;
  bool keep_ttl = false;
  bool persist = false;
  ExpireKind expire = ExpireKind::kNone;
  std::string_view expire_arg;
};

// Reads SET's options (NX, XX or an IF* condition, GET, KEEPTTL and an expiry) or GETEX's (PERSIST and an expiry)
// from args[start…]. Redis's acceptance rules: NX and XX exclude each other, an expiry kind
// excludes the other kinds and KEEPTTL/PERSIST, and repeating an accepted option is fine (a
// repeated expiry keeps the last value). False means "syntax error".
bool parse_string_options(std::span<const std::string_view> args, size_t start, bool for_set,
                          StringOptions* options) {
  StringOptions& o = *options;
  for (size_t i = start; i < args.size(); ++i) {
    std::string_view opt = args[i];
    const bool has_value = i + 1 < args.size();
    auto expiry_allowed = [&](ExpireKind kind) {
      return !o.keep_ttl && !o.persist && (o.expire == ExpireKind::kNone || o.expire == kind) &&
             has_value;
    };
    ExpireKind kind = ExpireKind::kNone;
    const Compare compare = for_set ? compare_keyword(opt) : Compare::kNone;
    if (for_set && is_option(opt, "NX") && !o.xx && o.compare == Compare::kNone) {
      o.nx = true;
    } else if (for_set && is_option(opt, "XX") && !o.nx && o.compare == Compare::kNone) {
      o.xx = true;
    } else if (compare != Compare::kNone) {
      // One condition at most: NX, XX and the IF* forms exclude each other.
      if (o.nx || o.xx || (o.compare != Compare::kNone && o.compare != compare) || !has_value) {
        return false;
      }
      o.compare = compare;
      o.compare_arg = args[++i];
    } else if (for_set && is_option(opt, "GET")) {
      o.get = true;
    } else if (for_set && is_option(opt, "KEEPTTL") && o.expire == ExpireKind::kNone) {
      o.keep_ttl = true;
    } else if (!for_set && is_option(opt, "PERSIST") && o.expire == ExpireKind::kNone) {
      o.persist = true;
    } else if (is_option(opt, "EX")) {
      kind = ExpireKind::kEx;
    } else if (is_option(opt, "PX")) {
      kind = ExpireKind::kPx;
    } else if (is_option(opt, "EXAT")) {
      kind = ExpireKind::kExAt;
    } else if (is_option(opt, "PXAT")) {
      kind = ExpireKind::kPxAt;
    } else {
      return false;
    }
    if (kind != ExpireKind::kNone) {
      if (!expiry_allowed(kind)) return false;
      o.expire = kind;
      o.expire_arg = args[++i];
    }
  }
  return true;
}

// Turns an expiry option into an absolute deadline in ms, validated as Redis does: an integer,
// positive, and neither the seconds-to-ms conversion nor the addition of the current time may
// overflow. Replies with the error and returns false otherwise.
bool expiry_deadline(CommandContext& ctx, ExpireKind kind, std::string_view text,
                     int64_t* deadline_ms) {
  int64_t amount;
  if (!parse_int64(text, &amount)) {
    ctx.error(errors::kNotInteger);
    return false;
  }
  const bool seconds = kind == ExpireKind::kEx || kind == ExpireKind::kExAt;
  const bool relative = kind == ExpireKind::kEx || kind == ExpireKind::kPx;
  if (amount <= 0 || (seconds && amount > kInt64Max / 1000)) {
    ctx.error(errors::invalid_expire_time(ctx.command.full_name));
    return false;
  }
  if (seconds) amount *= 1000;
  if (relative) {
    if (amount > kInt64Max - ctx.now_ms) {
      ctx.error(errors::invalid_expire_time(ctx.command.full_name));
      return false;
    }
    amount += ctx.now_ms;
  }
  *deadline_ms = amount;
  return true;
}

// --- GET, SET and their variants -------------------------------------------------------------

void get_command(CommandContext& ctx) { reply_string_or_null(ctx, ctx.lookup_read(ctx.args[1])); }

// How a SET-like command answers a write and a skipped write (NX/XX not met).
enum class SetReplies : uint8_t { kOkOrNull, kOneOrZero };

// What the replicas receive when no expiry forces SET … PXAT.
enum class SetPropagation : uint8_t { kAsReceived, kRenamedToSet };

// The one core of SET, SETNX, SETEX, PSETEX and GETSET: validates the expiry, answers the GET
// part, honours NX/XX, stores the value args[value_index] (integer-encoded when possible)
// dropping or keeping the old TTL, applies the new deadline and propagates. A big value the
// connection read into a block of its own becomes the stored string without a copy; its bytes
// stay where args[value_index] views them, in the key just written, which nothing in this
// command deletes, so propagation and the caller's reports (MONITOR, slow log) still read it.
void set_generic(CommandContext& ctx, const StringOptions& options, std::string_view key,
                 size_t value_index, SetReplies replies, SetPropagation propagation) {
  const std::string_view value = ctx.args[value_index];
  int64_t deadline = kNoExpiry;
  if (options.expire != ExpireKind::kNone &&
      !expiry_deadline(ctx, options.expire, options.expire_arg, &deadline)) {
    return;
  }
  Entry* entry;
  if (options.get) {
    entry = ctx.lookup_read(key);
    if (!reply_string_or_null(ctx, entry)) return;
  } else {
    entry = ctx.lookup_write(key);
  }
  const bool found = entry != nullptr;
  // IF* compare with a string only (GET has already answered WRONGTYPE for another type).
  if (options.compare != Compare::kNone && found && !is_string(entry)) {
    return ctx.error(errors::kWrongType);
  }
  if ((options.nx && found) || (options.xx && !found) ||
      (options.compare != Compare::kNone &&
       !compare_holds(options.compare, options.compare_arg, entry))) {
    if (!options.get) {
      if (replies == SetReplies::kOneOrZero) {
        ctx.reply.integer(0);
      } else {
        ctx.reply.null();
      }
    }
    return;
  }

  store_string(ctx, entry, key, value, options.keep_ttl, deadline,
               ctx.take_argument(value_index));
  if (!options.get) {
    if (replies == SetReplies::kOneOrZero) {
      ctx.reply.integer(1);
    } else {
      ctx.reply.simple_string("OK");
    }
  }

  if (!ctx.server.propagator().active()) return;
  if (deadline != kNoExpiry) {
    char digits[kMaxInt64Chars];
    std::string_view when(digits, int64_to_chars(deadline, digits));
    ctx.propagate({"SET", key, value, "PXAT", when});
  } else if (options.compare != Compare::kNone) {
    // The condition held here, so replicas apply the write without it.
    if (options.keep_ttl) {
      ctx.propagate({"SET", key, value, "KEEPTTL"});
    } else {
      ctx.propagate({"SET", key, value});
    }
  } else if (options.get || propagation == SetPropagation::kRenamedToSet) {
    // GET only shapes the reply: replicas get the command without it (every occurrence).
    std::vector<std::string_view> effect;
    effect.reserve(ctx.args.size());
    effect.push_back(propagation == SetPropagation::kRenamedToSet ? "SET" : ctx.args[0]);
    for (size_t i = 1; i < ctx.args.size(); ++i) {
      if (i >= 3 && is_option(ctx.args[i], "GET")) continue;
      effect.push_back(ctx.args[i]);
    }
    ctx.propagate(effect);
  }
  // Otherwise the dispatcher propagates the command as received.
}

void set_command(CommandContext& ctx) {
  StringOptions options;
  if (!parse_string_options(ctx.args, 3, /*for_set=*/true, &options)) {
    return ctx.error(errors::kSyntax);
  }
  if (is_digest_compare(options.compare) && options.compare_arg.size() != kDigestHexDigits) {
    return ctx.error(errors::kDigestLength);
  }
  set_generic(ctx, options, ctx.args[1], 2, SetReplies::kOkOrNull,
              SetPropagation::kAsReceived);
}

void setnx_command(CommandContext& ctx) {
  StringOptions options;
  options.nx = true;
  set_generic(ctx, options, ctx.args[1], 2, SetReplies::kOneOrZero,
              SetPropagation::kAsReceived);
}

void setex_command(CommandContext& ctx) {
  StringOptions options;
  options.expire = ExpireKind::kEx;
  options.expire_arg = ctx.args[2];
  set_generic(ctx, options, ctx.args[1], 3, SetReplies::kOkOrNull,
              SetPropagation::kAsReceived);
}

void psetex_command(CommandContext& ctx) {
  StringOptions options;
  options.expire = ExpireKind::kPx;
  options.expire_arg = ctx.args[2];
  set_generic(ctx, options, ctx.args[1], 3, SetReplies::kOkOrNull,
              SetPropagation::kAsReceived);
}

void getset_command(CommandContext& ctx) {
  StringOptions options;
  options.get = true;
  set_generic(ctx, options, ctx.args[1], 2, SetReplies::kOkOrNull,
              SetPropagation::kRenamedToSet);
}

// Deletes a key on behalf of a command and propagates DEL, or UNLINK when `lazy` is set.
void delete_and_propagate(CommandContext& ctx, Entry* entry, bool lazy) {
  std::string_view key = entry->key();
  ctx.propagate({lazy ? "UNLINK" : "DEL", key});  // copies the key before it is freed
  ctx.changed(key, kNotifyGeneric, "del");
  ctx.db().remove(entry, lazy);
}

void getex_command(CommandContext& ctx) {
  StringOptions options;
  if (!parse_string_options(ctx.args, 2, /*for_set=*/false, &options)) {
    return ctx.error(errors::kSyntax);
  }
  std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_read(key);
  if (entry == nullptr) return ctx.reply.null();
  if (!is_string(entry)) return ctx.error(errors::kWrongType);
  int64_t deadline = kNoExpiry;
  if (options.expire != ExpireKind::kNone &&
      !expiry_deadline(ctx, options.expire, options.expire_arg, &deadline)) {
    return;
  }
  reply_value(ctx.reply, entry->value);

  const bool absolute = options.expire == ExpireKind::kExAt || options.expire == ExpireKind::kPxAt;
  if (absolute && deadline <= ctx.now_ms) {
    // A deadline already reached deletes the key now, as EXPIREAT does.
    delete_and_propagate(ctx, entry, ctx.server.keyspace().lazy_free().settings().lazy_expire);
  } else if (deadline != kNoExpiry) {
    entry = ctx.db().set_expiry(entry, deadline);
    ctx.changed(key, kNotifyGeneric, "expire");
    char digits[kMaxInt64Chars];
    ctx.propagate({"PEXPIREAT", key, std::string_view(digits, int64_to_chars(deadline, digits))});
  } else if (options.persist && entry->has_expiry()) {
    entry = ctx.db().set_expiry(entry, kNoExpiry);
    ctx.changed(key, kNotifyGeneric, "persist");
    ctx.propagate({"PERSIST", key});
  }
}

void getdel_command(CommandContext& ctx) {
  Entry* entry = ctx.lookup_read(ctx.args[1]);
  if (!reply_string_or_null(ctx, entry) || entry == nullptr) return;
  delete_and_propagate(ctx, entry, ctx.server.settings().lazyfree_lazy_user_del);
}

// --- Compare-and-delete (Redis 8.4's DIGEST and DELEX, Valkey 9.0's DELIFEQ) -----------------

void digest_command(CommandContext& ctx) {
  const Entry* entry = ctx.lookup_read(ctx.args[1]);
  if (entry == nullptr) return ctx.reply.null();
  if (!is_string(entry)) return ctx.error(errors::kWrongType);
  char scratch[kInt64BufferSize];
  ctx.reply.bulk(value_digest(entry->value.string_view(scratch)));
}

// Deletes a key for DELEX/DELIFEQ: replicas and the AOF get DEL whatever lazyfree-lazy-user-del
// says (as Redis 8.4's DELEX propagates), and the value is freed as that setting says.
void delete_compared(CommandContext& ctx, Entry* entry) {
  std::string_view key = entry->key();
  ctx.propagate({"DEL", key});  // copies the key before it is freed
  ctx.changed(key, kNotifyGeneric, "del");
  ctx.db().remove(entry, ctx.server.settings().lazyfree_lazy_user_del);
  ctx.reply.integer(1);
}

// DELEX key [IFEQ v | IFNE v | IFDEQ digest | IFDNE digest]: 1 deleted, 0 not (absent key or
// condition false). Without a condition it deletes a key of any type, as DEL; with one the
// value must be a string.
void delex_command(CommandContext& ctx) {
  Compare compare = Compare::kNone;
  if (ctx.args.size() != 2) {
    if (ctx.args.size() != 4) return ctx.error(errors::kSyntax);
    compare = compare_keyword(ctx.args[2]);
    if (compare == Compare::kNone) return ctx.error(errors::kSyntax);
  }
  Entry* entry = ctx.lookup_write(ctx.args[1]);
  if (entry == nullptr) return ctx.reply.integer(0);
  if (compare != Compare::kNone) {
    if (!is_string(entry)) return ctx.error(errors::kWrongType);
    if (is_digest_compare(compare) && ctx.args[3].size() != kDigestHexDigits) {
      return ctx.error(errors::kDigestLength);
    }
    if (!compare_holds(compare, ctx.args[3], entry)) return ctx.reply.integer(0);
  }
  delete_compared(ctx, entry);
}

// DELIFEQ key value (Valkey 9.0): DELEX key IFEQ value under Valkey's name.
void delifeq_command(CommandContext& ctx) {
  Entry* entry = ctx.lookup_write(ctx.args[1]);
  if (entry == nullptr) return ctx.reply.integer(0);
  if (!is_string(entry)) return ctx.error(errors::kWrongType);
  if (!compare_holds(Compare::kIfEq, ctx.args[2], entry)) return ctx.reply.integer(0);
  delete_compared(ctx, entry);
}

// --- Multi-key ---------------------------------------------------------------------------

void mget_command(CommandContext& ctx) {
  ctx.reply.array_header(ctx.args.size() - 1);
  for (size_t i = 1; i < ctx.args.size(); ++i) {
    const Entry* entry = ctx.lookup_read(ctx.args[i]);
    if (entry == nullptr || !is_string(entry)) {
      ctx.reply.null();
    } else {
      reply_value(ctx.reply, entry->value);
    }
  }
}

void mset_generic(CommandContext& ctx, bool only_if_none_exist) {
  if (ctx.args.size() % 2 == 0) return ctx.error(errors::wrong_arity(ctx.command.full_name));
  if (only_if_none_exist) {
    for (size_t i = 1; i < ctx.args.size(); i += 2) {
      if (ctx.lookup_write(ctx.args[i]) != nullptr) return ctx.reply.integer(0);
    }
  }
  for (size_t i = 1; i < ctx.args.size(); i += 2) {
    store_string(ctx, ctx.lookup_write(ctx.args[i]), ctx.args[i], ctx.args[i + 1],
                 /*keep_ttl=*/false, kNoExpiry);
  }
  if (only_if_none_exist) return ctx.reply.integer(1);
  ctx.reply.simple_string("OK");
}

void mset_command(CommandContext& ctx) { mset_generic(ctx, false); }
void msetnx_command(CommandContext& ctx) { mset_generic(ctx, true); }

// MSETEX's key count: args[1], an integer of at least 1 whose pairs all fit in the arguments.
// 0 when it is not (the caller answers the error).
int64_t msetex_pair_count(std::span<const std::string_view> args) {
  int64_t count;
  if (args.size() < 2 || !parse_int64(args[1], &count) || count < 1 ||
      count > static_cast<int64_t>((args.size() - 2) / 2)) {
    return 0;
  }
  return count;
}

// COMMAND GETKEYS and the dispatcher's key walk: the keys at 2, 4, … of MSETEX.
std::vector<int> msetex_keys(std::span<const std::string_view> args) {
  std::vector<int> positions;
  const int64_t count = msetex_pair_count(args);
  for (int64_t i = 0; i < count; ++i) positions.push_back(2 + 2 * static_cast<int>(i));
  return positions;
}

// MSETEX numkeys key value [key value …] [NX | XX] [EX s | PX ms | EXAT s | PXAT ms | KEEPTTL]
// (Redis 8.4): sets every pair with one shared expiry, all or none. 1 set, 0 when NX or XX
// said no. Replicas get one SET … PXAT (or KEEPTTL) per key in MULTI/EXEC, which Redis 7.0
// replicas apply as well.
void msetex_command(CommandContext& ctx) {
  int64_t count;
  if (!parse_int64(ctx.args[1], &count)) return ctx.error(errors::kNotInteger);
  if (count < 1) return ctx.error(errors::kMsetexNumkeys);
  if (count > static_cast<int64_t>((ctx.args.size() - 2) / 2)) {
    return ctx.error(errors::kMsetexPairs);
  }
  const size_t options_at = 2 + 2 * static_cast<size_t>(count);
  StringOptions options;
  if (!parse_string_options(ctx.args, options_at, /*for_set=*/true, &options) || options.get ||
      options.compare != Compare::kNone) {
    return ctx.error(errors::kSyntax);
  }
  int64_t deadline = kNoExpiry;
  if (options.expire != ExpireKind::kNone &&
      !expiry_deadline(ctx, options.expire, options.expire_arg, &deadline)) {
    return;
  }
  if (options.nx || options.xx) {
    for (size_t i = 2; i < options_at; i += 2) {
      if ((ctx.lookup_write(ctx.args[i]) != nullptr) != options.xx) return ctx.reply.integer(0);
    }
  }
  char digits[kMaxInt64Chars];
  const std::string_view when(digits, deadline == kNoExpiry ? 0 : int64_to_chars(deadline, digits));
  for (size_t i = 2; i < options_at; i += 2) {
    const std::string_view key = ctx.args[i];
    const std::string_view value = ctx.args[i + 1];
    store_string(ctx, ctx.lookup_write(key), key, value, options.keep_ttl, deadline);
    if (deadline != kNoExpiry) {
      ctx.propagate({"SET", key, value, "PXAT", when});
    } else if (options.keep_ttl) {
      ctx.propagate({"SET", key, value, "KEEPTTL"});
    } else {
      ctx.propagate({"SET", key, value});
    }
  }
  if (!ctx.session.transaction.in_multi()) ctx.server.propagator().wrap_pending_in_transaction();
  ctx.reply.integer(1);
}

// --- Length and in-place edits -----------------------------------------------------------

void append_command(CommandContext& ctx) {
  std::string_view key = ctx.args[1];
  std::string_view suffix = ctx.args[2];
  Entry* entry = ctx.lookup_write(key);
  size_t length;
  if (entry == nullptr) {
    entry = ctx.db().add(key, Value::make_string(suffix));
    ctx.created(key);
    length = suffix.size();
  } else {
    if (!is_string(entry)) return ctx.error(errors::kWrongType);
    const size_t old_length = entry->value.string_length();
    if (!check_string_length(ctx, static_cast<int64_t>(old_length),
                             static_cast<int64_t>(suffix.size()))) {
      return;
    }
    // Even an empty suffix leaves the value "raw", as Redis unshares it before appending.
    length = entry->value.append(suffix);
  }
  ctx.changed(key, kNotifyString, "append");
  ctx.reply.integer(static_cast<int64_t>(length));
}

void strlen_command(CommandContext& ctx) {
  const Entry* entry = ctx.lookup_read(ctx.args[1]);
  if (entry == nullptr) return ctx.reply.integer(0);
  if (!is_string(entry)) return ctx.error(errors::kWrongType);
  ctx.reply.integer(static_cast<int64_t>(entry->value.string_length()));
}

void getrange_command(CommandContext& ctx) {
  int64_t start, end;
  if (!parse_int64(ctx.args[2], &start) || !parse_int64(ctx.args[3], &end)) {
    return ctx.error(errors::kNotInteger);
  }
  const Entry* entry = ctx.lookup_read(ctx.args[1]);
  if (entry == nullptr) return ctx.reply.bulk("");
  if (!is_string(entry)) return ctx.error(errors::kWrongType);
  char scratch[kInt64BufferSize];
  std::string_view bytes = entry->value.string_view(scratch);
  const int64_t length = static_cast<int64_t>(bytes.size());
  // Both ends negative and crossed: empty, even where clamping would make them meet at 0.
  if (start < 0 && end < 0 && start > end) return ctx.reply.bulk("");
  if (start < 0) start += length;
  if (end < 0) end += length;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= length) end = length - 1;
  if (length == 0 || start > end) return ctx.reply.bulk("");
  ctx.reply.bulk(bytes.substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1)));
}

void setrange_command(CommandContext& ctx) {
  int64_t offset;
  if (!parse_int64(ctx.args[2], &offset)) return ctx.error(errors::kNotInteger);
  if (offset < 0) return ctx.error(errors::kOffsetOutOfRange);
  std::string_view key = ctx.args[1];
  std::string_view patch = ctx.args[3];
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) {
    // Writing nothing creates nothing.
    if (patch.empty()) return ctx.reply.integer(0);
    if (!check_string_length(ctx, offset, static_cast<int64_t>(patch.size()))) return;
    std::string bytes(static_cast<size_t>(offset) + patch.size(), '\0');
    std::memcpy(bytes.data() + offset, patch.data(), patch.size());
    entry = ctx.db().add(key, Value::make_raw(bytes));
    ctx.created(key);
  } else {
    if (!is_string(entry)) return ctx.error(errors::kWrongType);
    if (patch.empty()) return ctx.reply.integer(static_cast<int64_t>(entry->value.string_length()));
    if (!check_string_length(ctx, offset, static_cast<int64_t>(patch.size()))) return;
    entry->value.write_at(static_cast<size_t>(offset), patch);
  }
  ctx.changed(key, kNotifyString, "setrange");
  ctx.reply.integer(static_cast<int64_t>(entry->value.string_length()));
}

// --- Counters ----------------------------------------------------------------------------

// Stores a counter's new value: integer-encoded, keeping the key's TTL.
Entry* store_counter(CommandContext& ctx, Entry* entry, std::string_view key, Value value) {
  if (entry != nullptr) {
    return ctx.db().overwrite(entry, std::move(value), /*keep_ttl=*/true);
  }
  Entry* added = ctx.db().add(key, std::move(value));
  ctx.created(key);
  return added;
}

void incr_decr(CommandContext& ctx, int64_t delta) {
  std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  int64_t current = 0;
  if (entry != nullptr) {
    if (!is_string(entry)) return ctx.error(errors::kWrongType);
    if (entry->value.is_int()) {
      current = entry->value.int_value();
    } else {
      char scratch[kInt64BufferSize];
      if (!parse_int64(entry->value.string_view(scratch), &current)) {
        return ctx.error(errors::kNotInteger);
      }
    }
  }
  if ((delta < 0 && current < 0 && delta < kInt64Min - current) ||
      (delta > 0 && current > 0 && delta > kInt64Max - current)) {
    return ctx.error(errors::kOverflow);
  }
  const int64_t result = current + delta;
  store_counter(ctx, entry, key, Value::make_int(result));
  ctx.changed(key, kNotifyString, "incrby");
  ctx.reply.integer(result);
}

void incr_command(CommandContext& ctx) { incr_decr(ctx, 1); }
void decr_command(CommandContext& ctx) { incr_decr(ctx, -1); }

void incrby_command(CommandContext& ctx) {
  int64_t delta;
  if (!parse_int64(ctx.args[2], &delta)) return ctx.error(errors::kNotInteger);
  incr_decr(ctx, delta);
}

void decrby_command(CommandContext& ctx) {
  int64_t delta;
  if (!parse_int64(ctx.args[2], &delta)) return ctx.error(errors::kNotInteger);
  // -LLONG_MIN does not exist.
  if (delta == kInt64Min) return ctx.error(errors::kDecrementOverflow);
  incr_decr(ctx, -delta);
}

void incrbyfloat_command(CommandContext& ctx) {
  std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  long double current = 0;
  if (entry != nullptr) {
    if (!is_string(entry)) return ctx.error(errors::kWrongType);
    if (entry->value.is_int()) {
      current = static_cast<long double>(entry->value.int_value());
    } else {
      char scratch[kInt64BufferSize];
      if (!parse_long_double(entry->value.string_view(scratch), &current)) {
        return ctx.error(errors::kNotFloat);
      }
    }
  }
  long double increment;
  if (!parse_long_double(ctx.args[2], &increment)) return ctx.error(errors::kNotFloat);
  const long double result = current + increment;
  if (std::isnan(result) || std::isinf(result)) return ctx.error(errors::kIncrFloatNaNOrInf);
  // The result is kept as text, never integer-encoded, exactly as it is replied.
  const std::string text = format_long_double(result);
  store_counter(ctx, entry, key, Value::make_plain_string(text));
  ctx.changed(key, kNotifyString, "incrbyfloat");
  ctx.propagate({"SET", key, text, "KEEPTTL"});
  ctx.reply.bulk(text);
}

// --- LCS -----------------------------------------------------------------------------------

struct LcsOptions {
  bool idx = false;
  bool len = false;
  bool with_match_len = false;
  int64_t min_match_len = 0;
};

// Emits one matched range of an IDX reply: [[a_start, a_end], [b_start, b_end], (length)].
void reply_lcs_range(ReplyWriter& reply, const LcsOptions& options, uint32_t a_start,
                     uint32_t a_end, uint32_t b_start, uint32_t b_end) {
  reply.array_header(options.with_match_len ? 3 : 2);
  reply.array_header(2);
  reply.integer(a_start);
  reply.integer(a_end);
  reply.array_header(2);
  reply.integer(b_start);
  reply.integer(b_end);
  if (options.with_match_len) reply.integer(a_end - a_start + 1);
}

void lcs_command(CommandContext& ctx) {
  // Keys are read (and type-checked) before the options, as Redis does.
  const Entry* entry_a = ctx.lookup_read(ctx.args[1]);
  const Entry* entry_b = ctx.lookup_read(ctx.args[2]);
  if ((entry_a != nullptr && !is_string(entry_a)) || (entry_b != nullptr && !is_string(entry_b))) {
    return ctx.error(errors::kLcsNotStrings);
  }
  LcsOptions options;
  for (size_t i = 3; i < ctx.args.size(); ++i) {
    std::string_view opt = ctx.args[i];
    const bool has_value = i + 1 < ctx.args.size();
    if (is_option(opt, "IDX")) {
      options.idx = true;
    } else if (is_option(opt, "LEN")) {
      options.len = true;
    } else if (is_option(opt, "WITHMATCHLEN")) {
      options.with_match_len = true;
    } else if (is_option(opt, "MINMATCHLEN") && has_value) {
      if (!parse_int64(ctx.args[++i], &options.min_match_len)) {
        return ctx.error(errors::kNotInteger);
      }
      if (options.min_match_len < 0) options.min_match_len = 0;
    } else {
      return ctx.error(errors::kSyntax);
    }
  }
  if (options.idx && options.len) return ctx.error(errors::kLcsLenAndIdx);

  char scratch_a[kInt64BufferSize], scratch_b[kInt64BufferSize];
  std::string_view a = entry_a != nullptr ? entry_a->value.string_view(scratch_a) : "";
  std::string_view b = entry_b != nullptr ? entry_b->value.string_view(scratch_b) : "";
  if (a.size() >= UINT32_MAX - 1 || b.size() >= UINT32_MAX - 1) {
    return ctx.error(errors::kLcsStringTooLong);
  }
  const uint32_t a_len = static_cast<uint32_t>(a.size());
  const uint32_t b_len = static_cast<uint32_t>(b.size());

  // The classic dynamic-programming table: cell (i, j) holds the LCS length of a[0..i) and
  // b[0..j). The ranges Redis reports depend on walking this exact table back, tie-breaks
  // included, so it is kept whole rather than in two rows.
  const uint64_t cells = static_cast<uint64_t>(a_len + 1ull) * (b_len + 1ull);
  const uint64_t table_bytes = cells * sizeof(uint32_t);
  if (table_bytes > static_cast<uint64_t>(ctx.server.settings().proto_max_bulk_len)) {
    return ctx.error(errors::kLcsOverProtoMaxBulkLen);
  }
  std::unique_ptr<uint32_t[]> table(new (std::nothrow) uint32_t[cells]);
  if (!table) return ctx.error(errors::kLcsAllocationFailed);
  const uint64_t row = b_len + 1ull;
  auto cell = [&](uint32_t i, uint32_t j) -> uint32_t& { return table[i * row + j]; };
  for (uint32_t i = 0; i <= a_len; ++i) {
    for (uint32_t j = 0; j <= b_len; ++j) {
      if (i == 0 || j == 0) {
        cell(i, j) = 0;
      } else if (a[i - 1] == b[j - 1]) {
        cell(i, j) = cell(i - 1, j - 1) + 1;
      } else {
        cell(i, j) = std::max(cell(i - 1, j), cell(i, j - 1));
      }
    }
  }
  const uint32_t total = cell(a_len, b_len);
  if (options.len) return ctx.reply.integer(total);

  // Walk back from the end, collecting the common subsequence (filled from its end) and, for
  // IDX, each maximal run of consecutive matches as it closes.
  std::string common(options.idx ? 0 : total, '\0');
  ReplyWriter& reply = ctx.reply;
  DeferredLength matches_header;
  size_t match_count = 0;
  if (options.idx) {
    reply.map_header(2);
    reply.bulk("matches");
    matches_header = reply.begin_deferred();
  }
  bool in_run = false;
  uint32_t a_start = 0, a_end = 0, b_start = 0, b_end = 0;
  uint32_t remaining = total;
  auto close_run = [&] {
    const uint64_t run_length = a_end - a_start + 1ull;
    if (options.idx && (options.min_match_len == 0 ||
                        run_length >= static_cast<uint64_t>(options.min_match_len))) {
      reply_lcs_range(reply, options, a_start, a_end, b_start, b_end);
      ++match_count;
    }
    in_run = false;
  };
  uint32_t i = a_len, j = b_len;
  while (i > 0 && j > 0) {
    if (a[i - 1] == b[j - 1]) {
      if (!options.idx) common[remaining - 1] = a[i - 1];
      --remaining;
      if (!in_run) {
        in_run = true;
        a_start = a_end = i - 1;
        b_start = b_end = j - 1;
      } else {
        a_start = i - 1;
        b_start = j - 1;
      }
      --i;
      --j;
      // A run touching the start of either string cannot grow further: the walk ends.
      if (a_start == 0 || b_start == 0) close_run();
    } else {
      if (cell(i - 1, j) > cell(i, j - 1)) {
        --i;
      } else {
        --j;
      }
      if (in_run) close_run();
    }
  }
  if (!options.idx) return reply.bulk(common);
  reply.end_deferred_array(matches_header, match_count);
  reply.bulk("len");
  reply.integer(total);
}

// --- Table -----------------------------------------------------------------------------------

constexpr std::string_view kGetrangeComplexity =
    "O(N) where N is the length of the returned string. The complexity is ultimately determined "
    "by the returned length, but because creating a substring from an existing string is very "
    "cheap, it can be considered O(1) for small strings.";

constexpr CommandSpec kStringCommands[] = {
    {"get", 2, kReadonly | kFast, 1, 1, 1, kAclString, get_command, "string", "1.0.0",
     "Get the value of a key", "O(1)"},
    {"set", -3, kWrite | kDenyOom, 1, 1, 1, kAclString, set_command, "string", "1.0.0",
     "Set the string value of a key", "O(1)"},
    {"setnx", 3, kWrite | kDenyOom | kFast, 1, 1, 1, kAclString, setnx_command, "string", "1.0.0",
     "Set the value of a key, only if the key does not exist", "O(1)"},
    {"setex", 4, kWrite | kDenyOom, 1, 1, 1, kAclString, setex_command, "string", "2.0.0",
     "Set the value and expiration of a key", "O(1)"},
    {"psetex", 4, kWrite | kDenyOom, 1, 1, 1, kAclString, psetex_command, "string", "2.6.0",
     "Set the value and expiration in milliseconds of a key", "O(1)"},
    {"getex", -2, kWrite | kFast, 1, 1, 1, kAclString, getex_command, "string", "6.2.0",
     "Get the value of a key and optionally set its expiration", "O(1)"},
    {"getdel", 2, kWrite | kFast, 1, 1, 1, kAclString, getdel_command, "string", "6.2.0",
     "Get the value of a key and delete the key", "O(1)"},
    {"getset", 3, kWrite | kDenyOom | kFast, 1, 1, 1, kAclString, getset_command, "string", "1.0.0",
     "Set the string value of a key and return its old value", "O(1)"},
    {"mget", -2, kReadonly | kFast, 1, -1, 1, kAclString, mget_command, "string", "1.0.0",
     "Get the values of all the given keys", "O(N) where N is the number of keys to retrieve."},
    {"mset", -3, kWrite | kDenyOom, 1, -1, 2, kAclString, mset_command, "string", "1.0.1",
     "Set multiple keys to multiple values", "O(N) where N is the number of keys to set."},
    {"msetnx", -3, kWrite | kDenyOom, 1, -1, 2, kAclString, msetnx_command, "string", "1.0.1",
     "Set multiple keys to multiple values, only if none of the keys exist",
     "O(N) where N is the number of keys to set."},
    {"append", 3, kWrite | kDenyOom | kFast, 1, 1, 1, kAclString, append_command, "string", "2.0.0",
     "Append a value to a key",
     "O(1). The amortized time complexity is O(1) assuming the appended value is small and the "
     "already present value is of any size, since the dynamic string library used by Redis will "
     "double the free space available on every reallocation."},
    {"strlen", 2, kReadonly | kFast, 1, 1, 1, kAclString, strlen_command, "string", "2.2.0",
     "Get the length of the value stored in a key", "O(1)"},
    {"incr", 2, kWrite | kDenyOom | kFast, 1, 1, 1, kAclString, incr_command, "string", "1.0.0",
     "Increment the integer value of a key by one", "O(1)"},
    {"decr", 2, kWrite | kDenyOom | kFast, 1, 1, 1, kAclString, decr_command, "string", "1.0.0",
     "Decrement the integer value of a key by one", "O(1)"},
    {"incrby", 3, kWrite | kDenyOom | kFast, 1, 1, 1, kAclString, incrby_command, "string", "1.0.0",
     "Increment the integer value of a key by the given amount", "O(1)"},
    {"decrby", 3, kWrite | kDenyOom | kFast, 1, 1, 1, kAclString, decrby_command, "string", "1.0.0",
     "Decrement the integer value of a key by the given number", "O(1)"},
    {"incrbyfloat", 3, kWrite | kDenyOom | kFast, 1, 1, 1, kAclString, incrbyfloat_command,
     "string", "2.6.0", "Increment the float value of a key by the given amount", "O(1)"},
    {"getrange", 4, kReadonly, 1, 1, 1, kAclString, getrange_command, "string", "2.4.0",
     "Get a substring of the string stored at a key", kGetrangeComplexity},
    {"substr", 4, kReadonly, 1, 1, 1, kAclString, getrange_command, "string", "1.0.0",
     "Get a substring of the string stored at a key", kGetrangeComplexity},
    {"setrange", 4, kWrite | kDenyOom, 1, 1, 1, kAclString, setrange_command, "string", "2.2.0",
     "Overwrite part of a string at key starting at the specified offset",
     "O(1), not counting the time taken to copy the new string in place. Usually, this string "
     "is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M "
     "being the length of the value argument."},
    {"lcs", -3, kReadonly, 1, 2, 1, kAclString, lcs_command, "string", "7.0.0",
     "Find longest common substring",
     "O(N*M) where N and M are the lengths of s1 and s2, respectively"},
    // Newer than Redis 7.0: Redis 8.4 (DIGEST, DELEX, MSETEX) and Valkey 9.0 (DELIFEQ).
    {"digest", 2, kReadonly | kFast, 1, 1, 1, kAclString, digest_command, "string", "8.4.0",
     "Returns the XXH3 hash of a string value.",
     "O(N) where N is the length of the string value."},
    {"delex", -2, kWrite | kFast, 1, 1, 1, kAclString, delex_command, "string", "8.4.0",
     "Conditionally removes the specified key based on value or digest comparison.",
     "O(1) for IFEQ/IFNE, O(N) for IFDEQ/IFDNE where N is the length of the string value."},
    {"delifeq", 3, kWrite | kFast, 1, 1, 1, kAclString, delifeq_command, "string", "9.0.0",
     "Delete key if value matches string.", "O(1)"},
    {"msetex", -4, kWrite | kDenyOom | kMovableKeys, 0, 0, 0, kAclString, msetex_command,
     "string", "8.4.0",
     "Atomically sets multiple string keys with a shared expiration in a single operation.",
     "O(N) where N is the number of keys to set.", {}, msetex_keys},
};

}  // namespace

void register_string_commands(CommandTable& table) { table.add(kStringCommands); }

}  // namespace keywarden
