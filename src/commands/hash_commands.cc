// Hash commands: HSET, HSETNX, HMSET, HGET, HMGET, HGETALL, HKEYS, HVALS, HDEL, HLEN, HSTRLEN,
// HEXISTS, HINCRBY, HINCRBYFLOAT, HRANDFIELD and HSCAN, with Redis 7.0's replies, argument
// checking order, encodings (listpack → hashtable at hash-max-listpack-entries/-value) and
// propagation.
//
// Writes propagate as received except HINCRBYFLOAT, which propagates its result as
// HSET key field <value> so that replicas never redo float arithmetic. A hash whose last field
// is deleted is deleted with it.
#include <cmath>
#include <cstdint>
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

// The hash at `key` for reading: null when absent. Sets *wrong_type (and replies WRONGTYPE)
// when the key holds another type.
const HashValue* read_hash(CommandContext& ctx, std::string_view key, bool* wrong_type) {
  return ctx.read_collection<HashValue>(key, ValueType::kHash, wrong_type);
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
  entry->value.as<HashValue>().set(
      ctx.args[2], std::string_view(digits, int64_to_chars(result, digits)), limits(ctx));
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
  entry->value.as<HashValue>().set(ctx.args[2], text, limits(ctx));
  ctx.changed(ctx.args[1], kNotifyHash, "hincrbyfloat");
  ctx.propagate({"HSET", ctx.args[1], ctx.args[2], text});
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
  std::vector<std::string_view> items;
  size_t visited = 0;
  auto collect = [&](std::string_view field, std::string_view value) {
    ++visited;
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
};

}  // namespace

void register_hash_commands(CommandTable& table) { table.add(kHashCommands); }

}  // namespace keywarden
