// Expiry commands: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (with NX, XX, GT, LT), TTL, PTTL,
// EXPIRETIME, PEXPIRETIME and PERSIST, as Redis 7.0's expire.c defines them.
//
// Deadlines are absolute Unix milliseconds. A command that sets a deadline propagates as
// PEXPIREAT with the absolute time, so that a replica or an AOF replay lands on the same
// instant whenever it runs; one whose deadline is already due deletes the key at once and
// propagates DEL (UNLINK under lazyfree-lazy-expire) instead.
#include <cstdint>
#include <string>
#include <vector>

#include "commands/context.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "common/ascii.h"
#include "common/number.h"

namespace keywarden {
namespace {

enum ExpireCondition : uint8_t {
  kOnlyWithoutTtl = 1 << 0,  // NX
  kOnlyWithTtl = 1 << 1,     // XX
  kOnlyLater = 1 << 2,       // GT
  kOnlyEarlier = 1 << 3,     // LT
};

// Reads the NX|XX|GT|LT words after the time. Redis reads them before the time itself, so an
// option error wins over a bad number.
bool parse_conditions(CommandContext& ctx, uint8_t* conditions) {
  for (size_t i = 3; i < ctx.args.size(); ++i) {
    const std::string_view option = ctx.args[i];
    if (equals_ignore_case(option, "NX")) {
      *conditions |= kOnlyWithoutTtl;
    } else if (equals_ignore_case(option, "XX")) {
      *conditions |= kOnlyWithTtl;
    } else if (equals_ignore_case(option, "GT")) {
      *conditions |= kOnlyLater;
    } else if (equals_ignore_case(option, "LT")) {
      *conditions |= kOnlyEarlier;
    } else {
      // Redis formats the option with %s, which stops at a NUL byte.
      std::string text(errors::kUnsupportedOptionPrefix);
      text.append(option.substr(0, option.find('\0')));
      ctx.error(text);
      return false;
    }
  }
  if ((*conditions & kOnlyWithoutTtl) != 0 && (*conditions & ~kOnlyWithoutTtl) != 0) {
    ctx.error(errors::kNxXxGtLtConflict);
    return false;
  }
  if ((*conditions & kOnlyLater) != 0 && (*conditions & kOnlyEarlier) != 0) {
    ctx.error(errors::kGtLtConflict);
    return false;
  }
  return true;
}

// Whether the conditions allow replacing a key's deadline `current_ms` (kNoExpiry: none) with
// `deadline_ms`. A key without a deadline counts as living forever: GT never beats that, LT
// always does.
bool conditions_allow(uint8_t conditions, int64_t current_ms, int64_t deadline_ms) {
  const bool has_ttl = current_ms != kNoExpiry;
  if ((conditions & kOnlyWithoutTtl) != 0 && has_ttl) return false;
  if ((conditions & kOnlyWithTtl) != 0 && !has_ttl) return false;
  if ((conditions & kOnlyLater) != 0 && (!has_ttl || deadline_ms <= current_ms)) {
    return false;
  }
  if ((conditions & kOnlyEarlier) != 0 && has_ttl && deadline_ms >= current_ms) {
    return false;
  }
  return true;
}

// EXPIRE and friends: `base_ms` is now for the relative forms and 0 for the absolute ones.
void expire_generic(CommandContext& ctx, int64_t base_ms, bool in_seconds) {
  uint8_t conditions = 0;
  if (!parse_conditions(ctx, &conditions)) return;
  int64_t deadline_ms;
  if (!parse_int64(ctx.args[2], &deadline_ms)) return ctx.error(errors::kNotInteger);
  // Negative times are allowed (they delete the key); only overflow is refused.
  if (in_seconds) {
    if (deadline_ms > INT64_MAX / 1000 || deadline_ms < INT64_MIN / 1000) {
      return ctx.error(errors::invalid_expire_time(ctx.command.full_name));
    }
    deadline_ms *= 1000;
  }
  if (deadline_ms > INT64_MAX - base_ms) {
    return ctx.error(errors::invalid_expire_time(ctx.command.full_name));
  }
  deadline_ms += base_ms;

  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) return ctx.reply.integer(0);
  if (conditions != 0 && !conditions_allow(conditions, ctx.db().deadline_of(entry), deadline_ms)) {
    return ctx.reply.integer(0);
  }

  Database& db = ctx.db();
  // A deadline already reached deletes the key now rather than leaving it to expire: a
  // replica told PEXPIREAT in the past would disagree about whether the key still exists.
  // (Redis keeps the key while loading or on a replica; neither exists here yet.)
  if (deadline_ms <= ctx.now_ms) {
    const bool lazy = ctx.server.keyspace().lazy_free().settings().lazy_expire;
    db.remove(entry, lazy);
    ctx.changed(db, key, kNotifyGeneric, "del");
    ctx.propagate({lazy ? "UNLINK" : "DEL", key});
    return ctx.reply.integer(1);
  }

  entry = db.set_expiry(entry, deadline_ms);
  ctx.changed(db, key, kNotifyGeneric, "expire");
  // PEXPIREAT key <absolute ms>, keeping the condition words as Redis rewrites only the name
  // and the time.
  char digits[kMaxInt64Chars];
  std::vector<std::string_view> effect(ctx.args.begin(), ctx.args.end());
  effect[0] = "PEXPIREAT";
  effect[2] = std::string_view(digits, int64_to_chars(deadline_ms, digits));
  ctx.propagate(effect);
  ctx.reply.integer(1);
}

void expire_command(CommandContext& ctx) { expire_generic(ctx, ctx.now_ms, true); }
void pexpire_command(CommandContext& ctx) { expire_generic(ctx, ctx.now_ms, false); }
void expireat_command(CommandContext& ctx) { expire_generic(ctx, 0, true); }
void pexpireat_command(CommandContext& ctx) { expire_generic(ctx, 0, false); }

// TTL and friends: -2 for a missing key, -1 for one without deadline. Seconds are rounded to
// the nearest, as Redis does, so a key set to live 10 s reads 10 until 9.5 s remain.
void ttl_generic(CommandContext& ctx, bool in_ms, bool absolute) {
  Entry* entry = ctx.lookup_read(ctx.args[1], CommandContext::kLookupNoTouch);
  if (entry == nullptr) return ctx.reply.integer(-2);
  if (!entry->has_expiry()) return ctx.reply.integer(-1);
  const int64_t deadline_ms = ctx.db().deadline_of(entry);
  int64_t value = absolute ? deadline_ms : deadline_ms - ctx.now_ms;
  if (value < 0) value = 0;
  // Rounded without overflow: a deadline near INT64_MAX reads as Redis prints it
  // (9223372036854776 for INT64_MAX ms), not wrapped negative.
  const int64_t seconds = static_cast<int64_t>((static_cast<__int128>(value) + 500) / 1000);
  ctx.reply.integer(in_ms ? value : seconds);
}

void ttl_command(CommandContext& ctx) { ttl_generic(ctx, false, false); }
void pttl_command(CommandContext& ctx) { ttl_generic(ctx, true, false); }
void expiretime_command(CommandContext& ctx) { ttl_generic(ctx, false, true); }
void pexpiretime_command(CommandContext& ctx) { ttl_generic(ctx, true, true); }

void persist_command(CommandContext& ctx) {
  Entry* entry = ctx.lookup_write(ctx.args[1]);
  if (entry == nullptr || !entry->has_expiry()) return ctx.reply.integer(0);
  entry = ctx.db().set_expiry(entry, kNoExpiry);
  ctx.changed(ctx.args[1], kNotifyGeneric, "persist");
  ctx.reply.integer(1);
}

constexpr uint32_t kSetFlags = kWrite | kFast;
constexpr uint32_t kGetFlags = kReadonly | kFast;

constexpr CommandSpec kExpireCommands[] = {
    {"expire", -3, kSetFlags, 1, 1, 1, kAclKeyspace, expire_command, "generic", "1.0.0",
     "Set a key's time to live in seconds", "O(1)"},
    {"pexpire", -3, kSetFlags, 1, 1, 1, kAclKeyspace, pexpire_command, "generic", "2.6.0",
     "Set a key's time to live in milliseconds", "O(1)"},
    {"expireat", -3, kSetFlags, 1, 1, 1, kAclKeyspace, expireat_command, "generic", "1.2.0",
     "Set the expiration for a key as a UNIX timestamp", "O(1)"},
    {"pexpireat", -3, kSetFlags, 1, 1, 1, kAclKeyspace, pexpireat_command, "generic", "2.6.0",
     "Set the expiration for a key as a UNIX timestamp specified in milliseconds", "O(1)"},
    {"ttl", 2, kGetFlags, 1, 1, 1, kAclKeyspace, ttl_command, "generic", "1.0.0",
     "Get the time to live for a key in seconds", "O(1)"},
    {"pttl", 2, kGetFlags, 1, 1, 1, kAclKeyspace, pttl_command, "generic", "2.6.0",
     "Get the time to live for a key in milliseconds", "O(1)"},
    {"expiretime", 2, kGetFlags, 1, 1, 1, kAclKeyspace, expiretime_command, "generic", "7.0.0",
     "Get the expiration Unix timestamp for a key", "O(1)"},
    {"pexpiretime", 2, kGetFlags, 1, 1, 1, kAclKeyspace, pexpiretime_command, "generic",
     "7.0.0", "Get the expiration Unix timestamp for a key in milliseconds", "O(1)"},
    {"persist", 2, kSetFlags, 1, 1, 1, kAclKeyspace, persist_command, "generic", "2.2.0",
     "Remove the expiration from a key", "O(1)"},
};

}  // namespace

void register_expire_commands(CommandTable& table) { table.add(kExpireCommands); }

}  // namespace keywarden
