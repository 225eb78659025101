// Sorted set commands over ranges and over several sets: ZRANGE (BYSCORE, BYLEX, REV, LIMIT,
// WITHSCORES), ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX, ZREVRANGE,
// ZRANGESTORE, ZCOUNT, ZLEXCOUNT, ZREMRANGEBYRANK, ZREMRANGEBYSCORE, ZREMRANGEBYLEX, ZUNION,
// ZINTER, ZDIFF, ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE and ZINTERCARD, as Redis 7.0 has them.
//
// Range arguments are read as Redis reads them: score bounds through strtod ("(" for an open
// end, "-inf"/"+inf", leading blanks and hexadecimal accepted, an empty bound read as 0, and
// only NaN or trailing bytes rejected), lex bounds as "[member", "(member", "-" or "+".
// Set algebra takes plain sets as inputs too, each member scoring 1. A stored result replaces
// the destination whatever it held (dropping its TTL), in the encoding Redis would give a set
// of that size; an empty result deletes the destination. Writes propagate as received.
#include <locale.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "commands/context.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "common/ascii.h"
#include "common/number.h"
#include "types/set_value.h"
#include "types/value.h"
#include "types/zset_value.h"

namespace keywarden {

void register_zset_range_commands(CommandTable& table);

namespace {

using Element = ZSetValue::Element;
using ElementView = std::pair<std::string_view, double>;

const ZSetLimits& zset_limits(CommandContext& ctx) { return ctx.server.settings().zset_limits; }

bool is_zset(const Entry* entry) { return entry->value.type() == ValueType::kZSet; }

const ZSetValue* read_zset(CommandContext& ctx, std::string_view key, bool* wrong_type) {
  return ctx.read_collection<ZSetValue>(key, ValueType::kZSet, wrong_type);
}

bool element_less(const Element& a, const Element& b) {
  return a.score < b.score || (a.score == b.score && a.member < b.member);
}

// --- Range parsing -------------------------------------------------------------------------

locale_t c_locale() {
  static const locale_t locale = newlocale(LC_ALL_MASK, "C", locale_t{});
  return locale;
}

// One score bound as Redis's zslParseRange reads it: the argument as a C string (up to its
// first NUL), an optional "(" for an open end, then whatever strtod accepts if it consumes
// everything and the result is not NaN.
bool parse_score_bound(std::string_view text, double* value, bool* exclusive) {
  text = text.substr(0, text.find('\0'));
  *exclusive = !text.empty() && text[0] == '(';
  if (*exclusive) text.remove_prefix(1);
  const std::string copy(text);
  char* end = nullptr;
  const double parsed = strtod_l(copy.c_str(), &end, c_locale());
  if (*end != '\0' || std::isnan(parsed)) return false;
  *value = parsed;
  return true;
}

bool parse_score_range(std::string_view min, std::string_view max, ScoreRange* range) {
  return parse_score_bound(min, &range->min, &range->min_exclusive) &&
         parse_score_bound(max, &range->max, &range->max_exclusive);
}

// One lex bound (Redis's zslParseLexRangeItem): "+" and "-" alone (as C strings), or "[" / "("
// followed by the member bytes.
bool parse_lex_bound(std::string_view text, LexBound* bound) {
  const char first = text.empty() ? '\0' : text[0];
  const char second = text.size() > 1 ? text[1] : '\0';
  switch (first) {
    case '+':
    case '-':
      if (second != '\0') return false;
      bound->kind = first == '+' ? LexBound::Kind::kPlusInfinity : LexBound::Kind::kMinusInfinity;
      bound->exclusive = true;
      return true;
    case '(':
    case '[':
      bound->kind = LexBound::Kind::kMember;
      bound->exclusive = first == '(';
      bound->member.assign(text.substr(1));
      return true;
    default:
      return false;
  }
}

bool parse_lex_range(std::string_view min, std::string_view max, LexRange* range) {
  return parse_lex_bound(min, &range->min) && parse_lex_bound(max, &range->max);
}

// --- Replies and stored results ------------------------------------------------------------

// An array of members; with scores, RESP2 interleaves them and RESP3 nests [member, score].
void reply_elements(CommandContext& ctx, const std::vector<ElementView>& elements,
                    bool with_scores) {
  const bool flat_pairs = with_scores && ctx.reply.resp() == 2;
  ctx.reply.array_header(flat_pairs ? elements.size() * 2 : elements.size());
  for (const auto& [member, score] : elements) {
    if (with_scores && !flat_pairs) ctx.reply.array_header(2);
    ctx.reply.bulk(member);
    if (with_scores) ctx.reply.double_value(score);
  }
}

// Stores `result` at `destination` and replies its size, as the store commands do: the
// destination is replaced whatever it held and loses its TTL; an empty result deletes it
// instead.
void store_result(CommandContext& ctx, std::string_view destination,
                  std::unique_ptr<ZSetValue> result) {
  if (result->empty()) {
    ctx.reply.integer(0);
    // Redis deletes without an expiry check (dbDelete): an expired destination that is still
    // stored counts as deleted by this command.
    Entry* existing = ctx.db().find_raw(destination);
    if (existing != nullptr) {
      ctx.db().remove(existing, ctx.server.settings().lazyfree_lazy_server_del);
      ctx.changed(destination, kNotifyGeneric, "del");
    }
    return;
  }
  const size_t count = result->size();
  Value value = Value::make_aggregate(ValueType::kZSet, std::move(result));
  Entry* entry = ctx.lookup_write(destination);
  if (entry != nullptr) {
    entry = ctx.db().overwrite(entry, std::move(value), /*keep_ttl=*/false,
                               ctx.server.settings().lazyfree_lazy_server_del);
  } else {
    ctx.db().add(destination, std::move(value));
    ctx.created(destination);
  }
  // The event is the command's name: zunionstore, zinterstore, zdiffstore or zrangestore.
  ctx.changed(destination, kNotifyZset, ctx.command.full_name);
  ctx.reply.integer(static_cast<int64_t>(count));
}

// --- ZRANGE and its variants ---------------------------------------------------------------

enum class RangeKind : uint8_t { kAuto, kRank, kScore, kLex };
enum class RangeDirection : uint8_t { kAuto, kForward, kReverse };

void collect_rank_range(const ZSetValue& zset, int64_t start, int64_t end, bool reverse,
                        std::vector<ElementView>* out) {
  const int64_t length = static_cast<int64_t>(zset.size());
  if (start < 0) start += length;
  if (end < 0) end += length;
  if (start < 0) start = 0;
  if (start > end || start >= length) return;
  if (end >= length) end = length - 1;
  const int64_t count = end - start + 1;
  ZSetValue::Cursor cursor =
      zset.at_rank(static_cast<size_t>(reverse ? length - 1 - start : start));
  out->reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count && cursor.valid(); ++i) {
    out->emplace_back(cursor.member(), cursor.score());
    if (reverse) {
      cursor.prev();
    } else {
      cursor.next();
    }
  }
}

// The walk shared by score and lex ranges (genericZrangebyscoreCommand and its lex twin):
// start at the range's first element (its last, reversed), skip `offset`, then take up to
// `limit` elements (all when negative) while they stay on the near side of the far bound.
template <typename Range, typename InFarBound>
void collect_walk(const ZSetValue& zset, const Range& range, int64_t offset, int64_t limit,
                  bool reverse, InFarBound&& in_far_bound, std::vector<ElementView>* out) {
  // A negative offset makes Redis skip to the end; an offset past the end finds nothing.
  if (offset < 0 || (offset > 0 && static_cast<uint64_t>(offset) >= zset.size())) return;
  ZSetValue::Cursor cursor = reverse ? zset.last_in(range) : zset.first_in(range);
  auto step = [&] {
    if (reverse) {
      cursor.prev();
    } else {
      cursor.next();
    }
  };
  for (; cursor.valid() && offset > 0; --offset) step();
  for (; cursor.valid() && limit != 0; step()) {
    if (!in_far_bound(cursor)) break;
    out->emplace_back(cursor.member(), cursor.score());
    if (limit > 0) --limit;
  }
}

// Redis's zrangeGenericCommand: the source key is args[key_index], followed by the two range
// arguments and the options; `store` means ZRANGESTORE with the destination at args[1].
void zrange_generic(CommandContext& ctx, size_t key_index, bool store, RangeKind kind,
                    RangeDirection direction) {
  const auto& args = ctx.args;
  size_t min_index = key_index + 1;
  size_t max_index = key_index + 2;
  bool with_scores = false;
  int64_t offset = 0;
  int64_t limit = -1;
  for (size_t j = key_index + 3; j < args.size(); ++j) {
    const size_t left = args.size() - j - 1;
    if (!store && equals_ignore_case(args[j], "withscores")) {
      with_scores = true;
    } else if (equals_ignore_case(args[j], "limit") && left >= 2) {
      if (!parse_int64(args[j + 1], &offset) || !parse_int64(args[j + 2], &limit)) {
        return ctx.error(errors::kNotInteger);
      }
      j += 2;
    } else if (direction == RangeDirection::kAuto && equals_ignore_case(args[j], "rev")) {
      direction = RangeDirection::kReverse;
    } else if (kind == RangeKind::kAuto && equals_ignore_case(args[j], "bylex")) {
      kind = RangeKind::kLex;
    } else if (kind == RangeKind::kAuto && equals_ignore_case(args[j], "byscore")) {
      kind = RangeKind::kScore;
    } else {
      return ctx.error(errors::kSyntax);
    }
  }
  if (direction == RangeDirection::kAuto) direction = RangeDirection::kForward;
  if (kind == RangeKind::kAuto) kind = RangeKind::kRank;
  // "LIMIT x -1" is the default and passes, as in Redis.
  if (limit != -1 && kind == RangeKind::kRank) {
    return ctx.error(errors::kZLimitNeedsByScoreOrByLex);
  }
  if (with_scores && kind == RangeKind::kLex) return ctx.error(errors::kZWithScoresAndByLex);
  const bool reverse = direction == RangeDirection::kReverse;
  // Reversed score and lex ranges are given as max, min.
  if (reverse && kind != RangeKind::kRank) std::swap(min_index, max_index);

  int64_t start = 0;
  int64_t end = 0;
  ScoreRange score_range;
  LexRange lex_range;
  switch (kind) {
    case RangeKind::kAuto:
    case RangeKind::kRank:
      if (!parse_int64(args[min_index], &start) || !parse_int64(args[max_index], &end)) {
        return ctx.error(errors::kNotInteger);
      }
      break;
    case RangeKind::kScore:
      if (!parse_score_range(args[min_index], args[max_index], &score_range)) {
        return ctx.error(errors::kZMinMaxNotFloat);
      }
      break;
    case RangeKind::kLex:
      if (!parse_lex_range(args[min_index], args[max_index], &lex_range)) {
        return ctx.error(errors::kZMinMaxNotLex);
      }
      break;
  }

  bool wrong_type;
  const ZSetValue* zset = read_zset(ctx, args[key_index], &wrong_type);
  if (wrong_type) return;
  std::vector<ElementView> elements;
  if (zset != nullptr) {
    switch (kind) {
      case RangeKind::kAuto:
      case RangeKind::kRank:
        collect_rank_range(*zset, start, end, reverse, &elements);
        break;
      case RangeKind::kScore:
        collect_walk(*zset, score_range, offset, limit, reverse,
                     [&](const ZSetValue::Cursor& c) {
                       return reverse ? score_range.above_min(c.score())
                                      : score_range.below_max(c.score());
                     },
                     &elements);
        break;
      case RangeKind::kLex:
        collect_walk(*zset, lex_range, offset, limit, reverse,
                     [&](const ZSetValue::Cursor& c) {
                       return reverse ? lex_range.above_min(c.member())
                                      : lex_range.below_max(c.member());
                     },
                     &elements);
        break;
    }
  }
  if (!store) return reply_elements(ctx, elements, with_scores);

  // Built as Redis builds it, element by element in the walk's order: a skiplist from the start
  // when a rank range is known to be too long, else a listpack converted on the way. The
  // order shows where a -0 score lost its sign (those stored while it was a listpack).
  const ZSetLimits limits = zset_limits(ctx);
  auto stored = std::make_unique<ZSetValue>(
      kind == RangeKind::kRank &&
      static_cast<int64_t>(elements.size()) > limits.max_listpack_entries);
  for (const auto& [member, score] : elements) stored->set(member, score, limits);
  store_result(ctx, args[1], std::move(stored));
}

void zrange_command(CommandContext& ctx) {
  zrange_generic(ctx, 1, false, RangeKind::kAuto, RangeDirection::kAuto);
}
void zrevrange_command(CommandContext& ctx) {
  zrange_generic(ctx, 1, false, RangeKind::kRank, RangeDirection::kReverse);
}
void zrangebyscore_command(CommandContext& ctx) {
  zrange_generic(ctx, 1, false, RangeKind::kScore, RangeDirection::kForward);
}
void zrevrangebyscore_command(CommandContext& ctx) {
  zrange_generic(ctx, 1, false, RangeKind::kScore, RangeDirection::kReverse);
}
void zrangebylex_command(CommandContext& ctx) {
  zrange_generic(ctx, 1, false, RangeKind::kLex, RangeDirection::kForward);
}
void zrevrangebylex_command(CommandContext& ctx) {
  zrange_generic(ctx, 1, false, RangeKind::kLex, RangeDirection::kReverse);
}
void zrangestore_command(CommandContext& ctx) {
  zrange_generic(ctx, 2, true, RangeKind::kAuto, RangeDirection::kAuto);
}

// --- ZCOUNT, ZLEXCOUNT ---------------------------------------------------------------------

void zcount_command(CommandContext& ctx) {
  ScoreRange range;
  if (!parse_score_range(ctx.args[2], ctx.args[3], &range)) {
    return ctx.error(errors::kZMinMaxNotFloat);
  }
  bool wrong_type;
  const ZSetValue* zset = read_zset(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  ctx.reply.integer(zset == nullptr ? 0 : static_cast<int64_t>(zset->count_in(range)));
}

void zlexcount_command(CommandContext& ctx) {
  LexRange range;
  if (!parse_lex_range(ctx.args[2], ctx.args[3], &range)) {
    return ctx.error(errors::kZMinMaxNotLex);
  }
  bool wrong_type;
  const ZSetValue* zset = read_zset(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  ctx.reply.integer(zset == nullptr ? 0 : static_cast<int64_t>(zset->count_in(range)));
}

// --- ZREMRANGEBYRANK, ZREMRANGEBYSCORE, ZREMRANGEBYLEX -------------------------------------

void zremrange_generic(CommandContext& ctx, RangeKind kind) {
  int64_t start = 0;
  int64_t end = 0;
  ScoreRange score_range;
  LexRange lex_range;
  if (kind == RangeKind::kRank) {
    if (!parse_int64(ctx.args[2], &start) || !parse_int64(ctx.args[3], &end)) {
      return ctx.error(errors::kNotInteger);
    }
  } else if (kind == RangeKind::kScore) {
    if (!parse_score_range(ctx.args[2], ctx.args[3], &score_range)) {
      return ctx.error(errors::kZMinMaxNotFloat);
    }
  } else if (!parse_lex_range(ctx.args[2], ctx.args[3], &lex_range)) {
    return ctx.error(errors::kZMinMaxNotLex);
  }
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) return ctx.reply.integer(0);
  if (!is_zset(entry)) return ctx.error(errors::kWrongType);
  ZSetValue& zset = entry->value.as<ZSetValue>();
  size_t deleted = 0;
  if (kind == RangeKind::kRank) {
    const int64_t length = static_cast<int64_t>(zset.size());
    if (start < 0) start += length;
    if (end < 0) end += length;
    if (start < 0) start = 0;
    if (start > end || start >= length) return ctx.reply.integer(0);
    if (end >= length) end = length - 1;
    deleted = zset.remove_rank_range(static_cast<size_t>(start), static_cast<size_t>(end));
  } else if (kind == RangeKind::kScore) {
    deleted = zset.remove_range(score_range);
  } else {
    deleted = zset.remove_range(lex_range);
  }
  const bool key_removed = zset.empty();
  if (key_removed) ctx.db().remove(entry);
  if (deleted > 0) {
    // zremrangebyrank, zremrangebyscore or zremrangebylex: the command's name.
    ctx.changed(key, kNotifyZset, ctx.command.full_name, deleted);
    if (key_removed) ctx.also_notify(kNotifyGeneric, "del", key);
  }
  ctx.reply.integer(static_cast<int64_t>(deleted));
}

void zremrangebyrank_command(CommandContext& ctx) { zremrange_generic(ctx, RangeKind::kRank); }
void zremrangebyscore_command(CommandContext& ctx) { zremrange_generic(ctx, RangeKind::kScore); }
void zremrangebylex_command(CommandContext& ctx) { zremrange_generic(ctx, RangeKind::kLex); }

// --- ZUNION, ZINTER, ZDIFF, their STORE forms, ZINTERCARD ----------------------------------

enum class SetOperation : uint8_t { kUnion, kInter, kDiff };
enum class ScoreAggregate : uint8_t { kSum, kMin, kMax };

// One input of the set algebra: a sorted set, a plain set (every member scoring 1) or a
// missing key (an empty set), with its weight.
struct OperationSource {
  const ZSetValue* zset = nullptr;
  const SetValue* set = nullptr;
  double weight = 1;

  size_t size() const {
    if (zset != nullptr) return zset->size();
    return set != nullptr ? set->size() : 0;
  }
  bool find(std::string_view member, double* score) const {
    if (zset != nullptr) return zset->score_of(member, score);
    if (set != nullptr && set->contains(member)) {
      *score = 1;
      return true;
    }
    return false;
  }
  // visit(member, score); the view lasts only for the call.
  template <typename Fn>
  void for_each(Fn&& visit) const {
    if (zset != nullptr) {
      zset->for_each(visit);
    } else if (set != nullptr) {
      set->for_each([&](std::string_view member) { visit(member, 1.0); });
    }
  }
};

// Folds `value` into *target (Redis's zunionInterAggregate): a sum that turns NaN
// (inf + -inf) becomes 0; MIN and MAX keep the target when the value is NaN.
void aggregate_into(double* target, double value, ScoreAggregate mode) {
  switch (mode) {
    case ScoreAggregate::kSum:
      *target += value;
      if (std::isnan(*target)) *target = 0;
      break;
    case ScoreAggregate::kMin:
      *target = value < *target ? value : *target;
      break;
    case ScoreAggregate::kMax:
      *target = value > *target ? value : *target;
      break;
  }
}

// Redis's zunionInterDiffGenericCommand. `destination` is empty for the reply forms;
// `cardinality_only` is ZINTERCARD.
void set_operation(CommandContext& ctx, std::string_view destination, bool has_destination,
                   size_t numkeys_index, SetOperation operation, bool cardinality_only) {
  const auto& args = ctx.args;
  int64_t numkeys;
  if (!parse_int64(args[numkeys_index], &numkeys)) return ctx.error(errors::kNotInteger);
  if (numkeys < 1) {
    return ctx.error(std::string(errors::kZNoInputKeyPrefix) + ctx.command.full_name +
                     std::string(errors::kZNoInputKeySuffix));
  }
  if (static_cast<uint64_t>(numkeys) > args.size() - (numkeys_index + 1)) {
    return ctx.error(errors::kSyntax);
  }

  // Inputs are looked up (and type-checked) before the options are read, as in Redis.
  std::vector<OperationSource> sources(static_cast<size_t>(numkeys));
  size_t j = numkeys_index + 1;
  for (OperationSource& source : sources) {
    const Entry* entry = ctx.lookup_read(args[j]);
    ++j;
    if (entry == nullptr) continue;
    if (entry->value.type() == ValueType::kZSet) {
      source.zset = &entry->value.as<ZSetValue>();
    } else if (entry->value.type() == ValueType::kSet) {
      source.set = &entry->value.as<SetValue>();
    } else {
      return ctx.error(errors::kWrongType);
    }
  }

  ScoreAggregate mode = ScoreAggregate::kSum;
  bool with_scores = false;
  int64_t limit = 0;
  const bool weighted = operation != SetOperation::kDiff && !cardinality_only;
  while (j < args.size()) {
    const size_t remaining = args.size() - j;
    if (weighted && remaining >= sources.size() + 1 && equals_ignore_case(args[j], "weights")) {
      ++j;
      for (OperationSource& source : sources) {
        if (!parse_double(args[j++], &source.weight)) {
          return ctx.error(errors::kZWeightNotFloat);
        }
      }
    } else if (weighted && remaining >= 2 && equals_ignore_case(args[j], "aggregate")) {
      const std::string_view name = args[j + 1];
      if (equals_ignore_case(name, "sum")) {
        mode = ScoreAggregate::kSum;
      } else if (equals_ignore_case(name, "min")) {
        mode = ScoreAggregate::kMin;
      } else if (equals_ignore_case(name, "max")) {
        mode = ScoreAggregate::kMax;
      } else {
        return ctx.error(errors::kSyntax);
      }
      j += 2;
    } else if (!has_destination && !cardinality_only && equals_ignore_case(args[j], "withscores")) {
      with_scores = true;
      ++j;
    } else if (cardinality_only && remaining >= 2 && equals_ignore_case(args[j], "limit")) {
      if (!parse_int64(args[j + 1], &limit) || limit < 0) {
        return ctx.error(errors::kZLimitNegative);
      }
      j += 2;
    } else {
      return ctx.error(errors::kSyntax);
    }
  }

  // Smallest inputs first (a stable sort, as glibc's qsort merge sort is): an intersection
  // walks the smallest set, and a union adds the scores in this order.
  if (operation != SetOperation::kDiff) {
    std::stable_sort(sources.begin(), sources.end(),
                     [](const OperationSource& a, const OperationSource& b) {
                       return a.size() < b.size();
                     });
  }

  std::vector<Element> result;
  uint64_t cardinality = 0;
  switch (operation) {
    case SetOperation::kInter: {
      if (sources[0].size() == 0) break;
      bool done = false;
      sources[0].for_each([&](std::string_view member, double first_score) {
        if (done) return;
        double score = sources[0].weight * first_score;
        if (std::isnan(score)) score = 0;
        size_t i = 1;
        for (; i < sources.size(); ++i) {
          double value;
          if (!sources[i].find(member, &value)) break;
          aggregate_into(&score, value * sources[i].weight, mode);
        }
        if (i < sources.size()) return;
        if (cardinality_only) {
          ++cardinality;
          done = limit > 0 && cardinality >= static_cast<uint64_t>(limit);
        } else {
          result.push_back(Element{std::string(member), score});
        }
      });
      break;
    }
    case SetOperation::kUnion: {
      std::unordered_map<std::string, double> scores;
      for (const OperationSource& source : sources) {
        source.for_each([&](std::string_view member, double member_score) {
          double score = source.weight * member_score;
          if (std::isnan(score)) score = 0;
          auto [it, inserted] = scores.try_emplace(std::string(member), score);
          if (!inserted) aggregate_into(&it->second, score, mode);
        });
      }
      result.reserve(scores.size());
      for (auto& [member, score] : scores) result.push_back(Element{member, score});
      break;
    }
    case SetOperation::kDiff: {
      if (sources[0].size() == 0) break;
      sources[0].for_each([&](std::string_view member, double score) {
        double ignored;
        for (size_t i = 1; i < sources.size(); ++i) {
          if (sources[i].find(member, &ignored)) return;
        }
        result.push_back(Element{std::string(member), score});
      });
      break;
    }
  }

  if (cardinality_only) return ctx.reply.integer(static_cast<int64_t>(cardinality));
  std::sort(result.begin(), result.end(), element_less);
  if (has_destination) {
    return store_result(ctx, destination,
                        ZSetValue::from_sorted(std::move(result), zset_limits(ctx)));
  }
  std::vector<ElementView> views;
  views.reserve(result.size());
  for (const Element& element : result) views.emplace_back(element.member, element.score);
  reply_elements(ctx, views, with_scores);
}

void zunion_command(CommandContext& ctx) {
  set_operation(ctx, {}, false, 1, SetOperation::kUnion, false);
}
void zinter_command(CommandContext& ctx) {
  set_operation(ctx, {}, false, 1, SetOperation::kInter, false);
}
void zdiff_command(CommandContext& ctx) {
  set_operation(ctx, {}, false, 1, SetOperation::kDiff, false);
}
void zunionstore_command(CommandContext& ctx) {
  set_operation(ctx, ctx.args[1], true, 2, SetOperation::kUnion, false);
}
void zinterstore_command(CommandContext& ctx) {
  set_operation(ctx, ctx.args[1], true, 2, SetOperation::kInter, false);
}
void zdiffstore_command(CommandContext& ctx) {
  set_operation(ctx, ctx.args[1], true, 2, SetOperation::kDiff, false);
}
void zintercard_command(CommandContext& ctx) {
  set_operation(ctx, {}, false, 1, SetOperation::kInter, true);
}

// --- Table ---------------------------------------------------------------------------------

constexpr std::string_view kRangeComplexity =
    "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
    "elements returned.";
constexpr std::string_view kLimitedRangeComplexity =
    "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
    "elements being returned. If M is constant (e.g. always asking for the first 10 elements "
    "with LIMIT), you can consider it O(log(N)).";
constexpr std::string_view kRemoveRangeComplexity =
    "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
    "elements removed by the operation.";

constexpr CommandSpec kZSetRangeCommands[] = {
    {"zrange", -4, kReadonly, 1, 1, 1, kAclSortedSet, zrange_command, "sorted-set", "1.2.0",
     "Return a range of members in a sorted set", kRangeComplexity},
    {"zrangebyscore", -4, kReadonly, 1, 1, 1, kAclSortedSet, zrangebyscore_command,
     "sorted-set", "1.0.5", "Return a range of members in a sorted set, by score",
     kLimitedRangeComplexity},
    {"zrevrangebyscore", -4, kReadonly, 1, 1, 1, kAclSortedSet, zrevrangebyscore_command,
     "sorted-set", "2.2.0",
     "Return a range of members in a sorted set, by score, with scores ordered from high to "
     "low",
     kLimitedRangeComplexity},
    {"zrangebylex", -4, kReadonly, 1, 1, 1, kAclSortedSet, zrangebylex_command, "sorted-set",
     "2.8.9", "Return a range of members in a sorted set, by lexicographical range",
     kLimitedRangeComplexity},
    {"zrevrangebylex", -4, kReadonly, 1, 1, 1, kAclSortedSet, zrevrangebylex_command,
     "sorted-set", "2.8.9",
     "Return a range of members in a sorted set, by lexicographical range, ordered from higher "
     "to lower strings.",
     kLimitedRangeComplexity},
    {"zrevrange", -4, kReadonly, 1, 1, 1, kAclSortedSet, zrevrange_command, "sorted-set",
     "1.2.0",
     "Return a range of members in a sorted set, by index, with scores ordered from high to low",
     kRangeComplexity},
    {"zrangestore", -5, kWrite | kDenyOom, 1, 2, 1, kAclSortedSet, zrangestore_command,
     "sorted-set", "6.2.0", "Store a range of members from sorted set into another key",
     "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
     "elements stored into the destination key."},
    {"zcount", 4, kReadonly | kFast, 1, 1, 1, kAclSortedSet, zcount_command, "sorted-set",
     "2.0.0", "Count the members in a sorted set with scores within the given values",
     "O(log(N)) with N being the number of elements in the sorted set."},
    {"zlexcount", 4, kReadonly | kFast, 1, 1, 1, kAclSortedSet, zlexcount_command, "sorted-set",
     "2.8.9", "Count the number of members in a sorted set between a given lexicographical range",
     "O(log(N)) with N being the number of elements in the sorted set."},
    {"zremrangebyrank", 4, kWrite, 1, 1, 1, kAclSortedSet, zremrangebyrank_command,
     "sorted-set", "2.0.0", "Remove all members in a sorted set within the given indexes",
     kRemoveRangeComplexity},
    {"zremrangebyscore", 4, kWrite, 1, 1, 1, kAclSortedSet, zremrangebyscore_command,
     "sorted-set", "1.2.0", "Remove all members in a sorted set within the given scores",
     kRemoveRangeComplexity},
    {"zremrangebylex", 4, kWrite, 1, 1, 1, kAclSortedSet, zremrangebylex_command, "sorted-set",
     "2.8.9", "Remove all members in a sorted set between the given lexicographical range",
     kRemoveRangeComplexity},
    {"zunion", -3, kReadonly | kMovableKeys, 0, 0, 0, kAclSortedSet, zunion_command,
     "sorted-set", "6.2.0", "Add multiple sorted sets",
     "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being "
     "the number of elements in the resulting sorted set.", {}, numkeys_keys<1>},
    {"zinter", -3, kReadonly | kMovableKeys, 0, 0, 0, kAclSortedSet, zinter_command,
     "sorted-set", "6.2.0", "Intersect multiple sorted sets",
     "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the "
     "number of input sorted sets and M being the number of elements in the resulting sorted "
     "set.", {}, numkeys_keys<1>},
    {"zdiff", -3, kReadonly | kMovableKeys, 0, 0, 0, kAclSortedSet, zdiff_command, "sorted-set",
     "6.2.0", "Subtract multiple sorted sets",
     "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N "
     "is the size of the first set, and K is the size of the result set.", {}, numkeys_keys<1>},
    {"zunionstore", -4, kWrite | kDenyOom | kMovableKeys, 1, 1, 1, kAclSortedSet,
     zunionstore_command, "sorted-set", "2.0.0",
     "Add multiple sorted sets and store the resulting sorted set in a new key",
     "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being "
     "the number of elements in the resulting sorted set.", {}, numkeys_keys<2, 1>},
    {"zinterstore", -4, kWrite | kDenyOom | kMovableKeys, 1, 1, 1, kAclSortedSet,
     zinterstore_command, "sorted-set", "2.0.0",
     "Intersect multiple sorted sets and store the resulting sorted set in a new key",
     "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the "
     "number of input sorted sets and M being the number of elements in the resulting sorted "
     "set.", {}, numkeys_keys<2, 1>},
    {"zdiffstore", -4, kWrite | kDenyOom | kMovableKeys, 1, 1, 1, kAclSortedSet,
     zdiffstore_command, "sorted-set", "6.2.0",
     "Subtract multiple sorted sets and store the resulting sorted set in a new key",
     "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N "
     "is the size of the first set, and K is the size of the result set.", {}, numkeys_keys<2, 1>},
    {"zintercard", -3, kReadonly | kMovableKeys, 0, 0, 0, kAclSortedSet, zintercard_command,
     "sorted-set", "7.0.0",
     "Intersect multiple sorted sets and return the cardinality of the result",
     "O(N*K) worst case with N being the smallest input sorted set, K being the number of input "
     "sorted sets.", {}, numkeys_keys<1>},
};

}  // namespace

void register_zset_range_commands(CommandTable& table) { table.add(kZSetRangeCommands); }

}  // namespace keywarden
