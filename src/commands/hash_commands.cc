// Hash commands: HSET, HSETNX, HMSET, HGET, HMGET, HGETALL, HKEYS, HVALS, HDEL, HLEN, HSTRLEN,
// HEXISTS, HINCRBY, HINCRBYFLOAT, HRANDFIELD and HSCAN, with Redis 7.0's replies, argument
// checking order, encodings (listpack → hashtable at hash-max-listpack-entries/-value) and
// propagation; and hash-field expiration as Redis 8.4 defines it: HEXPIRE, HPEXPIRE, HEXPIREAT,
// HPEXPIREAT, HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME, HPERSIST, HGETEX, HSETEX and HGETDEL.
//
// Writes propagate as received except HINCRBYFLOAT, which propagates its result as
// HSET key field <value> (HSETEX … KEEPTTL when the field has a deadline, as Redis 8) so that
// replicas never redo float arithmetic. A hash whose last field is deleted is deleted with it.
//
// Field deadlines: the keyspace deletes due fields when a hash is looked up (storage/
// database.h), so handlers never meet one, except while expiry is held (a replica, CLIENT
// PAUSE), when the readers below hide them. HSET drops a field's deadline; HINCRBY,
// HINCRBYFLOAT and HSETEX KEEPTTL keep it (Redis 8). The HEXPIRE family propagates as
// HPEXPIREAT with absolute milliseconds and only the fields it changed; a deadline already
// passed deletes the field (reply 2) and propagates HDEL.
#include <cmath>
#include <cstdint>
#include <string>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands/context.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "commands/scan_options.h"
#include "common/ascii.h"
#include "common/glob.h"
#include "common/number.h"
#include "types/hash_value.h"
#include "types/value.h"

namespace keywarden {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

bool is_hash(const Entry* entry) { return entry->value.type() == ValueType::kHash; }

// True when `hash` may show fields whose deadline passed: expiry is held (a replica, CLIENT
// PAUSE), so they were not deleted, and this client is not the one whose commands see them.
bool must_hide_due_fields(CommandContext& ctx, const HashValue& hash) {
  const Database& db = ctx.db();
  return db.expiry_held() && !db.expired_visible() && hash.earliest_deadline() < ctx.now_ms;
}

// What a reader may see of `hash`: itself, or while due fields must be hidden a copy without
// them (rare and short-lived: until the primary's HDEL arrives or the pause ends), which stays
// valid until the next call. Null when nothing would be left.
const HashValue* visible_hash(CommandContext& ctx, const HashValue* hash) {
  if (hash == nullptr || !must_hide_due_fields(ctx, *hash)) return hash;
  static HashValue view;  // the command thread's only
  view = *hash;
  view.remove_due(ctx.now_ms, SIZE_MAX, [](std::string_view) {});
  return view.empty() ? nullptr : &view;
}

// The hash at `key` for reading: null when absent. Sets *wrong_type (and replies WRONGTYPE)
// when the key holds another type.
const HashValue* read_hash(CommandContext& ctx, std::string_view key, bool* wrong_type) {
  return visible_hash(ctx, ctx.read_collection<HashValue>(key, ValueType::kHash, wrong_type));
}

// The entry of the hash at `key` for writing, created empty when absent (the caller stores at
// least one field before returning). Null after a WRONGTYPE reply.
Entry* write_hash(CommandContext& ctx, std::string_view key) {
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) {
    entry = ctx.db().add(key, Value::make_hash());
    ctx.created(key);
    return entry;
  }
  if (!is_hash(entry)) {
    ctx.error(errors::kWrongType);
    return nullptr;
  }
  return entry;
}

const HashLimits& limits(CommandContext& ctx) { return ctx.server.settings().hash_limits; }

// --- HSET, HMSET, HSETNX -------------------------------------------------------------------

void hset_generic(CommandContext& ctx, bool reply_created) {
  if (ctx.args.size() % 2 != 0) {
    return ctx.error(errors::wrong_arity(reply_created ? "hset" : "hmset"));
  }
  Entry* entry = write_hash(ctx, ctx.args[1]);
  if (entry == nullptr) return;
  HashValue& hash = entry->value.as<HashValue>();
  // Redis converts before storing anything when any argument is too long for the listpack.
  if (hash.is_listpack()) {
    for (size_t i = 2; i < ctx.args.size(); ++i) {
      if (static_cast<int64_t>(ctx.args[i].size()) > limits(ctx).max_listpack_value) {
        hash.convert_to_table();
        break;
      }
    }
  }
  int64_t created = 0;
  for (size_t i = 2; i < ctx.args.size(); i += 2) {
    if (hash.set(ctx.args[i], ctx.args[i + 1], limits(ctx))) ++created;
  }
  // Overwritten fields lost their deadlines.
  ctx.db().refresh_field_expiry(entry);
  const size_t pairs = (ctx.args.size() - 2) / 2;
  ctx.changed(ctx.args[1], kNotifyHash, "hset", pairs);
  if (reply_created) {
    ctx.reply.integer(created);
  } else {
    ctx.reply.simple_string("OK");
  }
}

void hset_command(CommandContext& ctx) { hset_generic(ctx, true); }
void hmset_command(CommandContext& ctx) { hset_generic(ctx, false); }

void hsetnx_command(CommandContext& ctx) {
  Entry* entry = write_hash(ctx, ctx.args[1]);
  if (entry == nullptr) return;
  HashValue& hash = entry->value.as<HashValue>();
  if (hash.find(ctx.args[2]).has_value()) return ctx.reply.integer(0);
  hash.set(ctx.args[2], ctx.args[3], limits(ctx));
  ctx.changed(ctx.args[1], kNotifyHash, "hset");
  ctx.reply.integer(1);
}

// --- Reads ---------------------------------------------------------------------------------

void hget_command(CommandContext& ctx) {
  bool wrong_type;
  const HashValue* hash = read_hash(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  const std::optional<std::string_view> value =
      hash == nullptr ? std::nullopt : hash->find(ctx.args[2]);
  if (!value.has_value()) return ctx.reply.null();
  ctx.reply.bulk(*value);
}

void hmget_command(CommandContext& ctx) {
  bool wrong_type;
  const HashValue* hash = read_hash(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  ctx.reply.array_header(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    const std::optional<std::string_view> value =
        hash == nullptr ? std::nullopt : hash->find(ctx.args[i]);
    if (!value.has_value()) {
      ctx.reply.null();
    } else {
      ctx.reply.bulk(*value);
    }
  }
}

enum class Parts : uint8_t { kFields = 1, kValues = 2, kBoth = 3 };

void reply_all(CommandContext& ctx, Parts parts) {
  bool wrong_type;
  const HashValue* hash = read_hash(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  const size_t size = hash == nullptr ? 0 : hash->size();
  if (parts == Parts::kBoth) {
    ctx.reply.map_header(size);
  } else {
    ctx.reply.array_header(size);
  }
  if (hash == nullptr) return;
  hash->for_each([&](std::string_view field, std::string_view value) {
    if (parts != Parts::kValues) ctx.reply.bulk(field);
    if (parts != Parts::kFields) ctx.reply.bulk(value);
  });
}

void hgetall_command(CommandContext& ctx) { reply_all(ctx, Parts::kBoth); }
void hkeys_command(CommandContext& ctx) { reply_all(ctx, Parts::kFields); }
void hvals_command(CommandContext& ctx) { reply_all(ctx, Parts::kValues); }

void hlen_command(CommandContext& ctx) {
  bool wrong_type;
  const HashValue* hash = read_hash(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  ctx.reply.integer(hash == nullptr ? 0 : static_cast<int64_t>(hash->size()));
}

void hstrlen_command(CommandContext& ctx) {
  bool wrong_type;
  const HashValue* hash = read_hash(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  const std::optional<std::string_view> value =
      hash == nullptr ? std::nullopt : hash->find(ctx.args[2]);
  ctx.reply.integer(value.has_value() ? static_cast<int64_t>(value->size()) : 0);
}

void hexists_command(CommandContext& ctx) {
  bool wrong_type;
  const HashValue* hash = read_hash(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  ctx.reply.integer(hash != nullptr && hash->find(ctx.args[2]).has_value() ? 1 : 0);
}

// --- HDEL ----------------------------------------------------------------------------------

void hdel_command(CommandContext& ctx) {
  Entry* entry = ctx.lookup_write(ctx.args[1]);
  if (entry == nullptr) return ctx.reply.integer(0);
  if (!is_hash(entry)) return ctx.error(errors::kWrongType);
  HashValue& hash = entry->value.as<HashValue>();
  int64_t deleted = 0;
  bool key_removed = false;
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    if (hash.remove(ctx.args[i])) {
      ++deleted;
      if (hash.empty()) {
        ctx.db().remove(entry);
        key_removed = true;
        break;
      }
    }
  }
  if (deleted > 0) {
    if (!key_removed) ctx.db().refresh_field_expiry(entry);
    ctx.changed(ctx.args[1], kNotifyHash, "hdel", static_cast<uint64_t>(deleted));
    if (key_removed) ctx.also_notify(kNotifyGeneric, "del", ctx.args[1]);
  }
  ctx.reply.integer(deleted);
}

// --- HINCRBY, HINCRBYFLOAT -----------------------------------------------------------------

void hincrby_command(CommandContext& ctx) {
  int64_t increment;
  if (!parse_int64(ctx.args[3], &increment)) return ctx.error(errors::kNotInteger);
  Entry* entry = ctx.lookup_write(ctx.args[1]);
  if (entry != nullptr && !is_hash(entry)) return ctx.error(errors::kWrongType);
  int64_t current = 0;
  if (entry != nullptr) {
    const std::optional<std::string_view> value = entry->value.as<HashValue>().find(ctx.args[2]);
    if (value.has_value() && !parse_int64(*value, &current)) {
      return ctx.error(errors::kHashValueNotInteger);
    }
  }
  if ((increment < 0 && current < 0 && increment < kInt64Min - current) ||
      (increment > 0 && current > 0 && increment > kInt64Max - current)) {
    return ctx.error(errors::kOverflow);
  }
  const int64_t result = current + increment;
  if (entry == nullptr) {
    entry = ctx.db().add(ctx.args[1], Value::make_hash());
    ctx.created(ctx.args[1]);
  }
  char digits[kMaxInt64Chars];
  // Redis 8 keeps the field's deadline through an increment.
  entry->value.as<HashValue>().set(ctx.args[2],
                                   std::string_view(digits, int64_to_chars(result, digits)),
                                   limits(ctx), /*keep_deadline=*/true);
  ctx.changed(ctx.args[1], kNotifyHash, "hincrby");
  ctx.reply.integer(result);
}

void hincrbyfloat_command(CommandContext& ctx) {
  long double increment;
  if (!parse_long_double(ctx.args[3], &increment)) return ctx.error(errors::kNotFloat);
  if (std::isnan(increment) || std::isinf(increment)) return ctx.error(errors::kNaNOrInfinity);
  Entry* entry = ctx.lookup_write(ctx.args[1]);
  if (entry != nullptr && !is_hash(entry)) return ctx.error(errors::kWrongType);
  long double current = 0;
  if (entry != nullptr) {
    const std::optional<std::string_view> value = entry->value.as<HashValue>().find(ctx.args[2]);
    if (value.has_value() && !parse_long_double(*value, &current)) {
      return ctx.error(errors::kHashValueNotFloat);
    }
  }
  const long double result = current + increment;
  if (std::isnan(result) || std::isinf(result)) return ctx.error(errors::kIncrFloatNaNOrInf);
  const std::string text = format_long_double(result);
  if (entry == nullptr) {
    entry = ctx.db().add(ctx.args[1], Value::make_hash());
    ctx.created(ctx.args[1]);
  }
  HashValue& hash = entry->value.as<HashValue>();
  hash.set(ctx.args[2], text, limits(ctx), /*keep_deadline=*/true);
  ctx.changed(ctx.args[1], kNotifyHash, "hincrbyfloat");
  if (hash.field_deadline(ctx.args[2]) == kNoFieldDeadline) {
    ctx.propagate({"HSET", ctx.args[1], ctx.args[2], text});
  } else {
    // Redis 8's form, which keeps the deadline on the replica; HSET (which Redis 7.0 also
    // reads) for the usual field without one.
    ctx.propagate({"HSETEX", ctx.args[1], "KEEPTTL", "FIELDS", "1", ctx.args[2], text});
  }
  ctx.reply.bulk(text);
}

// --- HRANDFIELD ----------------------------------------------------------------------------

void reply_random_pair(CommandContext& ctx, const HashValue::PairView& pair, bool with_values) {
  if (with_values && ctx.reply.resp() == 3) ctx.reply.array_header(2);
  ctx.reply.bulk(pair.field);
  if (with_values) ctx.reply.bulk(pair.value);
}

void hrandfield_command(CommandContext& ctx) {
  if (ctx.args.size() == 2) {
    bool wrong_type;
    const HashValue* hash = read_hash(ctx, ctx.args[1], &wrong_type);
    if (wrong_type) return;
    if (hash == nullptr) return ctx.reply.null();
    return ctx.reply.bulk(hash->random_pair(ctx.server.keyspace().rng()).field);
  }

  int64_t count;
  if (!parse_int64(ctx.args[2], &count)) return ctx.error(errors::kNotInteger);
  if (count == kInt64Min) return ctx.error(errors::kCountOutOfRange);
  bool with_values = false;
  if (ctx.args.size() > 4 ||
      (ctx.args.size() == 4 && !equals_ignore_case(ctx.args[3], "WITHVALUES"))) {
    return ctx.error(errors::kSyntax);
  }
  if (ctx.args.size() == 4) {
    with_values = true;
    // Twice the count must still fit: the RESP2 reply holds fields and values.
    if (count < -kInt64Max / 2 || count > kInt64Max / 2) {
      return ctx.error(errors::kValueOutOfRange);
    }
  }
  bool wrong_type;
  const HashValue* hash = read_hash(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  if (hash == nullptr || count == 0) return ctx.reply.array_header(0);

  const bool flat_pairs = with_values && ctx.reply.resp() == 2;
  std::mt19937_64& rng = ctx.server.keyspace().rng();
  if (count < 0) {
    // A negative count allows repetitions: exactly -count draws.
    const uint64_t draws = static_cast<uint64_t>(-count);
    ctx.reply.array_header(flat_pairs ? draws * 2 : draws);
    // A client closed for its output limit stops the draws.
    for (uint64_t i = 0; i < draws && !ctx.reply.discarding(); ++i) {
      reply_random_pair(ctx, hash->random_pair(rng), with_values);
    }
    return;
  }
  const size_t size = hash->size();
  if (static_cast<uint64_t>(count) >= size) {
    ctx.reply.array_header(flat_pairs ? size * 2 : size);
    hash->for_each([&](std::string_view field, std::string_view value) {
      if (with_values && ctx.reply.resp() == 3) ctx.reply.array_header(2);
      ctx.reply.bulk(field);
      if (with_values) ctx.reply.bulk(value);
    });
    return;
  }
  const std::vector<HashValue::PairView> chosen =
      hash->random_distinct(static_cast<size_t>(count), rng);
  ctx.reply.array_header(flat_pairs ? chosen.size() * 2 : chosen.size());
  for (const HashValue::PairView& pair : chosen) reply_random_pair(ctx, pair, with_values);
}

// --- HSCAN ---------------------------------------------------------------------------------

void hscan_command(CommandContext& ctx) {
  uint64_t cursor;
  ScanOptions options;
  const HashValue* hash =
      begin_collection_scan<HashValue>(ctx, ValueType::kHash, &cursor, &options);
  if (hash == nullptr) return;
  // The cursor belongs to the stored table, so due fields are skipped rather than copied out.
  const bool hide_due = must_hide_due_fields(ctx, *hash);
  std::vector<std::string_view> items;
  size_t visited = 0;
  auto collect = [&](std::string_view field, std::string_view value) {
    ++visited;
    if (hide_due) {
      const int64_t deadline = hash->field_deadline(field);
      if (deadline != kNoFieldDeadline && deadline < ctx.now_ms) return;
    }
    if (options.use_pattern && !glob_match(options.pattern, field)) return;
    items.push_back(field);
    items.push_back(value);
  };
  cursor = walk_collection_scan(
      cursor, options.count, [&](uint64_t at) { return hash->scan(at, collect); },
      [&] { return visited; });
  reply_scan_cursor(ctx, cursor);
  ctx.reply.array_header(items.size());
  for (std::string_view item : items) ctx.reply.bulk(item);
}

// --- Hash-field expiration ------------------------------------------------------------------

// Reads a field expiry argument as Redis 8's parseExpireTime: a non-negative integer in
// seconds or milliseconds, relative to `base_ms` (0 for absolute times), made an absolute
// Unix time in milliseconds that must not pass kMaxFieldDeadlineMs. Replies the error itself.
bool parse_field_expire_time(CommandContext& ctx, std::string_view text, bool seconds,
                             int64_t base_ms, int64_t* deadline_ms) {
  int64_t value;
  if (!parse_int64(text, &value)) {
    ctx.error(errors::kNotInteger);
    return false;
  }
  if (value < 0) {
    ctx.error(errors::kExpireTimeNegative);
    return false;
  }
  if (seconds) {
    if (value > kMaxFieldDeadlineMs / 1000) {
      ctx.error(errors::invalid_expire_time(ctx.command.full_name));
      return false;
    }
    value *= 1000;
  }
  if (value > kMaxFieldDeadlineMs - base_ms) {
    ctx.error(errors::invalid_expire_time(ctx.command.full_name));
    return false;
  }
  *deadline_ms = value + base_ms;
  return true;
}

// "FIELDS numfields field…" with `fields_at` the index of FIELDS: checks the keyword, the count
// (a positive integer, else `count_error`) and that exactly that many fields follow. Sets
// *first to the first field's index. Replies the error itself.
bool parse_fields_clause(CommandContext& ctx, size_t fields_at, std::string_view count_error,
                         size_t* first, size_t* count) {
  if (fields_at + 1 >= ctx.args.size()) {
    ctx.error(errors::wrong_arity(ctx.command.full_name));
    return false;
  }
  if (!equals_ignore_case(ctx.args[fields_at], "FIELDS")) {
    ctx.error(errors::kFieldsMissing);
    return false;
  }
  int64_t number;
  if (!parse_int64(ctx.args[fields_at + 1], &number) || number < 1) {
    ctx.error(count_error);
    return false;
  }
  const size_t remaining = ctx.args.size() - fields_at - 2;
  if (static_cast<uint64_t>(number) != remaining) {
    ctx.error(errors::kNumFieldsMismatch);
    return false;
  }
  *first = fields_at + 2;
  *count = remaining;
  return true;
}

// The entry of the hash at `key` for a field-expiry write: null when absent or (after the
// WRONGTYPE reply, with *wrong_type set) of another type.
Entry* lookup_hash_for_write(CommandContext& ctx, std::string_view key, bool* wrong_type) {
  *wrong_type = false;
  Entry* entry = ctx.lookup_write(key);
  if (entry != nullptr && !is_hash(entry)) {
    *wrong_type = true;
    ctx.error(errors::kWrongType);
    return nullptr;
  }
  return entry;
}

// Redis 8's per-field results of setting a deadline (HEXPIRE replies them).
enum FieldExpireResult : int64_t {
  kFieldMissing = -2,
  kConditionNotMet = 0,
  kDeadlineSet = 1,
  kFieldDeleted = 2,
};

enum class ExpireCondition : uint8_t { kNone, kNx, kXx, kGt, kLt };

// Sets `field`'s deadline under `condition`, or deletes the field when the deadline is not in
// the future (recording it in *deleted for the caller's HDEL). A missing deadline counts as
// infinite for GT/LT, as for keys.
FieldExpireResult set_field_deadline(CommandContext& ctx, HashValue& hash, std::string_view field,
                                     int64_t deadline_ms, ExpireCondition condition) {
  if (!hash.find(field).has_value()) return kFieldMissing;
  const int64_t current = hash.field_deadline(field);
  if (current == kNoFieldDeadline) {
    if (condition == ExpireCondition::kXx || condition == ExpireCondition::kGt) {
      return kConditionNotMet;
    }
  } else if (condition == ExpireCondition::kNx ||
             (condition == ExpireCondition::kGt && current >= deadline_ms) ||
             (condition == ExpireCondition::kLt && current <= deadline_ms)) {
    return kConditionNotMet;
  }
  // A deadline at or before now deletes at once (Redis's checkAlreadyExpired); the primary's
  // own stream on a replica sets it as told, and the primary's HDEL follows.
  if (deadline_ms <= ctx.now_ms && !ctx.db().expired_visible()) {
    hash.remove(field);
    return kFieldDeleted;
  }
  hash.set_field_deadline(field, deadline_ms);
  return kDeadlineSet;
}

// After a handler changed a hash's fields: files its new earliest deadline, or deletes the key
// when no field is left (firing `del`). True when the key was deleted.
bool settle_hash(CommandContext& ctx, Entry* entry, std::string_view key) {
  if (entry->value.as<HashValue>().empty()) {
    ctx.db().remove(entry);
    ctx.also_notify(kNotifyGeneric, "del", key);
    return true;
  }
  ctx.db().refresh_field_expiry(entry);
  return false;
}

// HEXPIRE / HPEXPIRE / HEXPIREAT / HPEXPIREAT key time [NX|XX|GT|LT] FIELDS numfields field…
void hexpire_generic(CommandContext& ctx, bool seconds, bool relative) {
  bool wrong_type;
  Entry* entry = lookup_hash_for_write(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  int64_t deadline_ms;
  if (!parse_field_expire_time(ctx, ctx.args[2], seconds, relative ? ctx.now_ms : 0,
                               &deadline_ms)) {
    return;
  }
  ExpireCondition condition = ExpireCondition::kNone;
  const std::string_view option = ctx.args[3];
  if (equals_ignore_case(option, "NX")) {
    condition = ExpireCondition::kNx;
  } else if (equals_ignore_case(option, "XX")) {
    condition = ExpireCondition::kXx;
  } else if (equals_ignore_case(option, "GT")) {
    condition = ExpireCondition::kGt;
  } else if (equals_ignore_case(option, "LT")) {
    condition = ExpireCondition::kLt;
  }
  const size_t fields_at = condition == ExpireCondition::kNone ? 3 : 4;
  size_t first, count;
  if (!parse_fields_clause(ctx, fields_at, errors::kNumFieldsNotPositive, &first, &count)) return;
  ctx.reply.array_header(count);
  if (entry == nullptr) {
    for (size_t i = 0; i < count; ++i) ctx.reply.integer(kFieldMissing);
    return;
  }
  HashValue& hash = entry->value.as<HashValue>();
  std::vector<std::string_view> updated;
  std::vector<std::string_view> deleted;
  for (size_t i = first; i < ctx.args.size(); ++i) {
    const FieldExpireResult result =
        set_field_deadline(ctx, hash, ctx.args[i], deadline_ms, condition);
    if (result == kDeadlineSet) updated.push_back(ctx.args[i]);
    if (result == kFieldDeleted) deleted.push_back(ctx.args[i]);
    ctx.reply.integer(result);
  }
  if (updated.empty() && deleted.empty()) return;
  const std::string key(ctx.args[1]);
  ctx.changed(key, kNotifyHash, deleted.empty() ? "hexpire" : "hdel",
              updated.size() + deleted.size());
  // The effect: HDEL for each field deleted, then HPEXPIREAT with the fields set, if any.
  for (std::string_view field : deleted) ctx.propagate({"HDEL", key, field});
  if (!updated.empty()) {
    char deadline_digits[kMaxInt64Chars];
    char count_digits[kMaxInt64Chars];
    std::vector<std::string_view> effect = {
        "HPEXPIREAT", key,
        std::string_view(deadline_digits, int64_to_chars(deadline_ms, deadline_digits)),
        "FIELDS",
        std::string_view(count_digits,
                         int64_to_chars(static_cast<int64_t>(updated.size()), count_digits))};
    effect.insert(effect.end(), updated.begin(), updated.end());
    ctx.propagate(effect);
  }
  settle_hash(ctx, entry, key);
}

void hexpire_command(CommandContext& ctx) { hexpire_generic(ctx, true, true); }
void hpexpire_command(CommandContext& ctx) { hexpire_generic(ctx, false, true); }
void hexpireat_command(CommandContext& ctx) { hexpire_generic(ctx, true, false); }
void hpexpireat_command(CommandContext& ctx) { hexpire_generic(ctx, false, false); }

// HTTL / HPTTL / HEXPIRETIME / HPEXPIRETIME key FIELDS numfields field…: -2 for a missing (or
// due) field, -1 for one without a deadline, else the time left or the deadline, in seconds
// (rounded up, as Redis) or milliseconds.
void httl_generic(CommandContext& ctx, bool seconds, bool relative) {
  bool wrong_type;
  const HashValue* hash = read_hash(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  size_t first, count;
  if (!parse_fields_clause(ctx, 2, errors::kNumberOfFieldsNotPositive, &first, &count)) return;
  ctx.reply.array_header(count);
  const int64_t base_ms = relative ? ctx.now_ms : 0;
  for (size_t i = first; i < ctx.args.size(); ++i) {
    if (hash == nullptr || !hash->find(ctx.args[i]).has_value()) {
      ctx.reply.integer(kFieldMissing);
      continue;
    }
    const int64_t deadline = hash->field_deadline(ctx.args[i]);
    if (deadline == kNoFieldDeadline) {
      ctx.reply.integer(-1);
    } else if (deadline < ctx.now_ms) {
      ctx.reply.integer(kFieldMissing);
    } else {
      ctx.reply.integer(seconds ? (deadline + 999 - base_ms) / 1000 : deadline - base_ms);
    }
  }
}

void httl_command(CommandContext& ctx) { httl_generic(ctx, true, true); }
void hpttl_command(CommandContext& ctx) { httl_generic(ctx, false, true); }
void hexpiretime_command(CommandContext& ctx) { httl_generic(ctx, true, false); }
void hpexpiretime_command(CommandContext& ctx) { httl_generic(ctx, false, false); }

// HPERSIST key FIELDS numfields field…: -2 no field, -1 no deadline, 1 deadline removed.
// Propagates as received.
void hpersist_command(CommandContext& ctx) {
  bool wrong_type;
  Entry* entry = lookup_hash_for_write(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  size_t first, count;
  if (!parse_fields_clause(ctx, 2, errors::kNumberOfFieldsNotPositive, &first, &count)) return;
  ctx.reply.array_header(count);
  if (entry == nullptr) {
    for (size_t i = 0; i < count; ++i) ctx.reply.integer(kFieldMissing);
    return;
  }
  HashValue& hash = entry->value.as<HashValue>();
  bool changed = false;
  for (size_t i = first; i < ctx.args.size(); ++i) {
    if (!hash.find(ctx.args[i]).has_value()) {
      ctx.reply.integer(kFieldMissing);
      continue;
    }
    const int64_t deadline = hash.field_deadline(ctx.args[i]);
    if (deadline == kNoFieldDeadline) {
      ctx.reply.integer(-1);
      continue;
    }
    hash.set_field_deadline(ctx.args[i], kNoFieldDeadline);
    changed = true;
    ctx.reply.integer(1);
  }
  if (!changed) return;
  ctx.db().refresh_field_expiry(entry);
  ctx.changed(ctx.args[1], kNotifyHash, "hpersist");
}

// HGETDEL key FIELDS numfields field…: the values (nil for missing fields), then the fields are
// deleted, and the key with the last one. Propagates as HDEL key field….
void hgetdel_command(CommandContext& ctx) {
  bool wrong_type;
  Entry* entry = lookup_hash_for_write(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  size_t first, count;
  if (!parse_fields_clause(ctx, 2, errors::kNumberOfFieldsNotPositive, &first, &count)) return;
  ctx.reply.array_header(count);
  if (entry == nullptr) {
    for (size_t i = 0; i < count; ++i) ctx.reply.null();
    return;
  }
  HashValue& hash = entry->value.as<HashValue>();
  uint64_t deleted = 0;
  for (size_t i = first; i < ctx.args.size(); ++i) {
    const std::optional<std::string_view> value = hash.find(ctx.args[i]);
    if (!value.has_value()) {
      ctx.reply.null();
      continue;
    }
    ctx.reply.bulk(*value);
    hash.remove(ctx.args[i]);
    ++deleted;
  }
  if (deleted == 0) return;
  const std::string key(ctx.args[1]);
  ctx.changed(key, kNotifyHash, "hdel", deleted);
  std::vector<std::string_view> effect = {"HDEL", key};
  effect.insert(effect.end(), ctx.args.begin() + static_cast<ptrdiff_t>(first), ctx.args.end());
  ctx.propagate(effect);
  settle_hash(ctx, entry, key);
}

// HGETEX key [EX s|PX ms|EXAT t|PXAT t|PERSIST] FIELDS numfields field…: the values, and the
// fields' deadlines changed as asked. Propagates as HPEXPIREAT (absolute ms) or HPERSIST, or
// HDEL when the new deadline has already passed.
void hgetex_command(CommandContext& ctx) {
  bool wrong_type;
  Entry* entry = lookup_hash_for_write(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  enum class Change : uint8_t { kNone, kDeadline, kPersist } change = Change::kNone;
  bool pxat = false;
  int64_t deadline_ms = 0;
  size_t fields_at = 2;
  const std::string_view option = ctx.args[2];
  const bool ex = equals_ignore_case(option, "EX");
  const bool px = equals_ignore_case(option, "PX");
  const bool exat = equals_ignore_case(option, "EXAT");
  pxat = equals_ignore_case(option, "PXAT");
  if (ex || px || exat || pxat) {
    if (!parse_field_expire_time(ctx, ctx.args[3], ex || exat, (ex || px) ? ctx.now_ms : 0,
                                 &deadline_ms)) {
      return;
    }
    change = Change::kDeadline;
    fields_at = 4;
  } else if (equals_ignore_case(option, "PERSIST")) {
    change = Change::kPersist;
    fields_at = 3;
  }
  size_t first, count;
  if (!parse_fields_clause(ctx, fields_at, errors::kNumberOfFieldsNotPositive, &first, &count)) {
    return;
  }
  ctx.reply.array_header(count);
  if (entry == nullptr) {
    for (size_t i = 0; i < count; ++i) ctx.reply.null();
    return;
  }
  HashValue& hash = entry->value.as<HashValue>();
  std::vector<std::string_view> deleted;
  uint64_t updated = 0;
  for (size_t i = first; i < ctx.args.size(); ++i) {
    const std::optional<std::string_view> value = hash.find(ctx.args[i]);
    if (!value.has_value()) {
      ctx.reply.null();
      continue;
    }
    ctx.reply.bulk(*value);
    if (change == Change::kPersist) {
      if (hash.field_deadline(ctx.args[i]) != kNoFieldDeadline) {
        hash.set_field_deadline(ctx.args[i], kNoFieldDeadline);
        ++updated;
      }
    } else if (change == Change::kDeadline) {
      // The reply above copied the value before a deletion can invalidate it.
      const FieldExpireResult result =
          set_field_deadline(ctx, hash, ctx.args[i], deadline_ms, ExpireCondition::kNone);
      if (result == kDeadlineSet) ++updated;
      if (result == kFieldDeleted) deleted.push_back(ctx.args[i]);
    }
  }
  if (updated == 0 && deleted.empty()) return;
  const std::string key(ctx.args[1]);
  if (updated > 0) {
    const bool persist = change == Change::kPersist;
    ctx.changed(key, kNotifyHash, persist ? "hpersist" : "hexpire", updated);
    // Redis rewrites the command itself, so the effect names every field asked for.
    std::vector<std::string_view> effect;
    char deadline_digits[kMaxInt64Chars];
    if (persist) {
      effect = {"HPERSIST", key};
    } else {
      effect = {"HPEXPIREAT", key,
                std::string_view(deadline_digits, int64_to_chars(deadline_ms, deadline_digits))};
    }
    effect.insert(effect.end(), ctx.args.begin() + static_cast<ptrdiff_t>(fields_at),
                  ctx.args.end());
    ctx.propagate(effect);
  } else {
    ctx.changed(key, kNotifyHash, "hdel", deleted.size());
    for (std::string_view field : deleted) ctx.propagate({"HDEL", key, field});
  }
  settle_hash(ctx, entry, key);
}

// HSETEX key [FNX|FXX] [EX s|PX ms|EXAT t|PXAT t|KEEPTTL] FIELDS numfields field value…: 1 when
// every field was set, 0 when FNX/FXX stopped it. Without KEEPTTL or a time, the fields lose
// their deadlines (as HSET). Propagates with PXAT, or as HDELs when the time has passed.
void hsetex_command(CommandContext& ctx) {
  enum Flag : uint32_t {
    kEx = 1, kPx = 2, kExat = 4, kPxat = 8, kKeepTtl = 16, kFnx = 32, kFxx = 64,
  };
  constexpr uint32_t kExpiryFlags = kEx | kPx | kExat | kPxat | kKeepTtl;
  uint32_t flags = 0;
  int64_t deadline_ms = kNoFieldDeadline;
  size_t first = 0;
  size_t count = 0;
  const std::string_view full_name = ctx.command.full_name;
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    const std::string_view argument = ctx.args[i];
    if (equals_ignore_case(argument, "FIELDS")) {
      if (i + 3 >= ctx.args.size()) return ctx.error(errors::wrong_arity(full_name));
      int64_t number;
      if (!parse_int64(ctx.args[i + 1], &number) || number < 1 || number > INT32_MAX) {
        return ctx.error(errors::kInvalidNumberOfFields);
      }
      const size_t remaining = ctx.args.size() - i - 2;
      if (remaining % 2 != 0 || static_cast<uint64_t>(number) != remaining / 2) {
        return ctx.error(errors::wrong_arity(full_name));
      }
      first = i + 2;
      count = remaining / 2;
      break;
    }
    uint32_t time_flag = 0;
    if (equals_ignore_case(argument, "EX")) time_flag = kEx;
    if (equals_ignore_case(argument, "PX")) time_flag = kPx;
    if (equals_ignore_case(argument, "EXAT")) time_flag = kExat;
    if (equals_ignore_case(argument, "PXAT")) time_flag = kPxat;
    if (time_flag != 0 || equals_ignore_case(argument, "KEEPTTL")) {
      if ((flags & kExpiryFlags) != 0) return ctx.error(errors::kHashExpirationConflict);
      if (time_flag == 0) {
        flags |= kKeepTtl;
        continue;
      }
      if (i + 1 >= ctx.args.size()) return ctx.error(errors::kMissingExpireTime);
      flags |= time_flag;
      ++i;
      const bool seconds = (time_flag & (kEx | kExat)) != 0;
      const int64_t base = (time_flag & (kEx | kPx)) != 0 ? ctx.now_ms : 0;
      if (!parse_field_expire_time(ctx, ctx.args[i], seconds, base, &deadline_ms)) return;
    } else if (equals_ignore_case(argument, "FNX") || equals_ignore_case(argument, "FXX")) {
      if ((flags & (kFnx | kFxx)) != 0) return ctx.error(errors::kFnxFxxConflict);
      flags |= equals_ignore_case(argument, "FNX") ? kFnx : kFxx;
    } else {
      return ctx.error(errors::unknown_argument(argument));
    }
  }
  if (count == 0) return ctx.error(errors::wrong_arity(full_name));

  bool wrong_type;
  Entry* entry = lookup_hash_for_write(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  if (entry == nullptr && (flags & kFxx) != 0) return ctx.reply.integer(0);
  if ((flags & (kFnx | kFxx)) != 0 && entry != nullptr) {
    const HashValue& hash = entry->value.as<HashValue>();
    for (size_t i = 0; i < count; ++i) {
      const bool exists = hash.find(ctx.args[first + 2 * i]).has_value();
      if (exists == ((flags & kFnx) != 0)) return ctx.reply.integer(0);
    }
  }
  const std::string key(ctx.args[1]);
  if (entry == nullptr) {
    entry = ctx.db().add(key, Value::make_hash());
    ctx.created(key);
  }
  HashValue& hash = entry->value.as<HashValue>();
  if (hash.is_listpack()) {
    for (size_t i = first; i < ctx.args.size(); ++i) {
      if (static_cast<int64_t>(ctx.args[i].size()) > limits(ctx).max_listpack_value) {
        hash.convert_to_table();
        break;
      }
    }
  }
  const bool set_deadline = (flags & (kEx | kPx | kExat | kPxat)) != 0;
  const bool keep = (flags & kExpiryFlags) != 0;
  std::vector<std::string_view> deleted;
  for (size_t i = 0; i < count; ++i) {
    const std::string_view field = ctx.args[first + 2 * i];
    hash.set(field, ctx.args[first + 2 * i + 1], limits(ctx), keep);
    if (set_deadline &&
        set_field_deadline(ctx, hash, field, deadline_ms, ExpireCondition::kNone) ==
            kFieldDeleted) {
      deleted.push_back(field);
    }
  }
  ctx.changed(key, kNotifyHash, "hset", count);
  if (set_deadline) ctx.also_notify(kNotifyHash, deleted.empty() ? "hexpire" : "hdel", key);
  if (!deleted.empty()) {
    for (std::string_view field : deleted) ctx.propagate({"HDEL", key, field});
  } else if ((flags & (kEx | kPx | kExat)) != 0) {
    // Relative and second-based times become PXAT in absolute milliseconds.
    char deadline_digits[kMaxInt64Chars];
    std::vector<std::string_view> effect(ctx.args.begin(), ctx.args.end());
    for (size_t i = 2; i < first; ++i) {
      if (equals_ignore_case(effect[i], "EX") || equals_ignore_case(effect[i], "PX") ||
          equals_ignore_case(effect[i], "EXAT")) {
        effect[i] = "PXAT";
        effect[i + 1] =
            std::string_view(deadline_digits, int64_to_chars(deadline_ms, deadline_digits));
        break;
      }
    }
    ctx.propagate(effect);
  }
  settle_hash(ctx, entry, key);
  ctx.reply.integer(1);
}

// --- Table ---------------------------------------------------------------------------------

constexpr CommandSpec kHashCommands[] = {
    {"hset", -4, kWrite | kDenyOom | kFast, 1, 1, 1, kAclHash, hset_command, "hash", "2.0.0",
     "Set the string value of a hash field",
     "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command "
     "is called with multiple field/value pairs."},
    {"hsetnx", 4, kWrite | kDenyOom | kFast, 1, 1, 1, kAclHash, hsetnx_command, "hash", "2.0.0",
     "Set the value of a hash field, only if the field does not exist", "O(1)"},
    {"hmset", -4, kWrite | kDenyOom | kFast, 1, 1, 1, kAclHash, hmset_command, "hash", "2.0.0",
     "Set multiple hash fields to multiple values",
     "O(N) where N is the number of fields being set."},
    {"hget", 3, kReadonly | kFast, 1, 1, 1, kAclHash, hget_command, "hash", "2.0.0",
     "Get the value of a hash field", "O(1)"},
    {"hmget", -3, kReadonly | kFast, 1, 1, 1, kAclHash, hmget_command, "hash", "2.0.0",
     "Get the values of all the given hash fields",
     "O(N) where N is the number of fields being requested."},
    {"hgetall", 2, kReadonly, 1, 1, 1, kAclHash, hgetall_command, "hash", "2.0.0",
     "Get all the fields and values in a hash", "O(N) where N is the size of the hash."},
    {"hkeys", 2, kReadonly, 1, 1, 1, kAclHash, hkeys_command, "hash", "2.0.0",
     "Get all the fields in a hash", "O(N) where N is the size of the hash."},
    {"hvals", 2, kReadonly, 1, 1, 1, kAclHash, hvals_command, "hash", "2.0.0",
     "Get all the values in a hash", "O(N) where N is the size of the hash."},
    {"hdel", -3, kWrite | kFast, 1, 1, 1, kAclHash, hdel_command, "hash", "2.0.0",
     "Delete one or more hash fields", "O(N) where N is the number of fields to be removed."},
    {"hlen", 2, kReadonly | kFast, 1, 1, 1, kAclHash, hlen_command, "hash", "2.0.0",
     "Get the number of fields in a hash", "O(1)"},
    {"hstrlen", 3, kReadonly | kFast, 1, 1, 1, kAclHash, hstrlen_command, "hash", "3.2.0",
     "Get the length of the value of a hash field", "O(1)"},
    {"hexists", 3, kReadonly | kFast, 1, 1, 1, kAclHash, hexists_command, "hash", "2.0.0",
     "Determine if a hash field exists", "O(1)"},
    {"hincrby", 4, kWrite | kDenyOom | kFast, 1, 1, 1, kAclHash, hincrby_command, "hash", "2.0.0",
     "Increment the integer value of a hash field by the given number", "O(1)"},
    {"hincrbyfloat", 4, kWrite | kDenyOom | kFast, 1, 1, 1, kAclHash, hincrbyfloat_command, "hash",
     "2.6.0", "Increment the float value of a hash field by the given amount", "O(1)"},
    {"hrandfield", -2, kReadonly, 1, 1, 1, kAclHash, hrandfield_command, "hash", "6.2.0",
     "Get one or multiple random fields from a hash",
     "O(N) where N is the number of fields returned"},
    {"hscan", -3, kReadonly, 1, 1, 1, kAclHash, hscan_command, "hash", "2.8.0",
     "Incrementally iterate hash fields and associated values",
     "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
     "the cursor to return back to 0. N is the number of elements inside the collection.."},
    {"hexpire", -6, kWrite | kFast, 1, 1, 1, kAclHash, hexpire_command, "hash", "7.4.0",
     "Set expiry for hash field using relative time to expire (seconds)",
     "O(N) where N is the number of specified fields"},
    {"hpexpire", -6, kWrite | kFast, 1, 1, 1, kAclHash, hpexpire_command, "hash", "7.4.0",
     "Set expiry for hash field using relative time to expire (milliseconds)",
     "O(N) where N is the number of specified fields"},
    {"hexpireat", -6, kWrite | kFast, 1, 1, 1, kAclHash, hexpireat_command, "hash", "7.4.0",
     "Set expiry for hash field using an absolute Unix timestamp (seconds)",
     "O(N) where N is the number of specified fields"},
    {"hpexpireat", -6, kWrite | kFast, 1, 1, 1, kAclHash, hpexpireat_command, "hash", "7.4.0",
     "Set expiry for hash field using an absolute Unix timestamp (milliseconds)",
     "O(N) where N is the number of specified fields"},
    {"httl", -5, kReadonly | kFast, 1, 1, 1, kAclHash, httl_command, "hash", "7.4.0",
     "Returns the TTL in seconds of a hash field.",
     "O(N) where N is the number of specified fields"},
    {"hpttl", -5, kReadonly | kFast, 1, 1, 1, kAclHash, hpttl_command, "hash", "7.4.0",
     "Returns the TTL in milliseconds of a hash field.",
     "O(N) where N is the number of specified fields"},
    {"hexpiretime", -5, kReadonly | kFast, 1, 1, 1, kAclHash, hexpiretime_command, "hash",
     "7.4.0", "Returns the expiration time of a hash field as a Unix timestamp, in seconds.",
     "O(N) where N is the number of specified fields"},
    {"hpexpiretime", -5, kReadonly | kFast, 1, 1, 1, kAclHash, hpexpiretime_command, "hash",
     "7.4.0", "Returns the expiration time of a hash field as a Unix timestamp, in msec.",
     "O(N) where N is the number of specified fields"},
    {"hpersist", -5, kWrite | kFast, 1, 1, 1, kAclHash, hpersist_command, "hash", "7.4.0",
     "Removes the expiration time for each specified field",
     "O(N) where N is the number of specified fields"},
    {"hgetdel", -5, kWrite | kFast, 1, 1, 1, kAclHash, hgetdel_command, "hash", "8.0.0",
     "Returns the value of a field and deletes it from the hash.",
     "O(N) where N is the number of specified fields"},
    {"hgetex", -5, kWrite | kFast, 1, 1, 1, kAclHash, hgetex_command, "hash", "8.0.0",
     "Get the value of one or more fields of a given hash key, and optionally set their "
     "expiration.",
     "O(N) where N is the number of specified fields"},
    {"hsetex", -6, kWrite | kDenyOom | kFast, 1, 1, 1, kAclHash, hsetex_command, "hash", "8.0.0",
     "Set the value of one or more fields of a given hash key, and optionally set their "
     "expiration.",
     "O(N) where N is the number of fields being set."},
};

}  // namespace

void register_hash_commands(CommandTable& table) { table.add(kHashCommands); }

}  // namespace keywarden
