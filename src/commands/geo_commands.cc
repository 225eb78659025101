// The geo commands, on sorted sets whose scores are 52-bit geohashes (types/geohash.h): GEOADD,
// GEOPOS, GEODIST, GEOHASH, GEOSEARCH, GEOSEARCHSTORE and the deprecated GEORADIUS,
// GEORADIUSBYMEMBER and their _RO forms, with Redis 7.0's replies, argument checking order,
// errors and events.
//
// GEOADD is ZADD with computed scores, as in Redis: it fires `zadd` and propagates as the ZADD
// it amounts to (the scores as integers). The searches all run through one core (Redis's
// georadiusGeneric): parse, find the centre, scan the score intervals of the nine cells around
// it, keep what the exact test accepts, sort by distance when asked, then reply or store. A
// store fires `geosearchstore` or `georadiusstore` and propagates as received (the result
// depends only on the data, so a replica computes the same).
//
// Members are read in place while a search runs: nothing writes to the source until the
// result has been copied out.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commands/context.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "common/ascii.h"
#include "common/number.h"
#include "types/geohash.h"
#include "types/value.h"
#include "types/zset_value.h"

namespace keywarden {

namespace {

constexpr std::string_view kUnsupportedUnit =
    "ERR unsupported unit provided. please use M, KM, FT, MI";
constexpr std::string_view kCouldNotDecodeMember = "ERR could not decode requested zset member";
constexpr std::string_view kNeedNumericRadius = "ERR need numeric radius";
constexpr std::string_view kNeedNumericWidth = "ERR need numeric width";
constexpr std::string_view kNeedNumericHeight = "ERR need numeric height";
constexpr std::string_view kRadiusNegative = "ERR radius cannot be negative";
constexpr std::string_view kBoxNegative = "ERR height or width cannot be negative";
constexpr std::string_view kCountNotPositive = "ERR COUNT must be > 0";
constexpr std::string_view kAnyRequiresCount = "ERR the ANY argument requires COUNT argument";

ZSetValue& zset_of(Entry* entry) { return entry->value.as<ZSetValue>(); }

// --- Arguments -----------------------------------------------------------------------------

// The size of a unit in metres; replies the error and returns false for an unknown one.
bool parse_unit(CommandContext& ctx, std::string_view unit, double* to_meters) {
  if (equals_ignore_case(unit, "m")) {
    *to_meters = 1;
  } else if (equals_ignore_case(unit, "km")) {
    *to_meters = 1000;
  } else if (equals_ignore_case(unit, "ft")) {
    *to_meters = 0.3048;
  } else if (equals_ignore_case(unit, "mi")) {
    *to_meters = 1609.34;
  } else {
    ctx.error(kUnsupportedUnit);
    return false;
  }
  return true;
}

// A longitude and a latitude, each a float, together within the storable limits.
bool parse_coordinates(CommandContext& ctx, std::string_view longitude_text,
                       std::string_view latitude_text, double* longitude, double* latitude) {
  if (!parse_double(longitude_text, longitude) || !parse_double(latitude_text, latitude)) {
    ctx.error(errors::kNotFloat);
    return false;
  }
  if (!geo::valid_coordinates(*longitude, *latitude)) {
    // Redis prints the pair with "%f": a huge value prints all its digits.
    char text[1024];
    std::snprintf(text, sizeof(text), "ERR invalid longitude,latitude pair %f,%f", *longitude,
                  *latitude);
    ctx.error(text);
    return false;
  }
  return true;
}

// <radius> <unit>
bool parse_radius(CommandContext& ctx, std::string_view radius_text, std::string_view unit,
                  geo::Shape* shape) {
  double radius;
  if (!parse_double(radius_text, &radius)) {
    ctx.error(kNeedNumericRadius);
    return false;
  }
  if (radius < 0) {
    ctx.error(kRadiusNegative);
    return false;
  }
  shape->radius = radius;
  return parse_unit(ctx, unit, &shape->conversion);
}

// <width> <height> <unit>
bool parse_box(CommandContext& ctx, std::span<const std::string_view> args, geo::Shape* shape) {
  double width;
  double height;
  if (!parse_double(args[0], &width)) {
    ctx.error(kNeedNumericWidth);
    return false;
  }
  if (!parse_double(args[1], &height)) {
    ctx.error(kNeedNumericHeight);
    return false;
  }
  if (height < 0 || width < 0) {
    ctx.error(kBoxNegative);
    return false;
  }
  shape->width = width;
  shape->height = height;
  return parse_unit(ctx, args[2], &shape->conversion);
}

// The position of `member` in `zset`; false when it is not there.
bool member_position(const ZSetValue& zset, std::string_view member, double* longitude,
                     double* latitude) {
  double score;
  if (!zset.score_of(member, &score)) return false;
  geo::position_of_score(score, longitude, latitude);
  return true;
}

// --- Replies -------------------------------------------------------------------------------

// A distance as Redis prints it: "%.4f", a bulk string in both protocols.
void reply_distance(CommandContext& ctx, double distance) {
  // Distances are at most half the Earth's circumference (6.6e7 in feet): 64 bytes is ample.
  char text[64];
  const auto result =
      std::to_chars(text, text + sizeof(text), distance, std::chars_format::fixed, 4);
  ctx.reply.bulk(std::string_view(text, static_cast<size_t>(result.ptr - text)));
}

// A coordinate as Redis's addReplyHumanLongDouble prints it: 17 decimals with the trailing
// zeros (and a bare '.') dropped, "-0" as "0"; a bulk string in RESP2, a double in RESP3.
void reply_coordinate(CommandContext& ctx, double value) {
  // Coordinates are within ±180 (decoding clamps them), so 17 decimals fit easily.
  char text[64];
  char* const digits = text + 1;
  const auto result =
      std::to_chars(digits, text + sizeof(text) - 2, value, std::chars_format::fixed, 17);
  size_t length = static_cast<size_t>(result.ptr - digits);
  while (digits[length - 1] == '0') --length;
  if (digits[length - 1] == '.') --length;
  if (length == 2 && digits[0] == '-' && digits[1] == '0') {
    digits[0] = '0';
    length = 1;
  }
  if (ctx.reply.resp() == 3) {
    text[0] = ',';
    digits[length] = '\r';
    digits[length + 1] = '\n';
    ctx.reply.raw(std::string_view(text, length + 3));
  } else {
    ctx.reply.bulk(std::string_view(digits, length));
  }
}

void reply_position(CommandContext& ctx, double longitude, double latitude) {
  ctx.reply.array_header(2);
  reply_coordinate(ctx, longitude);
  reply_coordinate(ctx, latitude);
}

// --- GEOADD --------------------------------------------------------------------------------

void geoadd_command(CommandContext& ctx) {
  const std::string_view key = ctx.args[1];
  bool nx = false;
  bool xx = false;
  bool ch = false;
  size_t longitude_index = 2;
  for (; longitude_index < ctx.args.size(); ++longitude_index) {
    const std::string_view option = ctx.args[longitude_index];
    if (equals_ignore_case(option, "nx")) {
      nx = true;
    } else if (equals_ignore_case(option, "xx")) {
      xx = true;
    } else if (equals_ignore_case(option, "ch")) {
      ch = true;
    } else {
      break;
    }
  }
  const size_t words = ctx.args.size() - longitude_index;
  // No triple at all is ZADD's syntax error in Redis, which GEOADD hands the work to.
  if (words % 3 != 0 || (xx && nx) || words == 0) return ctx.error(errors::kSyntax);
  const size_t elements = words / 3;

  std::vector<uint64_t> scores(elements);
  for (size_t i = 0; i < elements; ++i) {
    const size_t at = longitude_index + i * 3;
    double longitude;
    double latitude;
    if (!parse_coordinates(ctx, ctx.args[at], ctx.args[at + 1], &longitude, &latitude)) return;
    scores[i] = geo::score_of(longitude, latitude);
  }

  Entry* entry = ctx.lookup_write(key);
  if (entry != nullptr && entry->value.type() != ValueType::kZSet) {
    return ctx.error(errors::kWrongType);
  }
  int64_t added = 0;
  int64_t updated = 0;
  if (entry != nullptr || !xx) {
    const ZSetLimits& limits = ctx.server.settings().zset_limits;
    if (entry == nullptr) {
      // As ZADD: a new set's encoding follows its first member only.
      const bool skiplist =
          limits.max_listpack_entries == 0 ||
          limits.max_listpack_value < static_cast<int64_t>(ctx.args[longitude_index + 2].size());
      entry = ctx.db().add(
          key, Value::make_aggregate(ValueType::kZSet, std::make_unique<ZSetValue>(skiplist)));
      ctx.created(key);
    }
    const uint8_t flags = static_cast<uint8_t>((nx ? ZSetValue::kAddNx : ZSetValue::kAddNone) |
                                               (xx ? ZSetValue::kAddXx : ZSetValue::kAddNone));
    ZSetValue& zset = zset_of(entry);
    for (size_t i = 0; i < elements; ++i) {
      const std::string_view member = ctx.args[longitude_index + i * 3 + 2];
      const ZSetValue::AddResult result =
          zset.add(member, static_cast<double>(scores[i]), flags, limits);
      if (result == ZSetValue::AddResult::kAdded) ++added;
      if (result == ZSetValue::AddResult::kUpdated) ++updated;
    }
  }
  if (added + updated > 0) {
    ctx.changed(key, kNotifyZset, "zadd", static_cast<uint64_t>(added + updated));
    // The effect is the ZADD Redis rewrites GEOADD into: the key and options as sent, then
    // score/member pairs.
    std::vector<std::string> score_texts(elements);
    for (size_t i = 0; i < elements; ++i) score_texts[i] = std::to_string(scores[i]);
    std::vector<std::string_view> effect;
    effect.reserve(longitude_index + elements * 2);
    effect.push_back("zadd");
    for (size_t i = 1; i < longitude_index; ++i) effect.push_back(ctx.args[i]);
    for (size_t i = 0; i < elements; ++i) {
      effect.push_back(score_texts[i]);
      effect.push_back(ctx.args[longitude_index + i * 3 + 2]);
    }
    ctx.propagate(effect);
  }
  ctx.reply.integer(ch ? added + updated : added);
}

// --- GEOPOS, GEOHASH, GEODIST --------------------------------------------------------------

// GEOPOS and GEOHASH: one reply per member argument, `found(longitude, latitude)` for a member
// with a position and `missing()` for one without (or when the key is absent).
template <typename Found, typename Missing>
void reply_member_positions(CommandContext& ctx, Found found, Missing missing) {
  bool wrong_type;
  const ZSetValue* zset =
      ctx.read_collection<ZSetValue>(ctx.args[1], ValueType::kZSet, &wrong_type);
  if (wrong_type) return;
  ctx.reply.array_header(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    double longitude;
    double latitude;
    if (zset != nullptr && member_position(*zset, ctx.args[i], &longitude, &latitude)) {
      found(longitude, latitude);
    } else {
      missing();
    }
  }
}

void geopos_command(CommandContext& ctx) {
  reply_member_positions(
      ctx, [&](double longitude, double latitude) { reply_position(ctx, longitude, latitude); },
      [&] { ctx.reply.null_array(); });
}

void geohash_command(CommandContext& ctx) {
  reply_member_positions(
      ctx,
      [&](double longitude, double latitude) {
        const std::array<char, 11> text = geo::standard_geohash(longitude, latitude);
        ctx.reply.bulk(std::string_view(text.data(), text.size()));
      },
      [&] { ctx.reply.null(); });
}

void geodist_command(CommandContext& ctx) {
  double to_meters = 1;
  if (ctx.args.size() == 5) {
    if (!parse_unit(ctx, ctx.args[4], &to_meters)) return;
  } else if (ctx.args.size() > 5) {
    return ctx.error(errors::kSyntax);
  }
  bool wrong_type;
  const ZSetValue* zset =
      ctx.read_collection<ZSetValue>(ctx.args[1], ValueType::kZSet, &wrong_type);
  if (wrong_type) return;
  double longitude1;
  double latitude1;
  double longitude2;
  double latitude2;
  if (zset == nullptr || !member_position(*zset, ctx.args[2], &longitude1, &latitude1) ||
      !member_position(*zset, ctx.args[3], &longitude2, &latitude2)) {
    return ctx.reply.null();
  }
  reply_distance(ctx, geo::distance(longitude1, latitude1, longitude2, latitude2) / to_meters);
}

// --- The searches --------------------------------------------------------------------------

// Which command runs the search (Redis's RADIUS_* and GEOSEARCH* flags).
enum SearchFlags : uint8_t {
  kAroundCoordinates = 1 << 0,  // GEORADIUS: lon lat radius unit
  kAroundMember = 1 << 1,       // GEORADIUSBYMEMBER: member radius unit
  kNoStore = 1 << 2,            // the _RO forms: no STORE/STOREDIST
  kSearch = 1 << 3,             // GEOSEARCH's arguments
  kSearchStore = 1 << 4,        // GEOSEARCHSTORE: the destination first, STOREDIST a flag
};

enum class SortOrder : uint8_t { kNone, kAscending, kDescending };

// A match: where it is, how far from the centre (metres), its score and its member.
struct GeoPoint {
  double longitude;
  double latitude;
  double distance;
  double score;
  std::string_view member;
};

// Appends the members of `zset` inside `shape` to *points, scanning the nine cells in Redis's
// order. With a `limit` (ANY), stops as soon as that many were found.
void collect_points(const ZSetValue& zset, const geo::Shape& shape, size_t limit,
                    std::vector<GeoPoint>* points) {
  const std::array<geo::HashBits, 9> cells = geo::search_cells(shape);
  size_t last_processed = 0;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (cells[i].is_zero()) continue;
    // With a huge radius neighbouring cells can be the same cell: skip a repeat of the one just
    // scanned. (Like Redis, the comparison is off while the last scanned is the centre.)
    if (last_processed != 0 && cells[i].bits == cells[last_processed].bits &&
        cells[i].step == cells[last_processed].step) {
      continue;
    }
    if (limit != 0 && points->size() >= limit) break;
    uint64_t min;
    uint64_t max;
    geo::score_range_of_cell(cells[i], &min, &max);
    const ScoreRange range{static_cast<double>(min), static_cast<double>(max), false, true};
    for (ZSetValue::Cursor cursor = zset.first_in(range); cursor.valid(); cursor.next()) {
      cursor.prefetch_next();
      const double score = cursor.score();
      if (!range.below_max(score)) break;
      GeoPoint point;
      geo::position_of_score(score, &point.longitude, &point.latitude);
      if (shape.contains(point.longitude, point.latitude, &point.distance)) {
        point.score = score;
        point.member = cursor.member();
        points->push_back(point);
        if (limit != 0 && points->size() >= limit) break;
      }
    }
    last_processed = i;
  }
}

// Distance order as Redis's comparators give it: -1, 0 or 1 (descending negates).
int compare_distance(const GeoPoint& a, const GeoPoint& b, bool descending) {
  const int order = a.distance > b.distance ? 1 : a.distance == b.distance ? 0 : -1;
  return descending ? -order : order;
}

// Redis's pqsort: Bentley and McIlroy's quicksort (median of three, or ninther above 40
// elements; three-way partition; insertion sort below 7 elements or when a pass swapped
// nothing) that only descends into the parts holding ranks [0, last]. Equal distances end up in
// an order no stable sort gives, so COUNT's ties come out as Redis's only by the same steps:
// the same pivots, the same swaps, in the same order.
// Sorts enough of [a, a + n) that every position up to `last_wanted` holds its element.
void partial_quicksort(GeoPoint* a, size_t n, const GeoPoint* last_wanted, bool descending) {
  auto cmp = [descending](const GeoPoint& a, const GeoPoint& b) {
    return compare_distance(a, b, descending);
  };
  auto median_of_three = [&](GeoPoint* a, GeoPoint* b, GeoPoint* c) {
    return cmp(*a, *b) < 0 ? (cmp(*b, *c) < 0 ? b : (cmp(*a, *c) < 0 ? c : a))
                           : (cmp(*b, *c) > 0 ? b : (cmp(*a, *c) < 0 ? a : c));
  };
  auto insertion_sort = [&](GeoPoint* a, size_t n) {
    for (GeoPoint* m = a + 1; m < a + n; ++m) {
      for (GeoPoint* l = m; l > a && cmp(l[-1], *l) > 0; --l) std::swap(l[-1], *l);
    }
  };
  auto swap_ranges = [](GeoPoint* a, GeoPoint* b, size_t n) {
    for (size_t i = 0; i < n; ++i) std::swap(a[i], b[i]);
  };
  // Whether a part starting at `first` holds a wanted position (the wanted ones are a prefix of
  // the whole array, which starts at or before any part).
  auto wanted = [last_wanted](const GeoPoint* first) { return first <= last_wanted; };

  for (;;) {
    if (n < 7) return insertion_sort(a, n);
    GeoPoint* pivot = a + n / 2;
    if (n > 7) {
      GeoPoint* low = a;
      GeoPoint* high = a + n - 1;
      if (n > 40) {
        const size_t d = n / 8;
        low = median_of_three(low, low + d, low + 2 * d);
        pivot = median_of_three(pivot - d, pivot, pivot + d);
        high = median_of_three(high - 2 * d, high - d, high);
      }
      pivot = median_of_three(low, pivot, high);
    }
    std::swap(*a, *pivot);
    // [a+1, pa) and (pd, a+n) hold elements equal to the pivot, [pa, pb) smaller ones, (pc, pd]
    // larger ones.
    GeoPoint* pa = a + 1;
    GeoPoint* pb = a + 1;
    GeoPoint* pc = a + n - 1;
    GeoPoint* pd = a + n - 1;
    bool swapped = false;
    for (;;) {
      int result;
      while (pb <= pc && (result = cmp(*pb, *a)) <= 0) {
        if (result == 0) {
          swapped = true;
          std::swap(*pa, *pb);
          ++pa;
        }
        ++pb;
      }
      while (pb <= pc && (result = cmp(*pc, *a)) >= 0) {
        if (result == 0) {
          swapped = true;
          std::swap(*pc, *pd);
          --pd;
        }
        --pc;
      }
      if (pb > pc) break;
      std::swap(*pb, *pc);
      swapped = true;
      ++pb;
      --pc;
    }
    if (!swapped) return insertion_sort(a, n);

    GeoPoint* const end = a + n;
    // Move the equal elements from the ends to the middle.
    size_t r = std::min(static_cast<size_t>(pa - a), static_cast<size_t>(pb - pa));
    swap_ranges(a, pb - r, r);
    r = std::min(static_cast<size_t>(pd - pc), static_cast<size_t>(end - pd - 1));
    swap_ranges(pb, end - r, r);
    // The smaller part recursively, the larger part by iteration, each only when it holds a
    // wanted rank.
    if ((r = static_cast<size_t>(pb - pa)) > 1 && wanted(a)) {
      partial_quicksort(a, r, last_wanted, descending);
    }
    if ((r = static_cast<size_t>(pd - pc)) > 1) {
      a = end - r;
      n = r;
      if (wanted(a)) continue;
    }
    return;
  }
}

// Orders the points by distance for the first `keep` of them, as Redis does: qsort (glibc's
// merge sort, stable) when all are kept, its partial quicksort otherwise.
void sort_points(std::vector<GeoPoint>& points, SortOrder order, size_t keep) {
  const bool descending = order == SortOrder::kDescending;
  if (keep >= points.size()) {
    std::stable_sort(points.begin(), points.end(),
                     [descending](const GeoPoint& a, const GeoPoint& b) {
                       return compare_distance(a, b, descending) < 0;
                     });
    return;
  }
  partial_quicksort(points.data(), points.size(), points.data() + (keep - 1), descending);
}

// Replaces `destination` with `result` (deleting it when empty) and replies the count, as the
// store forms do.
void store_points(CommandContext& ctx, std::string_view destination,
                  std::vector<ZSetValue::Element> elements, std::string_view event) {
  if (elements.empty()) {
    // Redis deletes without an expiry check: an expired destination still stored counts.
    Entry* existing = ctx.db().find_raw(destination);
    if (existing != nullptr) {
      ctx.db().remove(existing, ctx.server.settings().lazyfree_lazy_server_del);
      ctx.changed(destination, kNotifyGeneric, "del");
    }
    return ctx.reply.integer(0);
  }
  const size_t count = elements.size();
  std::sort(elements.begin(), elements.end(),
            [](const ZSetValue::Element& a, const ZSetValue::Element& b) {
              if (a.score != b.score) return a.score < b.score;
              return a.member < b.member;
            });
  Value value = Value::make_aggregate(
      ValueType::kZSet,
      ZSetValue::from_sorted(std::move(elements), ctx.server.settings().zset_limits));
  Entry* entry = ctx.lookup_write(destination);
  if (entry != nullptr) {
    entry = ctx.db().overwrite(entry, std::move(value), /*keep_ttl=*/false,
                               ctx.server.settings().lazyfree_lazy_server_del);
  } else {
    ctx.db().add(destination, std::move(value));
    ctx.created(destination);
  }
  ctx.changed(destination, kNotifyZset, event, count);
  ctx.reply.integer(static_cast<int64_t>(count));
}

void search_generic(CommandContext& ctx, size_t source_index, uint8_t flags) {
  const auto& args = ctx.args;
  std::string_view store_key;
  bool has_store = false;
  bool store_distance = false;

  bool wrong_type;
  const ZSetValue* zset =
      ctx.read_collection<ZSetValue>(args[source_index], ValueType::kZSet, &wrong_type);
  if (wrong_type) return;

  geo::Shape shape;
  size_t base_args;
  if (flags & kAroundCoordinates) {
    base_args = 6;
    shape.kind = geo::Shape::Kind::kCircle;
    if (!parse_coordinates(ctx, args[2], args[3], &shape.longitude, &shape.latitude)) return;
    if (!parse_radius(ctx, args[4], args[5], &shape)) return;
  } else if ((flags & kAroundMember) && zset == nullptr) {
    // No source: the radius is not even read, but the options are, so that the reply fits
    // the STORE option.
    base_args = 5;
  } else if (flags & kAroundMember) {
    base_args = 5;
    shape.kind = geo::Shape::Kind::kCircle;
    if (!member_position(*zset, args[2], &shape.longitude, &shape.latitude)) {
      return ctx.error(kCouldNotDecodeMember);
    }
    if (!parse_radius(ctx, args[3], args[4], &shape)) return;
  } else {
    base_args = 2;
    if (flags & kSearchStore) {
      base_args = 3;
      store_key = args[1];
      has_store = true;
    }
  }

  bool with_distance = false;
  bool with_hash = false;
  bool with_coordinates = false;
  bool from_member = false;
  bool from_coordinates = false;
  bool by_radius = false;
  bool by_box = false;
  bool any = false;
  SortOrder order = SortOrder::kNone;
  int64_t count = 0;
  const bool search = (flags & kSearch) != 0;
  const bool store_allowed = !(flags & kNoStore) && !search;
  const size_t remaining = args.size() - base_args;
  for (size_t i = 0; i < remaining; ++i) {
    const std::string_view arg = args[base_args + i];
    const std::span<const std::string_view> rest = args.subspan(base_args + i + 1);
    if (equals_ignore_case(arg, "withdist")) {
      with_distance = true;
    } else if (equals_ignore_case(arg, "withhash")) {
      with_hash = true;
    } else if (equals_ignore_case(arg, "withcoord")) {
      with_coordinates = true;
    } else if (equals_ignore_case(arg, "any")) {
      any = true;
    } else if (equals_ignore_case(arg, "asc")) {
      order = SortOrder::kAscending;
    } else if (equals_ignore_case(arg, "desc")) {
      order = SortOrder::kDescending;
    } else if (equals_ignore_case(arg, "count") && !rest.empty()) {
      if (!parse_int64(rest[0], &count)) return ctx.error(errors::kNotInteger);
      if (count <= 0) return ctx.error(kCountNotPositive);
      ++i;
    } else if (equals_ignore_case(arg, "store") && !rest.empty() && store_allowed) {
      store_key = rest[0];
      has_store = true;
      store_distance = false;
      ++i;
    } else if (equals_ignore_case(arg, "storedist") && !rest.empty() && store_allowed) {
      store_key = rest[0];
      has_store = true;
      store_distance = true;
      ++i;
    } else if (equals_ignore_case(arg, "storedist") && search && (flags & kSearchStore)) {
      store_distance = true;
    } else if (equals_ignore_case(arg, "frommember") && !rest.empty() && search &&
               !from_coordinates) {
      // Without a source the member cannot be looked up: parsing goes on, and the missing
      // key is answered at the end.
      if (zset != nullptr && !member_position(*zset, rest[0], &shape.longitude, &shape.latitude)) {
        return ctx.error(kCouldNotDecodeMember);
      }
      from_member = true;
      ++i;
    } else if (equals_ignore_case(arg, "fromlonlat") && rest.size() >= 2 && search &&
               !from_member) {
      if (!parse_coordinates(ctx, rest[0], rest[1], &shape.longitude, &shape.latitude)) return;
      from_coordinates = true;
      i += 2;
    } else if (equals_ignore_case(arg, "byradius") && rest.size() >= 2 && search && !by_box) {
      if (!parse_radius(ctx, rest[0], rest[1], &shape)) return;
      shape.kind = geo::Shape::Kind::kCircle;
      by_radius = true;
      i += 2;
    } else if (equals_ignore_case(arg, "bybox") && rest.size() >= 3 && search && !by_radius) {
      if (!parse_box(ctx, rest.first(3), &shape)) return;
      shape.kind = geo::Shape::Kind::kBox;
      by_box = true;
      i += 3;
    } else {
      return ctx.error(errors::kSyntax);
    }
  }

  if (has_store && (with_distance || with_hash || with_coordinates)) {
    return ctx.error(flags & kSearchStore
                         ? "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and "
                           "WITHCOORD options"
                         : "ERR STORE option in GEORADIUS is not compatible with WITHDIST, "
                           "WITHHASH and WITHCOORD options");
  }
  // The command name as the client spelled it, as Redis prints argv[0].
  if (search && !(from_member || from_coordinates)) {
    return ctx.error("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " +
                     std::string(args[0]));
  }
  if (search && !(by_radius || by_box)) {
    return ctx.error("ERR exactly one of BYRADIUS and BYBOX can be specified for " +
                     std::string(args[0]));
  }
  if (any && count == 0) return ctx.error(kAnyRequiresCount);

  const std::string_view event = search ? "geosearchstore" : "georadiusstore";
  if (zset == nullptr) {
    if (has_store) return store_points(ctx, store_key, {}, event);
    return ctx.reply.array_header(0);
  }

  // COUNT keeps the nearest, so it needs an order; ANY takes whatever comes first.
  if (count != 0 && order == SortOrder::kNone && !any) order = SortOrder::kAscending;

  std::vector<GeoPoint> points;
  collect_points(*zset, shape, any ? static_cast<size_t>(count) : 0, &points);
  if (points.empty() && !has_store) return ctx.reply.array_header(0);

  const size_t returned = count == 0 || points.size() < static_cast<uint64_t>(count)
                              ? points.size()
                              : static_cast<size_t>(count);
  if (order != SortOrder::kNone) sort_points(points, order, returned);

  if (!has_store) {
    const size_t options = size_t{with_distance} + size_t{with_hash} + size_t{with_coordinates};
    ctx.reply.array_header(returned);
    for (size_t i = 0; i < returned && !ctx.reply.discarding(); ++i) {
      const GeoPoint& point = points[i];
      if (options != 0) ctx.reply.array_header(options + 1);
      ctx.reply.bulk(point.member);
      if (with_distance) reply_distance(ctx, point.distance / shape.conversion);
      if (with_hash) ctx.reply.integer(static_cast<int64_t>(point.score));
      if (with_coordinates) reply_position(ctx, point.longitude, point.latitude);
    }
    return;
  }

  std::vector<ZSetValue::Element> elements(returned);
  for (size_t i = 0; i < returned; ++i) {
    elements[i].member = points[i].member;
    elements[i].score = store_distance ? points[i].distance / shape.conversion : points[i].score;
  }
  store_points(ctx, store_key, std::move(elements), event);
}

void georadius_command(CommandContext& ctx) { search_generic(ctx, 1, kAroundCoordinates); }
void georadiusbymember_command(CommandContext& ctx) { search_generic(ctx, 1, kAroundMember); }
void georadius_ro_command(CommandContext& ctx) {
  search_generic(ctx, 1, kAroundCoordinates | kNoStore);
}
void georadiusbymember_ro_command(CommandContext& ctx) {
  search_generic(ctx, 1, kAroundMember | kNoStore);
}
void geosearch_command(CommandContext& ctx) { search_generic(ctx, 1, kSearch); }
void geosearchstore_command(CommandContext& ctx) { search_generic(ctx, 2, kSearch | kSearchStore); }

// COMMAND GETKEYS for GEORADIUS/GEORADIUSBYMEMBER (Redis's georadiusGetKeys): the source, and
// the last STORE/STOREDIST destination, looked for from the fifth argument on.
std::vector<int> georadius_keys(std::span<const std::string_view> args) {
  std::vector<int> positions{1};
  int stored = -1;
  for (size_t i = 5; i < args.size(); ++i) {
    if ((equals_ignore_case(args[i], "store") || equals_ignore_case(args[i], "storedist")) &&
        i + 1 < args.size()) {
      stored = static_cast<int>(i + 1);
      ++i;
    }
  }
  if (stored != -1) positions.push_back(stored);
  return positions;
}

// --- Table ---------------------------------------------------------------------------------

constexpr std::string_view kSearchComplexity =
    "O(N+log(M)) where N is the number of elements inside the bounding box of the circular "
    "area delimited by center and radius and M is the number of items inside the index.";
constexpr std::string_view kGeoSearchComplexity =
    "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around "
    "the shape provided as the filter and M is the number of items inside the shape";

constexpr CommandSpec kGeoCommands[] = {
    {"geoadd", -5, kWrite | kDenyOom, 1, 1, 1, kAclGeo, geoadd_command, "geo", "3.2.0",
     "Add one or more geospatial items in the geospatial index represented using a sorted set",
     "O(log(N)) for each item added, where N is the number of elements in the sorted set."},
    {"geodist", -4, kReadonly, 1, 1, 1, kAclGeo, geodist_command, "geo", "3.2.0",
     "Returns the distance between two members of a geospatial index", "O(log(N))"},
    {"geohash", -2, kReadonly, 1, 1, 1, kAclGeo, geohash_command, "geo", "3.2.0",
     "Returns members of a geospatial index as standard geohash strings",
     "O(log(N)) for each member requested, where N is the number of elements in the sorted "
     "set."},
    {"geopos", -2, kReadonly, 1, 1, 1, kAclGeo, geopos_command, "geo", "3.2.0",
     "Returns longitude and latitude of members of a geospatial index",
     "O(N) where N is the number of members requested."},
    {"georadius",
     -6,
     kWrite | kDenyOom | kMovableKeys,
     1,
     1,
     1,
     kAclGeo,
     georadius_command,
     "geo",
     "3.2.0",
     "Query a sorted set representing a geospatial index to fetch members matching a given "
     "maximum distance from a point",
     kSearchComplexity,
     {},
     georadius_keys},
    {"georadius_ro", -6, kReadonly, 1, 1, 1, kAclGeo, georadius_ro_command, "geo", "3.2.10",
     "A read-only variant for GEORADIUS", kSearchComplexity},
    {"georadiusbymember",
     -5,
     kWrite | kDenyOom | kMovableKeys,
     1,
     1,
     1,
     kAclGeo,
     georadiusbymember_command,
     "geo",
     "3.2.0",
     "Query a sorted set representing a geospatial index to fetch members matching a given "
     "maximum distance from a member",
     kSearchComplexity,
     {},
     georadius_keys},
    {"georadiusbymember_ro", -5, kReadonly, 1, 1, 1, kAclGeo, georadiusbymember_ro_command, "geo",
     "3.2.10", "A read-only variant for GEORADIUSBYMEMBER", kSearchComplexity},
    {"geosearch", -7, kReadonly, 1, 1, 1, kAclGeo, geosearch_command, "geo", "6.2.0",
     "Query a sorted set representing a geospatial index to fetch members inside an area of a "
     "box or a circle.",
     kGeoSearchComplexity},
    {"geosearchstore", -8, kWrite | kDenyOom, 1, 2, 1, kAclGeo, geosearchstore_command, "geo",
     "6.2.0",
     "Query a sorted set representing a geospatial index to fetch members inside an area of a "
     "box or a circle, and store the result in another key.",
     kGeoSearchComplexity},
};

}  // namespace

void register_geo_commands(CommandTable& table) { table.add(kGeoCommands); }

}  // namespace keywarden
