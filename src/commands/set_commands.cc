// Set commands: SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER, SCARD, SPOP, SRANDMEMBER, SMOVE,
// SINTER, SINTERCARD, SINTERSTORE, SUNION, SUNIONSTORE, SDIFF, SDIFFSTORE and SSCAN, with
// Redis 7.0's replies (RESP3 sets where Redis sends sets), argument checking order, WRONGTYPE
// rules and propagation; encodings are Redis 7.2's (see types/set_value.h).
//
// Writes propagate as received, except SPOP: without a count it propagates SREM key member;
// with a count it propagates one SREM per popped member (in MULTI/EXEC when more than one), or
// DEL when it takes the whole set. A set whose last member goes is deleted with it. The STORE
// forms replace the destination (dropping its TTL), or delete it when the result is empty.
#include <algorithm>
#include <cstdint>
#include <limits>
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
#include "types/set_value.h"
#include "types/value.h"

namespace keywarden {
namespace {

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

bool is_set(const Entry* entry) { return entry->value.type() == ValueType::kSet; }

const SetLimits& limits(CommandContext& ctx) { return ctx.server.settings().set_limits; }

Value make_set(SetValue set = SetValue()) {
  return Value::make_aggregate(ValueType::kSet, std::make_unique<SetValue>(std::move(set)));
}

bool lazy_server_del(CommandContext& ctx) {
  return ctx.server.settings().lazyfree_lazy_server_del;
}

// The set at `key` for reading: null when absent. Sets *wrong_type (and replies WRONGTYPE)
// when the key holds another type.
const SetValue* read_set(CommandContext& ctx, std::string_view key, bool* wrong_type) {
  return ctx.read_collection<SetValue>(key, ValueType::kSet, wrong_type);
}

// Every member of `set` as a RESP3 set (an array in RESP2).
void reply_members(CommandContext& ctx, const SetValue& set) {
  ctx.reply.set_header(set.size());
  set.for_each([&](std::string_view member) { ctx.reply.bulk(member); });
}

// --- SADD, SREM ----------------------------------------------------------------------------

void sadd_command(CommandContext& ctx) {
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry != nullptr && !is_set(entry)) return ctx.error(errors::kWrongType);
  if (entry == nullptr) {
    entry = ctx.db().add(key, make_set());
    ctx.created(key);
  }
  SetValue& set = entry->value.as<SetValue>();
  const SetLimits set_limits = limits(ctx);
  int64_t added = 0;
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    if (set.add(ctx.args[i], set_limits)) ++added;
  }
  if (added > 0) ctx.changed(key, kNotifySet, "sadd", static_cast<uint64_t>(added));
  ctx.reply.integer(added);
}

void srem_command(CommandContext& ctx) {
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) return ctx.reply.integer(0);
  if (!is_set(entry)) return ctx.error(errors::kWrongType);
  SetValue& set = entry->value.as<SetValue>();
  int64_t removed = 0;
  bool key_removed = false;
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    if (!set.remove(ctx.args[i])) continue;
    ++removed;
    if (set.empty()) {
      ctx.db().remove(entry, lazy_server_del(ctx));
      key_removed = true;
      break;
    }
  }
  if (removed > 0) {
    ctx.changed(key, kNotifySet, "srem", static_cast<uint64_t>(removed));
    if (key_removed) ctx.also_notify(kNotifyGeneric, "del", key);
  }
  ctx.reply.integer(removed);
}

// --- SMOVE ---------------------------------------------------------------------------------

void smove_command(CommandContext& ctx) {
  const std::string_view source_key = ctx.args[1];
  const std::string_view target_key = ctx.args[2];
  const std::string_view member = ctx.args[3];
  Entry* source = ctx.lookup_write(source_key);
  Entry* target = ctx.lookup_write(target_key);
  if (source == nullptr) return ctx.reply.integer(0);
  if (!is_set(source) || (target != nullptr && !is_set(target))) {
    return ctx.error(errors::kWrongType);
  }
  SetValue& source_set = source->value.as<SetValue>();
  // Moving within one set changes nothing; the reply still says whether the member is there.
  if (source == target) return ctx.reply.integer(source_set.contains(member) ? 1 : 0);
  if (!source_set.remove(member)) return ctx.reply.integer(0);
  ctx.changed(source_key, kNotifySet, "srem");
  if (source_set.empty()) {
    ctx.db().remove(source, lazy_server_del(ctx));
    ctx.also_notify(kNotifyGeneric, "del", source_key);
  }
  if (target == nullptr) {
    target = ctx.db().add(target_key, make_set());
    ctx.created(target_key);
  }
  // The destination counts as changed only when it gained the member (Redis 7.0.15).
  if (target->value.as<SetValue>().add(member, limits(ctx))) {
    ctx.changed(target_key, kNotifySet, "sadd");
  }
  ctx.reply.integer(1);
}

// --- Reads ---------------------------------------------------------------------------------

void sismember_command(CommandContext& ctx) {
  bool wrong_type;
  const SetValue* set = read_set(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  ctx.reply.integer(set != nullptr && set->contains(ctx.args[2]) ? 1 : 0);
}

void smismember_command(CommandContext& ctx) {
  bool wrong_type;
  const SetValue* set = read_set(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  ctx.reply.array_header(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    ctx.reply.integer(set != nullptr && set->contains(ctx.args[i]) ? 1 : 0);
  }
}

void scard_command(CommandContext& ctx) {
  bool wrong_type;
  const SetValue* set = read_set(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  ctx.reply.integer(set == nullptr ? 0 : static_cast<int64_t>(set->size()));
}

// --- SPOP ----------------------------------------------------------------------------------

void spop_with_count(CommandContext& ctx) {
  const std::string_view key = ctx.args[1];
  int64_t count;
  if (!parse_int64(ctx.args[2], &count) || count < 0) {
    return ctx.error(errors::kSetMustBePositive);
  }
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) return ctx.reply.set_header(0);
  if (!is_set(entry)) return ctx.error(errors::kWrongType);
  if (count == 0) return ctx.reply.set_header(0);
  SetValue& set = entry->value.as<SetValue>();
  const size_t size = set.size();

  if (static_cast<uint64_t>(count) >= size) {
    // The whole set: reply it, delete the key, and propagate a DEL.
    reply_members(ctx, set);
    ctx.db().remove(entry, lazy_server_del(ctx));
    ctx.changed(key, kNotifySet, "spop", size);
    ctx.also_notify(kNotifyGeneric, "del", key);
    ctx.propagate({"DEL", key});
    return;
  }

  const std::vector<std::string> popped =
      set.pop_random(static_cast<size_t>(count), ctx.server.keyspace().rng(), limits(ctx));
  ctx.reply.set_header(popped.size());
  for (const std::string& member : popped) {
    ctx.reply.bulk(member);
    ctx.propagate({"SREM", key, member});
  }
  // One SREM per member, applied atomically by the AOF and replicas as Redis 7.0 wraps them.
  // Inside MULTI/EXEC the EXEC wraps everything instead.
  if (!ctx.session.transaction.in_multi()) ctx.server.propagator().wrap_pending_in_transaction();
  ctx.changed(key, kNotifySet, "spop", popped.size());
}

void spop_command(CommandContext& ctx) {
  if (ctx.args.size() == 3) return spop_with_count(ctx);
  if (ctx.args.size() > 3) return ctx.error(errors::kSyntax);
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) return ctx.reply.null();
  if (!is_set(entry)) return ctx.error(errors::kWrongType);
  SetValue& set = entry->value.as<SetValue>();
  const std::string member = set.pop_random(ctx.server.keyspace().rng());
  ctx.changed(key, kNotifySet, "spop");
  if (set.empty()) {
    ctx.db().remove(entry, lazy_server_del(ctx));
    ctx.also_notify(kNotifyGeneric, "del", key);
  }
  ctx.propagate({"SREM", key, member});
  ctx.reply.bulk(member);
}

// --- SRANDMEMBER ---------------------------------------------------------------------------

void srandmember_with_count(CommandContext& ctx) {
  int64_t count;
  if (!parse_int64(ctx.args[2], &count)) return ctx.error(errors::kNotInteger);
  // Its negation must fit.
  if (count == kInt64Min) return ctx.error(errors::kCountOutOfRange);
  bool wrong_type;
  const SetValue* set = read_set(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  if (set == nullptr || count == 0) return ctx.reply.array_header(0);

  std::mt19937_64& rng = ctx.server.keyspace().rng();
  if (count < 0 || count == 1) {
    // A negative count allows repetitions: exactly |count| independent draws.
    const uint64_t draws = count < 0 ? static_cast<uint64_t>(-count) : 1;
    ctx.reply.array_header(draws);
    // A client closed for its output limit stops the draws (a count of -1e9 would otherwise
    // run on for nothing).
    for (uint64_t i = 0; i < draws && !ctx.reply.discarding(); ++i) {
      ctx.reply.bulk(set->random_member(rng));
    }
    return;
  }
  if (static_cast<uint64_t>(count) >= set->size()) {
    ctx.reply.array_header(set->size());
    set->for_each([&](std::string_view member) { ctx.reply.bulk(member); });
    return;
  }
  const std::vector<std::string> chosen = set->random_distinct(static_cast<size_t>(count), rng);
  ctx.reply.array_header(chosen.size());
  for (const std::string& member : chosen) ctx.reply.bulk(member);
}

void srandmember_command(CommandContext& ctx) {
  if (ctx.args.size() == 3) return srandmember_with_count(ctx);
  if (ctx.args.size() > 3) return ctx.error(errors::kSyntax);
  bool wrong_type;
  const SetValue* set = read_set(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  if (set == nullptr) return ctx.reply.null();
  ctx.reply.bulk(set->random_member(ctx.server.keyspace().rng()));
}

// --- Multi-key operations ------------------------------------------------------------------

// Looks up every key for reading, as Redis does for all of them (also in the STORE forms):
// absent keys are null (empty sets); the first key of another type fails the command with
// WRONGTYPE, even after an absent one.
bool read_sets(CommandContext& ctx, std::span<const std::string_view> keys,
               std::vector<const SetValue*>* sets) {
  sets->reserve(keys.size());
  for (std::string_view key : keys) {
    bool wrong_type;
    const SetValue* set = read_set(ctx, key, &wrong_type);
    if (wrong_type) return false;
    sets->push_back(set);
  }
  return true;
}

// Stores `result` at `target_key`, replacing whatever is there and dropping any TTL (Redis's
// setKey), or deletes the destination when the result is empty; replies the size. The event
// is the command's name (sinterstore, sunionstore, sdiffstore), or `del` for a deletion.
void store_result(CommandContext& ctx, std::string_view target_key, SetValue result) {
  const size_t size = result.size();
  if (size > 0) {
    Entry* target = ctx.lookup_write(target_key);
    if (target != nullptr) {
      target = ctx.db().overwrite(target, make_set(std::move(result)), /*keep_ttl=*/false,
                                  lazy_server_del(ctx));
    } else {
      ctx.db().add(target_key, make_set(std::move(result)));
      ctx.created(target_key);
    }
    ctx.reply.integer(static_cast<int64_t>(size));
    ctx.changed(target_key, kNotifySet, ctx.command.full_name);
  } else {
    ctx.reply.integer(0);
    // Redis deletes without an expiry check here (dbDelete), so an expired destination is
    // deleted, not expired.
    Entry* target = ctx.db().find_raw(target_key);
    if (target == nullptr) return;
    ctx.db().remove(target, lazy_server_del(ctx));
    ctx.changed(target_key, kNotifyGeneric, "del");
  }
}

// SINTER, SMEMBERS (one key), SINTERSTORE (`target_key` set) and SINTERCARD
// (`cardinality_only`, stopping at `limit` when it is not 0).
void sinter_generic(CommandContext& ctx, std::span<const std::string_view> keys,
                    const std::string_view* target_key, bool cardinality_only = false,
                    uint64_t limit = 0) {
  std::vector<const SetValue*> sets;
  if (!read_sets(ctx, keys, &sets)) return;
  // An absent key is an empty set, and so is the intersection.
  if (std::find(sets.begin(), sets.end(), nullptr) != sets.end()) {
    if (target_key != nullptr) return store_result(ctx, *target_key, SetValue());
    if (cardinality_only) return ctx.reply.integer(0);
    return ctx.reply.set_header(0);
  }
  // Walk the smallest set, probing the others.
  std::sort(sets.begin(), sets.end(),
            [](const SetValue* a, const SetValue* b) { return a->size() < b->size(); });
  const SetValue* smallest = sets.front();
  auto in_all = [&](std::string_view member) {
    for (size_t j = 1; j < sets.size(); ++j) {
      if (sets[j] != smallest && !sets[j]->contains(member)) return false;
    }
    return true;
  };

  if (cardinality_only) {
    uint64_t cardinality = 0;
    smallest->for_each([&](std::string_view member) {
      if (in_all(member)) ++cardinality;
      return limit == 0 || cardinality < limit;
    });
    return ctx.reply.integer(static_cast<int64_t>(cardinality));
  }
  if (target_key != nullptr) {
    SetValue result;
    const SetLimits set_limits = limits(ctx);
    smallest->for_each([&](std::string_view member) {
      if (in_all(member)) result.add(member, set_limits);
    });
    return store_result(ctx, *target_key, std::move(result));
  }
  const DeferredLength length = ctx.reply.begin_deferred();
  size_t cardinality = 0;
  smallest->for_each([&](std::string_view member) {
    if (!in_all(member)) return;
    ctx.reply.bulk(member);
    ++cardinality;
  });
  ctx.reply.end_deferred_set(length, cardinality);
}

enum class SetOperation { kUnion, kDiff };

// SUNION, SDIFF and their STORE forms (`target_key` set). The result is built as a new set the
// way Redis builds it (the same algorithm, the same order of additions and removals), so that
// a stored result gets the encoding Redis gives it.
void sunion_diff_generic(CommandContext& ctx, std::span<const std::string_view> keys,
                         const std::string_view* target_key, SetOperation operation) {
  std::vector<const SetValue*> sets;
  if (!read_sets(ctx, keys, &sets)) return;
  const SetValue* first = sets.front();
  // The first key given again: the difference is empty whatever it holds.
  const bool first_repeated =
      first != nullptr && std::find(sets.begin() + 1, sets.end(), first) != sets.end();

  // Algorithm 1 walks the first set probing the others, O(size of first × number of sets);
  // algorithm 2 copies the first set and removes the others' members, O(total size). Redis
  // halves the first estimate because probing is cheaper and stops early.
  bool probe_first = true;
  if (operation == SetOperation::kDiff && first != nullptr && !first_repeated) {
    uint64_t probe_work = 0;
    uint64_t copy_work = 0;
    for (const SetValue* set : sets) {
      if (set == nullptr) continue;
      probe_work += first->size();
      copy_work += set->size();
    }
    probe_work /= 2;
    probe_first = probe_work <= copy_work;
    if (probe_first && sets.size() > 1) {
      // Largest first: a member of the first set is then likelier to be found early.
      std::sort(sets.begin() + 1, sets.end(), [](const SetValue* a, const SetValue* b) {
        return (a == nullptr ? 0 : a->size()) > (b == nullptr ? 0 : b->size());
      });
    }
  }

  SetValue result;
  const SetLimits set_limits = limits(ctx);
  if (operation == SetOperation::kUnion) {
    for (const SetValue* set : sets) {
      if (set == nullptr) continue;
      set->for_each([&](std::string_view member) { result.add(member, set_limits); });
    }
  } else if (first != nullptr && !first_repeated && probe_first) {
    first->for_each([&](std::string_view member) {
      for (size_t j = 1; j < sets.size(); ++j) {
        if (sets[j] != nullptr && sets[j]->contains(member)) return;
      }
      result.add(member, set_limits);
    });
  } else if (first != nullptr && !first_repeated) {
    for (size_t j = 0; j < sets.size(); ++j) {
      if (sets[j] == nullptr) continue;
      sets[j]->for_each([&](std::string_view member) {
        if (j == 0) {
          result.add(member, set_limits);
        } else {
          result.remove(member);
        }
      });
      if (result.empty()) break;
    }
  }

  if (target_key != nullptr) return store_result(ctx, *target_key, std::move(result));
  reply_members(ctx, result);
}

void smembers_command(CommandContext& ctx) { sinter_generic(ctx, ctx.args.subspan(1, 1), nullptr); }
void sinter_command(CommandContext& ctx) { sinter_generic(ctx, ctx.args.subspan(1), nullptr); }
void sinterstore_command(CommandContext& ctx) {
  sinter_generic(ctx, ctx.args.subspan(2), &ctx.args[1]);
}

void sintercard_command(CommandContext& ctx) {
  int64_t numkeys;
  if (!parse_int64(ctx.args[1], &numkeys) || numkeys < 1) {
    return ctx.error(errors::kSetNumkeysNotPositive);
  }
  if (static_cast<uint64_t>(numkeys) > ctx.args.size() - 2) {
    return ctx.error(errors::kSetTooManyNumkeys);
  }
  int64_t limit = 0;
  for (size_t i = 2 + static_cast<size_t>(numkeys); i < ctx.args.size(); ++i) {
    if (equals_ignore_case(ctx.args[i], "LIMIT") && i + 1 < ctx.args.size()) {
      ++i;
      if (!parse_int64(ctx.args[i], &limit) || limit < 0) {
        return ctx.error(errors::kSetLimitNegative);
      }
    } else {
      return ctx.error(errors::kSyntax);
    }
  }
  sinter_generic(ctx, ctx.args.subspan(2, static_cast<size_t>(numkeys)), nullptr,
                 /*cardinality_only=*/true, static_cast<uint64_t>(limit));
}

void sunion_command(CommandContext& ctx) {
  sunion_diff_generic(ctx, ctx.args.subspan(1), nullptr, SetOperation::kUnion);
}
void sunionstore_command(CommandContext& ctx) {
  sunion_diff_generic(ctx, ctx.args.subspan(2), &ctx.args[1], SetOperation::kUnion);
}
void sdiff_command(CommandContext& ctx) {
  sunion_diff_generic(ctx, ctx.args.subspan(1), nullptr, SetOperation::kDiff);
}
void sdiffstore_command(CommandContext& ctx) {
  sunion_diff_generic(ctx, ctx.args.subspan(2), &ctx.args[1], SetOperation::kDiff);
}

// --- SSCAN ---------------------------------------------------------------------------------

void sscan_command(CommandContext& ctx) {
  uint64_t cursor;
  ScanOptions options;
  const SetValue* set = begin_collection_scan<SetValue>(ctx, ValueType::kSet, &cursor, &options);
  if (set == nullptr) return;
  // Copies: an intset's members are formatted into a view that lasts only for the call.
  std::vector<std::string> items;
  size_t visited = 0;
  auto collect = [&](std::string_view member) {
    ++visited;
    if (options.use_pattern && !glob_match(options.pattern, member)) return;
    items.emplace_back(member);
  };
  cursor = walk_collection_scan(
      cursor, options.count, [&](uint64_t at) { return set->scan(at, collect); },
      [&] { return visited; });
  reply_scan_cursor(ctx, cursor);
  ctx.reply.array_header(items.size());
  for (const std::string& item : items) ctx.reply.bulk(item);
}

// --- Table ---------------------------------------------------------------------------------

constexpr std::string_view kIntersectComplexity =
    "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of "
    "sets.";
constexpr std::string_view kTotalSizeComplexity =
    "O(N) where N is the total number of elements in all given sets.";

constexpr CommandSpec kSetCommands[] = {
    {"sadd", -3, kWrite | kDenyOom | kFast, 1, 1, 1, kAclSet, sadd_command, "set", "1.0.0",
     "Add one or more members to a set",
     "O(1) for each element added, so O(N) to add N elements when the command is called with "
     "multiple arguments."},
    {"srem", -3, kWrite | kFast, 1, 1, 1, kAclSet, srem_command, "set", "1.0.0",
     "Remove one or more members from a set",
     "O(N) where N is the number of members to be removed."},
    {"smembers", 2, kReadonly, 1, 1, 1, kAclSet, smembers_command, "set", "1.0.0",
     "Get all the members in a set", "O(N) where N is the set cardinality."},
    {"sismember", 3, kReadonly | kFast, 1, 1, 1, kAclSet, sismember_command, "set", "1.0.0",
     "Determine if a given value is a member of a set", "O(1)"},
    {"smismember", -3, kReadonly | kFast, 1, 1, 1, kAclSet, smismember_command, "set", "6.2.0",
     "Returns the membership associated with the given elements for a set",
     "O(N) where N is the number of elements being checked for membership"},
    {"scard", 2, kReadonly | kFast, 1, 1, 1, kAclSet, scard_command, "set", "1.0.0",
     "Get the number of members in a set", "O(1)"},
    {"spop", -2, kWrite | kFast, 1, 1, 1, kAclSet, spop_command, "set", "1.0.0",
     "Remove and return one or multiple random members from a set",
     "Without the count argument O(1), otherwise O(N) where N is the value of the passed "
     "count."},
    {"srandmember", -2, kReadonly, 1, 1, 1, kAclSet, srandmember_command, "set", "1.0.0",
     "Get one or multiple random members from a set",
     "Without the count argument O(1), otherwise O(N) where N is the absolute value of the "
     "passed count."},
    {"smove", 4, kWrite | kFast, 1, 2, 1, kAclSet, smove_command, "set", "1.0.0",
     "Move a member from one set to another", "O(1)"},
    {"sinter", -2, kReadonly, 1, -1, 1, kAclSet, sinter_command, "set", "1.0.0",
     "Intersect multiple sets", kIntersectComplexity},
    {"sintercard", -3, kReadonly | kMovableKeys, 0, 0, 0, kAclSet, sintercard_command, "set",
     "7.0.0", "Intersect multiple sets and return the cardinality of the result",
     kIntersectComplexity, {}, numkeys_keys<1>},
    {"sinterstore", -3, kWrite | kDenyOom, 1, -1, 1, kAclSet, sinterstore_command, "set",
     "1.0.0", "Intersect multiple sets and store the resulting set in a key",
     kIntersectComplexity},
    {"sunion", -2, kReadonly, 1, -1, 1, kAclSet, sunion_command, "set", "1.0.0",
     "Add multiple sets", kTotalSizeComplexity},
    {"sunionstore", -3, kWrite | kDenyOom, 1, -1, 1, kAclSet, sunionstore_command, "set",
     "1.0.0", "Add multiple sets and store the resulting set in a key", kTotalSizeComplexity},
    {"sdiff", -2, kReadonly, 1, -1, 1, kAclSet, sdiff_command, "set", "1.0.0",
     "Subtract multiple sets", kTotalSizeComplexity},
    {"sdiffstore", -3, kWrite | kDenyOom, 1, -1, 1, kAclSet, sdiffstore_command, "set", "1.0.0",
     "Subtract multiple sets and store the resulting set in a key", kTotalSizeComplexity},
    {"sscan", -3, kReadonly, 1, 1, 1, kAclSet, sscan_command, "set", "2.8.0",
     "Incrementally iterate Set elements",
     "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
     "the cursor to return back to 0. N is the number of elements inside the collection.."},
};

}  // namespace

void register_set_commands(CommandTable& table) { table.add(kSetCommands); }

}  // namespace keywarden
