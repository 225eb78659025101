// Sorted set commands that work on members one at a time: ZADD, ZINCRBY, ZREM, ZCARD, ZSCORE,
// ZMSCORE, ZRANK, ZREVRANK, ZPOPMIN, ZPOPMAX, ZMPOP, BZPOPMIN, BZPOPMAX, BZMPOP, ZRANDMEMBER
// and ZSCAN, with Redis 7.0's replies, argument checking order, encodings and propagation.
// The range and set-algebra commands live in zset_range_commands.cc.
//
// Writes propagate as received, except the pops that Redis rewrites: BZPOPMIN/BZPOPMAX become
// ZPOPMIN/ZPOPMAX key, and ZMPOP/BZMPOP become ZPOPMIN/ZPOPMAX key <number popped>, whether
// served at once or after blocking. A sorted set whose last member goes is deleted with it.
// ZRANK/ZREVRANK accept Redis 7.2's WITHSCORE (and so take an optional fourth argument).
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commands/blocking.h"
#include "commands/context.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "commands/scan_options.h"
#include "common/ascii.h"
#include "common/glob.h"
#include "common/number.h"
#include "types/value.h"
#include "types/zset_value.h"

namespace keywarden {

// Defined in zset_range_commands.cc.
void register_zset_range_commands(CommandTable& table);

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

const ZSetLimits& zset_limits(CommandContext& ctx) { return ctx.server.settings().zset_limits; }

bool is_zset(const Entry* entry) { return entry->value.type() == ValueType::kZSet; }
ZSetValue& zset_of(Entry* entry) { return entry->value.as<ZSetValue>(); }

// The sorted set at `key` for reading: null when absent. Sets *wrong_type (and replies
// WRONGTYPE) when the key holds another type.
const ZSetValue* read_zset(CommandContext& ctx, std::string_view key, bool* wrong_type) {
  return ctx.read_collection<ZSetValue>(key, ValueType::kZSet, wrong_type);
}

// Writes `score` as Redis's addReplyDouble does (RESP3 double, RESP2 bulk "%.17g").
void reply_score(CommandContext& ctx, double score) { ctx.reply.double_value(score); }

// --- ZADD, ZINCRBY -------------------------------------------------------------------------

void zadd_generic(CommandContext& ctx, uint8_t flags) {
  const std::string_view key = ctx.args[1];
  bool ch = false;
  size_t score_index = 2;
  // Options come first; the first word that is not one starts the score/member pairs (so
  // "ZINCRBY key nx member" reads NX and then lacks a pair, as in Redis).
  for (; score_index < ctx.args.size(); ++score_index) {
    const std::string_view option = ctx.args[score_index];
    if (equals_ignore_case(option, "nx")) {
      flags |= ZSetValue::kAddNx;
    } else if (equals_ignore_case(option, "xx")) {
      flags |= ZSetValue::kAddXx;
    } else if (equals_ignore_case(option, "ch")) {
      ch = true;
    } else if (equals_ignore_case(option, "incr")) {
      flags |= ZSetValue::kAddIncr;
    } else if (equals_ignore_case(option, "gt")) {
      flags |= ZSetValue::kAddGt;
    } else if (equals_ignore_case(option, "lt")) {
      flags |= ZSetValue::kAddLt;
    } else {
      break;
    }
  }
  const bool incr = (flags & ZSetValue::kAddIncr) != 0;
  const bool nx = (flags & ZSetValue::kAddNx) != 0;
  const bool xx = (flags & ZSetValue::kAddXx) != 0;
  const bool gt = (flags & ZSetValue::kAddGt) != 0;
  const bool lt = (flags & ZSetValue::kAddLt) != 0;
  const size_t words = ctx.args.size() - score_index;
  if (words == 0 || words % 2 != 0) return ctx.error(errors::kSyntax);
  const size_t pairs = words / 2;
  if (nx && xx) return ctx.error(errors::kZAddXxAndNx);
  if ((gt && nx) || (lt && nx) || (gt && lt)) return ctx.error(errors::kGtLtNxConflict);
  if (incr && pairs > 1) return ctx.error(errors::kZAddIncrOnePair);

  std::vector<double> scores(pairs);
  for (size_t i = 0; i < pairs; ++i) {
    if (!parse_double(ctx.args[score_index + 2 * i], &scores[i])) {
      return ctx.error(errors::kNotFloat);
    }
  }

  Entry* entry = ctx.lookup_write(key);
  if (entry != nullptr && !is_zset(entry)) return ctx.error(errors::kWrongType);
  int64_t added = 0;
  int64_t updated = 0;
  int64_t processed = 0;
  double score = 0;
  if (entry != nullptr || !xx) {
    const ZSetLimits limits = zset_limits(ctx);
    if (entry == nullptr) {
      // Redis 7.0 sizes a new set by its first member only; later members convert it as they
      // arrive.
      const bool skiplist =
          limits.max_listpack_entries == 0 ||
          limits.max_listpack_value < static_cast<int64_t>(ctx.args[score_index + 1].size());
      entry = ctx.db().add(key, Value::make_aggregate(ValueType::kZSet,
                                                      std::make_unique<ZSetValue>(skiplist)));
      ctx.created(key);
    }
    ZSetValue& zset = zset_of(entry);
    for (size_t i = 0; i < pairs; ++i) {
      double new_score = 0;
      const ZSetValue::AddResult result =
          zset.add(ctx.args[score_index + 2 * i + 1], scores[i], flags, limits, &new_score);
      if (result == ZSetValue::AddResult::kNaN) {
        // Only an INCR can produce NaN, so this is the single pair and nothing changed.
        if (zset.empty()) ctx.db().remove(entry);
        return ctx.error(errors::kZScoreNaN);
      }
      if (result == ZSetValue::AddResult::kAdded) ++added;
      if (result == ZSetValue::AddResult::kUpdated) ++updated;
      if (result != ZSetValue::AddResult::kSkipped) {
        ++processed;
        score = new_score;
      }
    }
  }
  if (added + updated > 0) {
    ctx.changed(key, kNotifyZset, incr ? "zincr" : "zadd", static_cast<uint64_t>(added + updated));
  }
  if (incr) {
    if (processed > 0) return reply_score(ctx, score);
    return ctx.reply.null();
  }
  ctx.reply.integer(ch ? added + updated : added);
}

void zadd_command(CommandContext& ctx) { zadd_generic(ctx, ZSetValue::kAddNone); }
void zincrby_command(CommandContext& ctx) { zadd_generic(ctx, ZSetValue::kAddIncr); }

// --- ZREM ----------------------------------------------------------------------------------

void zrem_command(CommandContext& ctx) {
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) return ctx.reply.integer(0);
  if (!is_zset(entry)) return ctx.error(errors::kWrongType);
  ZSetValue& zset = zset_of(entry);
  int64_t deleted = 0;
  bool key_removed = false;
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    if (zset.remove(ctx.args[i])) ++deleted;
    if (zset.empty()) {
      ctx.db().remove(entry);
      key_removed = true;
      break;
    }
  }
  if (deleted > 0) {
    ctx.changed(key, kNotifyZset, "zrem", static_cast<uint64_t>(deleted));
    if (key_removed) ctx.also_notify(kNotifyGeneric, "del", key);
  }
  ctx.reply.integer(deleted);
}

// --- Reads ---------------------------------------------------------------------------------

void zcard_command(CommandContext& ctx) {
  bool wrong_type;
  const ZSetValue* zset = read_zset(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  ctx.reply.integer(zset == nullptr ? 0 : static_cast<int64_t>(zset->size()));
}

void zscore_command(CommandContext& ctx) {
  bool wrong_type;
  const ZSetValue* zset = read_zset(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  double score;
  if (zset == nullptr || !zset->score_of(ctx.args[2], &score)) return ctx.reply.null();
  reply_score(ctx, score);
}

void zmscore_command(CommandContext& ctx) {
  bool wrong_type;
  const ZSetValue* zset = read_zset(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  ctx.reply.array_header(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    double score;
    if (zset != nullptr && zset->score_of(ctx.args[i], &score)) {
      reply_score(ctx, score);
    } else {
      ctx.reply.null();
    }
  }
}

void zrank_generic(CommandContext& ctx, bool reverse) {
  if (ctx.args.size() > 4) return ctx.error(errors::wrong_arity(ctx.command.full_name));
  bool with_score = false;
  if (ctx.args.size() == 4) {
    if (!equals_ignore_case(ctx.args[3], "withscore")) return ctx.error(errors::kSyntax);
    with_score = true;
  }
  bool wrong_type;
  const ZSetValue* zset = read_zset(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  double score = 0;
  const int64_t rank = zset == nullptr ? -1 : zset->rank(ctx.args[2], reverse, &score);
  if (rank < 0) {
    if (with_score) return ctx.reply.null_array();
    return ctx.reply.null();
  }
  if (with_score) ctx.reply.array_header(2);
  ctx.reply.integer(rank);
  if (with_score) reply_score(ctx, score);
}

void zrank_command(CommandContext& ctx) { zrank_generic(ctx, false); }
void zrevrank_command(CommandContext& ctx) { zrank_generic(ctx, true); }

// --- ZPOPMIN, ZPOPMAX, ZMPOP and their blocking forms --------------------------------------

// How a pop replies (Redis's genericZpopCommand): with the key first or not, and each
// member/score pair as a nested array or flat.
struct PopShape {
  bool emit_key;
  bool nested;
};

// Pops up to `count` (-1: one) elements of the set at `entry` (named `key`), replies, counts
// the changes, and deletes the key when emptied. Returns how many were popped.
int64_t pop_and_reply(CommandContext& ctx, Entry* entry, std::string_view key, bool highest,
                      int64_t count, PopShape shape) {
  ZSetValue& zset = zset_of(entry);
  if (count == -1) count = 1;
  const int64_t size = static_cast<int64_t>(zset.size());
  const int64_t popped = count > size ? size : count;
  if (shape.emit_key && shape.nested) {
    ctx.reply.array_header(2);
    ctx.reply.bulk(key);
    ctx.reply.array_header(static_cast<size_t>(popped));
  } else if (shape.emit_key) {
    ctx.reply.array_header(static_cast<size_t>(popped * 2 + 1));
    ctx.reply.bulk(key);
  } else {
    ctx.reply.array_header(static_cast<size_t>(shape.nested ? popped : popped * 2));
  }
  for (int64_t i = 0; i < popped; ++i) {
    const ZSetValue::Element element = zset.pop(highest);
    if (shape.nested) ctx.reply.array_header(2);
    ctx.reply.bulk(element.member);
    reply_score(ctx, element.score);
  }
  ctx.changed(key, kNotifyZset, highest ? "zpopmax" : "zpopmin", static_cast<uint64_t>(popped));
  if (zset.empty()) {
    ctx.db().remove(entry);
    ctx.also_notify(kNotifyGeneric, "del", key);
  }
  return popped;
}

// The first of `keys` that holds a sorted set (the others being absent), its index in *index;
// null when none does. Replies WRONGTYPE and sets *failed at the first key of another type.
Entry* first_zset(CommandContext& ctx, std::span<const std::string_view> keys, size_t* index,
                  bool* failed) {
  *failed = false;
  for (size_t i = 0; i < keys.size(); ++i) {
    Entry* entry = ctx.lookup_write(keys[i]);
    if (entry == nullptr) continue;
    if (!is_zset(entry)) {
      *failed = true;
      ctx.error(errors::kWrongType);
      return nullptr;
    }
    *index = i;
    return entry;
  }
  return nullptr;
}

std::string_view pop_command_name(bool highest) { return highest ? "ZPOPMAX" : "ZPOPMIN"; }

void zpop_generic(CommandContext& ctx, bool highest) {
  if (ctx.args.size() > 3) return ctx.error(errors::kSyntax);
  int64_t count = -1;
  if (ctx.args.size() == 3 && (!parse_int64(ctx.args[2], &count) || count < 0)) {
    return ctx.error(errors::kZMustBePositive);
  }
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) return ctx.reply.array_header(0);
  if (!is_zset(entry)) return ctx.error(errors::kWrongType);
  if (count == 0) return ctx.reply.array_header(0);
  // RESP3 nests the pairs only when a count was given.
  const PopShape shape{false, ctx.reply.resp() == 3 && count != -1};
  pop_and_reply(ctx, entry, key, highest, count, shape);
}

void zpopmin_command(CommandContext& ctx) { zpop_generic(ctx, false); }
void zpopmax_command(CommandContext& ctx) { zpop_generic(ctx, true); }

// ZMPOP/BZMPOP arguments after the timeout: numkeys key… MIN|MAX [COUNT count].
struct MultiPopArgs {
  std::span<const std::string_view> keys;
  bool highest = false;
  int64_t count = -1;
};

bool parse_multi_pop(CommandContext& ctx, size_t numkeys_index, MultiPopArgs* out) {
  int64_t numkeys;
  if (!parse_int64(ctx.args[numkeys_index], &numkeys) || numkeys < 1) {
    ctx.error(errors::kZNumkeysNotPositive);
    return false;
  }
  const size_t args = ctx.args.size();
  if (static_cast<uint64_t>(numkeys) >= args - numkeys_index - 1) {
    ctx.error(errors::kSyntax);
    return false;
  }
  const size_t where_index = numkeys_index + static_cast<size_t>(numkeys) + 1;
  if (equals_ignore_case(ctx.args[where_index], "MIN")) {
    out->highest = false;
  } else if (equals_ignore_case(ctx.args[where_index], "MAX")) {
    out->highest = true;
  } else {
    ctx.error(errors::kSyntax);
    return false;
  }
  for (size_t j = where_index + 1; j < args; ++j) {
    const bool more = j + 1 < args;
    if (out->count == -1 && equals_ignore_case(ctx.args[j], "COUNT") && more) {
      ++j;
      if (!parse_int64(ctx.args[j], &out->count) || out->count < 1) {
        ctx.error(errors::kZCountNotPositive);
        return false;
      }
    } else {
      ctx.error(errors::kSyntax);
      return false;
    }
  }
  out->keys = ctx.args.subspan(numkeys_index + 1, static_cast<size_t>(numkeys));
  return true;
}

// Serves a multi-key pop from the first key holding a sorted set: true when it replied
// (served or failed), false when every key is absent.
bool serve_multi_pop(CommandContext& ctx, std::span<const std::string_view> keys, bool highest,
                     int64_t count, PopShape shape, bool propagate_count) {
  size_t index = 0;
  bool failed;
  Entry* entry = first_zset(ctx, keys, &index, &failed);
  if (failed) return true;
  if (entry == nullptr) return false;
  const std::string key(keys[index]);
  const int64_t popped = pop_and_reply(ctx, entry, key, highest, count, shape);
  if (propagate_count) {
    char digits[kMaxInt64Chars];
    ctx.propagate({pop_command_name(highest), key,
                   std::string_view(digits, int64_to_chars(popped, digits))});
  } else {
    ctx.propagate({pop_command_name(highest), key});
  }
  return true;
}

void zmpop_command(CommandContext& ctx) {
  MultiPopArgs parsed;
  if (!parse_multi_pop(ctx, 1, &parsed)) return;
  if (!serve_multi_pop(ctx, parsed.keys, parsed.highest, parsed.count, PopShape{true, true},
                       true)) {
    ctx.reply.null_array();
  }
}

// Blocks on `keys` unless the client may not block (MULTI), where it answers as a timeout.
void block_or_time_out(CommandContext& ctx, std::span<const std::string_view> keys,
                       int64_t deadline_ms) {
  if (!ctx.may_block()) return ctx.reply.null_array();
  ctx.block(keys, ValueType::kZSet, deadline_ms);
}

void bzpop_generic(CommandContext& ctx, bool highest) {
  int64_t deadline_ms;
  std::string_view error;
  if (!parse_block_timeout(ctx.args.back(), ctx.now_ms, &deadline_ms, &error)) {
    return ctx.error(error);
  }
  const auto keys = ctx.args.subspan(1, ctx.args.size() - 2);
  if (serve_multi_pop(ctx, ctx.keys_to_serve(keys), highest, -1, PopShape{true, false}, false)) {
    return;
  }
  block_or_time_out(ctx, keys, deadline_ms);
}

void bzpopmin_command(CommandContext& ctx) { bzpop_generic(ctx, false); }
void bzpopmax_command(CommandContext& ctx) { bzpop_generic(ctx, true); }

void bzmpop_command(CommandContext& ctx) {
  MultiPopArgs parsed;
  if (!parse_multi_pop(ctx, 2, &parsed)) return;
  int64_t deadline_ms;
  std::string_view error;
  if (!parse_block_timeout(ctx.args[1], ctx.now_ms, &deadline_ms, &error)) {
    return ctx.error(error);
  }
  if (serve_multi_pop(ctx, ctx.keys_to_serve(parsed.keys), parsed.highest, parsed.count,
                      PopShape{true, true}, true)) {
    return;
  }
  block_or_time_out(ctx, parsed.keys, deadline_ms);
}

// --- ZRANDMEMBER ---------------------------------------------------------------------------

void reply_random_element(CommandContext& ctx, std::string_view member, double score,
                          bool with_scores) {
  if (with_scores && ctx.reply.resp() == 3) ctx.reply.array_header(2);
  ctx.reply.bulk(member);
  if (with_scores) reply_score(ctx, score);
}

void zrandmember_command(CommandContext& ctx) {
  std::mt19937_64& rng = ctx.server.keyspace().rng();
  if (ctx.args.size() == 2) {
    bool wrong_type;
    const ZSetValue* zset = read_zset(ctx, ctx.args[1], &wrong_type);
    if (wrong_type) return;
    if (zset == nullptr) return ctx.reply.null();
    return ctx.reply.bulk(zset->random_element(rng).first);
  }

  int64_t count;
  if (!parse_int64(ctx.args[2], &count)) return ctx.error(errors::kNotInteger);
  if (count == kInt64Min) return ctx.error(errors::kCountOutOfRange);
  if (ctx.args.size() > 4 ||
      (ctx.args.size() == 4 && !equals_ignore_case(ctx.args[3], "WITHSCORES"))) {
    return ctx.error(errors::kSyntax);
  }
  const bool with_scores = ctx.args.size() == 4;
  // Twice the count must still fit: the RESP2 reply holds members and scores.
  if (with_scores && (count < -kInt64Max / 2 || count > kInt64Max / 2)) {
    return ctx.error(errors::kValueOutOfRange);
  }
  bool wrong_type;
  const ZSetValue* zset = read_zset(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  if (zset == nullptr || count == 0) return ctx.reply.array_header(0);

  const bool flat_pairs = with_scores && ctx.reply.resp() == 2;
  const uint64_t size = zset->size();
  if (count < 0 || count == 1) {
    // A negative count allows repetitions: exactly |count| independent draws.
    const uint64_t draws = count < 0 ? static_cast<uint64_t>(-count) : 1;
    ctx.reply.array_header(flat_pairs ? draws * 2 : draws);
    // A client closed for its output limit stops the draws.
    for (uint64_t i = 0; i < draws && !ctx.reply.discarding(); ++i) {
      const auto [member, score] = zset->random_element(rng);
      reply_random_element(ctx, member, score, with_scores);
    }
    return;
  }
  if (static_cast<uint64_t>(count) >= size) {
    // The whole set, from the highest score down (Redis iterates sets from the end).
    ctx.reply.array_header(flat_pairs ? size * 2 : size);
    for (ZSetValue::Cursor cursor = zset->at_rank(size - 1); cursor.valid(); cursor.prev()) {
      reply_random_element(ctx, cursor.member(), cursor.score(), with_scores);
    }
    return;
  }
  const auto chosen = zset->random_distinct(static_cast<size_t>(count), rng);
  ctx.reply.array_header(flat_pairs ? chosen.size() * 2 : chosen.size());
  for (const auto& [member, score] : chosen) reply_random_element(ctx, member, score, with_scores);
}

// --- ZSCAN ---------------------------------------------------------------------------------

void zscan_command(CommandContext& ctx) {
  uint64_t cursor;
  ScanOptions options;
  const ZSetValue* zset =
      begin_collection_scan<ZSetValue>(ctx, ValueType::kZSet, &cursor, &options);
  if (zset == nullptr) return;
  std::vector<std::pair<std::string_view, double>> elements;
  size_t visited = 0;
  auto collect = [&](std::string_view member, double score) {
    ++visited;
    if (options.use_pattern && !glob_match(options.pattern, member)) return;
    elements.emplace_back(member, score);
  };
  cursor = walk_collection_scan(
      cursor, options.count, [&](uint64_t at) { return zset->scan(at, collect); },
      [&] { return visited; });
  reply_scan_cursor(ctx, cursor);
  ctx.reply.array_header(elements.size() * 2);
  char score_text[kMaxDoubleChars];
  for (const auto& [member, score] : elements) {
    ctx.reply.bulk(member);
    // Scores go out as plain strings, in RESP3 too.
    ctx.reply.bulk(std::string_view(score_text, double_to_chars(score, score_text)));
  }
}

// --- Table ---------------------------------------------------------------------------------

constexpr CommandSpec kZSetCommands[] = {
    {"zadd", -4, kWrite | kDenyOom | kFast, 1, 1, 1, kAclSortedSet, zadd_command, "sorted-set",
     "1.2.0",
     "Add one or more members to a sorted set, or update its score if it already exists",
     "O(log(N)) for each item added, where N is the number of elements in the sorted set."},
    {"zincrby", 4, kWrite | kDenyOom | kFast, 1, 1, 1, kAclSortedSet, zincrby_command,
     "sorted-set", "1.2.0", "Increment the score of a member in a sorted set",
     "O(log(N)) where N is the number of elements in the sorted set."},
    {"zrem", -3, kWrite | kFast, 1, 1, 1, kAclSortedSet, zrem_command, "sorted-set", "1.2.0",
     "Remove one or more members from a sorted set",
     "O(M*log(N)) with N being the number of elements in the sorted set and M the number of "
     "elements to be removed."},
    {"zcard", 2, kReadonly | kFast, 1, 1, 1, kAclSortedSet, zcard_command, "sorted-set", "1.2.0",
     "Get the number of members in a sorted set", "O(1)"},
    {"zscore", 3, kReadonly | kFast, 1, 1, 1, kAclSortedSet, zscore_command, "sorted-set",
     "1.2.0", "Get the score associated with the given member in a sorted set", "O(1)"},
    {"zmscore", -3, kReadonly | kFast, 1, 1, 1, kAclSortedSet, zmscore_command, "sorted-set",
     "6.2.0", "Get the score associated with the given members in a sorted set",
     "O(N) where N is the number of members being requested."},
    // Arity -3 (7.0 has 3) for Redis 7.2's optional WITHSCORE.
    {"zrank", -3, kReadonly | kFast, 1, 1, 1, kAclSortedSet, zrank_command, "sorted-set",
     "2.0.0", "Determine the index of a member in a sorted set", "O(log(N))"},
    {"zrevrank", -3, kReadonly | kFast, 1, 1, 1, kAclSortedSet, zrevrank_command, "sorted-set",
     "2.0.0",
     "Determine the index of a member in a sorted set, with scores ordered from high to low",
     "O(log(N))"},
    {"zpopmin", -2, kWrite | kFast, 1, 1, 1, kAclSortedSet, zpopmin_command, "sorted-set",
     "5.0.0", "Remove and return members with the lowest scores in a sorted set",
     "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number "
     "of elements popped."},
    {"zpopmax", -2, kWrite | kFast, 1, 1, 1, kAclSortedSet, zpopmax_command, "sorted-set",
     "5.0.0", "Remove and return members with the highest scores in a sorted set",
     "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number "
     "of elements popped."},
    {"zmpop", -4, kWrite | kMovableKeys, 0, 0, 0, kAclSortedSet, zmpop_command, "sorted-set",
     "7.0.0", "Remove and return members with scores in a sorted set",
     "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements "
     "in the sorted set, and M being the number of elements popped.", {}, numkeys_keys<1>},
    {"bzpopmin", -3, kWrite | kNoScript | kBlocking | kFast, 1, -2, 1, kAclSortedSet,
     bzpopmin_command, "sorted-set", "5.0.0",
     "Remove and return the member with the lowest score from one or more sorted sets, or "
     "block until one is available",
     "O(log(N)) with N being the number of elements in the sorted set."},
    {"bzpopmax", -3, kWrite | kNoScript | kBlocking | kFast, 1, -2, 1, kAclSortedSet,
     bzpopmax_command, "sorted-set", "5.0.0",
     "Remove and return the member with the highest score from one or more sorted sets, or "
     "block until one is available",
     "O(log(N)) with N being the number of elements in the sorted set."},
    {"bzmpop", -5, kWrite | kBlocking | kMovableKeys, 0, 0, 0, kAclSortedSet, bzmpop_command,
     "sorted-set", "7.0.0",
     "Remove and return members with scores in a sorted set or block until one is available",
     "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements "
     "in the sorted set, and M being the number of elements popped.", {}, numkeys_keys<2>},
    {"zrandmember", -2, kReadonly, 1, 1, 1, kAclSortedSet, zrandmember_command, "sorted-set",
     "6.2.0", "Get one or multiple random elements from a sorted set",
     "O(N) where N is the number of elements returned"},
    {"zscan", -3, kReadonly, 1, 1, 1, kAclSortedSet, zscan_command, "sorted-set", "2.8.0",
     "Incrementally iterate sorted sets elements and associated scores",
     "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
     "the cursor to return back to 0. N is the number of elements inside the collection.."},
};

}  // namespace

void register_zset_commands(CommandTable& table) {
  table.add(kZSetCommands);
  register_zset_range_commands(table);
}

}  // namespace keywarden
