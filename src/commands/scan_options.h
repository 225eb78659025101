// The SCAN family's shared parts (SCAN, HSCAN, SSCAN, ZSCAN): the options COUNT n, MATCH
// pattern and, for SCAN only, TYPE name, read in any order with Redis 7.0's errors; and for the
// collection scans, the argument checks in Redis's order and the walk over a table's buckets.
// Shared here because no family file includes another.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include "commands/context.h"
#include "commands/errors.h"
#include "common/ascii.h"
#include "common/number.h"

namespace keywarden {

struct ScanOptions {
  int64_t count = 10;
  std::string_view pattern;
  bool use_pattern = false;  // false for no MATCH and for MATCH *, which matches everything
  std::string_view type_name;
  bool use_type = false;
};

// Reads the options from ctx.args[first] on. On a bad option replies the error and returns
// false.
inline bool parse_scan_options(CommandContext& ctx, size_t first, bool allow_type,
                               ScanOptions* options) {
  for (size_t i = first; i < ctx.args.size(); i += 2) {
    const std::string_view option = ctx.args[i];
    const bool has_value = i + 1 < ctx.args.size();
    if (equals_ignore_case(option, "COUNT") && has_value) {
      if (!parse_int64(ctx.args[i + 1], &options->count)) {
        ctx.error(errors::kNotInteger);
        return false;
      }
      if (options->count < 1) {
        ctx.error(errors::kSyntax);
        return false;
      }
    } else if (equals_ignore_case(option, "MATCH") && has_value) {
      options->pattern = ctx.args[i + 1];
      options->use_pattern = options->pattern != "*";
    } else if (allow_type && equals_ignore_case(option, "TYPE") && has_value) {
      options->type_name = ctx.args[i + 1];
      options->use_type = true;
    } else {
      ctx.error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

// The start of HSCAN/SSCAN/ZSCAN key cursor [options]: the collection of class T (ValueType
// `type`) at ctx.args[1], with the cursor and options read. Null when the reply is already
// made: an error, or the empty answer for a missing key (which Redis gives before it reads the
// options).
template <typename T>
const T* begin_collection_scan(CommandContext& ctx, ValueType type, uint64_t* cursor,
                               ScanOptions* options) {
  if (!parse_scan_cursor(ctx.args[2], cursor)) {
    ctx.error(errors::kCursor);
    return nullptr;
  }
  bool wrong_type;
  const T* collection = ctx.read_collection<T>(ctx.args[1], type, &wrong_type);
  if (wrong_type) return nullptr;
  if (collection == nullptr) {
    ctx.reply.array_header(2);
    ctx.reply.bulk("0");
    ctx.reply.array_header(0);
    return nullptr;
  }
  if (!parse_scan_options(ctx, 3, /*allow_type=*/false, options)) return nullptr;
  return collection;
}

// One step of a collection scan, as Redis walks it: `step(cursor)` visits one bucket of the
// table (a flat encoding visits everything and returns 0) and returns the next cursor; buckets
// are walked until `visited()` elements reach COUNT or COUNT * 10 buckets were visited. MATCH
// filters what was collected afterwards, so it never lengthens the walk. Returns the cursor.
template <typename Step, typename Visited>
uint64_t walk_collection_scan(uint64_t cursor, int64_t count, Step&& step, Visited&& visited) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t steps_left = count > kMax / 10 ? kMax : count * 10;
  do {
    cursor = step(cursor);
  } while (cursor != 0 && steps_left-- > 0 && visited() < static_cast<uint64_t>(count));
  return cursor;
}

// The cursor part of a SCAN-family reply: the two-element array's header and the cursor.
inline void reply_scan_cursor(CommandContext& ctx, uint64_t cursor) {
  char digits[kMaxUint64Chars];
  ctx.reply.array_header(2);
  ctx.reply.bulk(std::string_view(digits, uint64_to_chars(cursor, digits)));
}

}  // namespace keywarden
