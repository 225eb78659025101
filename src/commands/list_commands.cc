// List commands: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LRANGE, LINDEX, LSET,
// LINSERT, LREM, LTRIM, LPOS, LMOVE, RPOPLPUSH, LMPOP and the blocking BLPOP, BRPOP, BLMOVE,
// BRPOPLPUSH and BLMPOP, with Redis 7.0.15's replies, argument checking order and
// propagation. A list whose last element goes is deleted with it.
//
// Propagation follows Redis 7.0: plain writes propagate as received (only when they changed
// something); BLPOP/BRPOP propagate as LPOP/RPOP key; LMPOP and BLMPOP as LPOP/RPOP key <n>
// with the number actually popped; BLMOVE as LMOVE with the client's own LEFT/RIGHT words and
// BRPOPLPUSH as RPOPLPUSH, whether they were served at once or after blocking.
//
// Blocking commands that find nothing block through ctx.block(); when a push makes one of
// their keys a list, the dispatcher runs the handler again for them (the "retry"), which then
// serves the client through the same code as an immediate success, from the key that became
// ready only (ctx.keys_to_serve), as Redis 7.0 does. Blocking commands time out with a null
// array, BLMOVE and BRPOPLPUSH included (that is what 7.0.15 sends); inside MULTI they answer
// at once as on a timeout, except that BLMOVE and BRPOPLPUSH then send a null bulk.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "commands/blocking.h"
#include "commands/context.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "common/ascii.h"
#include "common/number.h"
#include "types/list_value.h"
#include "types/value.h"

namespace keywarden {
namespace {

enum class End : uint8_t { kHead, kTail };

bool is_list(const Entry* entry) { return entry->value.type() == ValueType::kList; }
ListValue& list_of(Entry* entry) { return entry->value.as<ListValue>(); }

Value new_list(CommandContext& ctx) {
  return Value::make_aggregate(
      ValueType::kList, std::make_unique<ListValue>(ctx.server.settings().list_max_listpack_size));
}

// The list at `key` for reading, or null when absent. Sets *wrong_type (and replies
// WRONGTYPE) when the key holds another type.
const ListValue* read_list(CommandContext& ctx, std::string_view key, bool* wrong_type) {
  return ctx.read_collection<ListValue>(key, ValueType::kList, wrong_type);
}

// LEFT / RIGHT, case-insensitive.
bool parse_end(std::string_view text, End* end) {
  if (equals_ignore_case(text, "left")) {
    *end = End::kHead;
    return true;
  }
  if (equals_ignore_case(text, "right")) {
    *end = End::kTail;
    return true;
  }
  return false;
}

std::string pop(ListValue& list, End end) {
  return end == End::kHead ? list.pop_front() : list.pop_back();
}

void push(ListValue& list, End end, std::string_view value) {
  if (end == End::kHead) {
    list.push_front(value);
  } else {
    list.push_back(value);
  }
}

// Replies the first (or last) element as a bulk string and removes it, without a copy.
void reply_and_pop(CommandContext& ctx, ListValue& list, End end) {
  if (end == End::kHead) {
    ctx.reply.bulk(list.front());
    list.drop_front();
  } else {
    ctx.reply.bulk(list.back());
    list.drop_back();
  }
}

// Replies the first (or last) `count` elements as an array, nearest the end first, and
// removes them: what LPOP/RPOP with a count and the LMPOP family send.
void reply_and_pop_range(CommandContext& ctx, ListValue& list, End end, size_t count) {
  ctx.reply.array_header(count);
  auto send = [&](std::string_view value) { ctx.reply.bulk(value); };
  const size_t size = list.size();
  if (end == End::kHead) {
    list.for_range(0, count - 1, false, send);
    list.erase(0, count);
  } else {
    list.for_range(size - count, size - 1, true, send);
    list.erase(size - count, count);
  }
}

// The bookkeeping after `removed` elements left the list at `key`: the change is recorded
// (`event`, `removed` changes), and an empty list is deleted (and `del` fires).
void after_removal(CommandContext& ctx, std::string_view key, Entry* entry, size_t removed,
                   std::string_view event) {
  ctx.changed(key, kNotifyList, event, removed);
  if (list_of(entry).empty()) {
    ctx.db().remove(entry);
    ctx.also_notify(kNotifyGeneric, "del", key);
  }
}

std::string_view pop_event(End end) { return end == End::kHead ? "lpop" : "rpop"; }
std::string_view push_event(End end) { return end == End::kHead ? "lpush" : "rpush"; }

// A blocking command's timeout, parsed into an absolute deadline; false after an error reply.
bool parse_timeout(CommandContext& ctx, std::string_view text, int64_t* deadline_ms) {
  std::string_view error;
  if (!parse_block_timeout(text, ctx.now_ms, deadline_ms, &error)) {
    ctx.error(error);
    return false;
  }
  return true;
}

// --- LPUSH, RPUSH, LPUSHX, RPUSHX ----------------------------------------------------------

void push_generic(CommandContext& ctx, End end, bool only_if_exists) {
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry != nullptr && !is_list(entry)) return ctx.error(errors::kWrongType);
  if (entry == nullptr) {
    if (only_if_exists) return ctx.reply.integer(0);
    entry = ctx.db().add(key, new_list(ctx));
    ctx.created(key);
  }
  ListValue& list = list_of(entry);
  for (size_t i = 2; i < ctx.args.size(); ++i) push(list, end, ctx.args[i]);
  const size_t pushed = ctx.args.size() - 2;
  ctx.changed(key, kNotifyList, push_event(end), pushed);
  ctx.reply.integer(static_cast<int64_t>(list.size()));
}

void lpush_command(CommandContext& ctx) { push_generic(ctx, End::kHead, false); }
void rpush_command(CommandContext& ctx) { push_generic(ctx, End::kTail, false); }
void lpushx_command(CommandContext& ctx) { push_generic(ctx, End::kHead, true); }
void rpushx_command(CommandContext& ctx) { push_generic(ctx, End::kTail, true); }

// --- LPOP, RPOP ----------------------------------------------------------------------------

void pop_generic(CommandContext& ctx, End end) {
  if (ctx.args.size() > 3) return ctx.error(errors::wrong_arity(ctx.command.full_name));
  const bool has_count = ctx.args.size() == 3;
  int64_t count = 0;
  if (has_count && (!parse_int64(ctx.args[2], &count) || count < 0)) {
    return ctx.error(errors::kListMustBePositive);
  }
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) return has_count ? ctx.reply.null_array() : ctx.reply.null();
  if (!is_list(entry)) return ctx.error(errors::kWrongType);
  if (has_count && count == 0) return ctx.reply.array_header(0);

  ListValue& list = list_of(entry);
  size_t removed = 1;
  if (!has_count) {
    reply_and_pop(ctx, list, end);
  } else {
    removed = std::min(static_cast<uint64_t>(count), static_cast<uint64_t>(list.size()));
    reply_and_pop_range(ctx, list, end, removed);
  }
  after_removal(ctx, key, entry, removed, pop_event(end));
}

void lpop_command(CommandContext& ctx) { pop_generic(ctx, End::kHead); }
void rpop_command(CommandContext& ctx) { pop_generic(ctx, End::kTail); }

// --- LLEN, LINDEX, LRANGE ------------------------------------------------------------------

void llen_command(CommandContext& ctx) {
  bool wrong_type;
  const ListValue* list = read_list(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  ctx.reply.integer(list == nullptr ? 0 : static_cast<int64_t>(list->size()));
}

void lindex_command(CommandContext& ctx) {
  // Redis looks the key up before reading the index.
  bool wrong_type;
  const ListValue* list = read_list(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  if (list == nullptr) return ctx.reply.null();
  int64_t index;
  if (!parse_int64(ctx.args[2], &index)) return ctx.error(errors::kNotInteger);
  const std::optional<std::string_view> value = list->at(index);
  if (!value.has_value()) return ctx.reply.null();
  ctx.reply.bulk(*value);
}

void lrange_command(CommandContext& ctx) {
  int64_t start;
  int64_t end;
  if (!parse_int64(ctx.args[2], &start) || !parse_int64(ctx.args[3], &end)) {
    return ctx.error(errors::kNotInteger);
  }
  bool wrong_type;
  const ListValue* list = read_list(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  if (list == nullptr) return ctx.reply.array_header(0);
  const int64_t size = static_cast<int64_t>(list->size());
  if (start < 0) start += size;
  if (end < 0) end += size;
  if (start < 0) start = 0;
  if (start > end || start >= size) return ctx.reply.array_header(0);
  if (end >= size) end = size - 1;
  ctx.reply.array_header(static_cast<size_t>(end - start + 1));
  list->for_range(static_cast<size_t>(start), static_cast<size_t>(end), false,
                  [&](std::string_view value) { ctx.reply.bulk(value); });
}

// --- LSET, LINSERT, LREM, LTRIM ------------------------------------------------------------

void lset_command(CommandContext& ctx) {
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) return ctx.error(errors::kNoSuchKey);
  if (!is_list(entry)) return ctx.error(errors::kWrongType);
  int64_t index;
  if (!parse_int64(ctx.args[2], &index)) return ctx.error(errors::kNotInteger);
  if (!list_of(entry).set(index, ctx.args[3])) return ctx.error(errors::kListIndexOutOfRange);
  ctx.changed(key, kNotifyList, "lset");
  ctx.reply.simple_string("OK");
}

void linsert_command(CommandContext& ctx) {
  bool after;
  if (equals_ignore_case(ctx.args[2], "after")) {
    after = true;
  } else if (equals_ignore_case(ctx.args[2], "before")) {
    after = false;
  } else {
    return ctx.error(errors::kSyntax);
  }
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) return ctx.reply.integer(0);
  if (!is_list(entry)) return ctx.error(errors::kWrongType);
  ListValue& list = list_of(entry);
  if (!list.insert(ctx.args[3], ctx.args[4], after)) return ctx.reply.integer(-1);
  ctx.changed(key, kNotifyList, "linsert");
  ctx.reply.integer(static_cast<int64_t>(list.size()));
}

void lrem_command(CommandContext& ctx) {
  int64_t count;
  if (!parse_int64(ctx.args[2], &count)) return ctx.error(errors::kNotInteger);
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) return ctx.reply.integer(0);
  if (!is_list(entry)) return ctx.error(errors::kWrongType);
  const size_t removed = list_of(entry).remove(ctx.args[3], count);
  if (removed != 0) after_removal(ctx, key, entry, removed, "lrem");
  ctx.reply.integer(static_cast<int64_t>(removed));
}

void ltrim_command(CommandContext& ctx) {
  int64_t start;
  int64_t end;
  if (!parse_int64(ctx.args[2], &start) || !parse_int64(ctx.args[3], &end)) {
    return ctx.error(errors::kNotInteger);
  }
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) return ctx.reply.simple_string("OK");
  if (!is_list(entry)) return ctx.error(errors::kWrongType);
  ListValue& list = list_of(entry);
  const int64_t size = static_cast<int64_t>(list.size());
  if (start < 0) start += size;
  if (end < 0) end += size;
  if (start < 0) start = 0;
  int64_t drop_front;
  int64_t drop_back;
  if (start > end || start >= size) {
    drop_front = size;
    drop_back = 0;
  } else {
    if (end >= size) end = size - 1;
    drop_front = start;
    drop_back = size - end - 1;
  }
  list.erase(static_cast<size_t>(size - drop_back), static_cast<size_t>(drop_back));
  list.erase(0, static_cast<size_t>(drop_front));
  // Redis signals the key even when nothing was trimmed, but counts (and so propagates) only a
  // change.
  after_removal(ctx, key, entry, static_cast<size_t>(drop_front + drop_back), "ltrim");
  ctx.reply.simple_string("OK");
}

// --- LPOS ----------------------------------------------------------------------------------

void lpos_command(CommandContext& ctx) {
  int64_t rank = 1;
  int64_t count = -1;  // -1: no COUNT option
  int64_t maxlen = 0;
  const size_t argc = ctx.args.size();
  for (size_t j = 3; j < argc; ++j) {
    const std::string_view option = ctx.args[j];
    const bool has_value = j + 1 < argc;
    if (has_value && equals_ignore_case(option, "rank")) {
      if (!parse_int64(ctx.args[++j], &rank)) return ctx.error(errors::kNotInteger);
      if (rank == 0) return ctx.error(errors::kListRankZero);
    } else if (has_value && equals_ignore_case(option, "count")) {
      if (!parse_int64(ctx.args[++j], &count) || count < 0) {
        return ctx.error(errors::kListCountNegative);
      }
    } else if (has_value && equals_ignore_case(option, "maxlen")) {
      if (!parse_int64(ctx.args[++j], &maxlen) || maxlen < 0) {
        return ctx.error(errors::kListMaxlenNegative);
      }
    } else {
      return ctx.error(errors::kSyntax);
    }
  }

  bool wrong_type;
  const ListValue* list = read_list(ctx, ctx.args[1], &wrong_type);
  if (wrong_type) return;
  if (list == nullptr) return count != -1 ? ctx.reply.array_header(0) : ctx.reply.null();

  // A negative rank searches from the tail. Redis 7.0.15 negates RANK -9223372036854775808
  // into itself: every match then qualifies and COUNT never ends the walk. Reproduced.
  const bool from_tail = rank < 0;
  const bool minimum_rank = rank == std::numeric_limits<int64_t>::min();
  const uint64_t wanted_rank = minimum_rank ? 0
                               : rank < 0   ? static_cast<uint64_t>(-rank)
                                            : static_cast<uint64_t>(rank);
  const std::string_view element = ctx.args[2];
  uint64_t matches = 0;
  uint64_t scanned = 0;
  std::vector<int64_t> found;
  list->scan(from_tail, [&](std::string_view value, size_t index) {
    if (maxlen != 0 && scanned >= static_cast<uint64_t>(maxlen)) return false;
    ++scanned;
    if (value != element) return true;
    if (++matches < wanted_rank) return true;
    found.push_back(static_cast<int64_t>(index));
    if (count == -1) return false;
    return minimum_rank || count == 0 || matches - wanted_rank + 1 < static_cast<uint64_t>(count);
  });
  if (count == -1) {
    if (found.empty()) return ctx.reply.null();
    return ctx.reply.integer(found.front());
  }
  ctx.reply.array_header(found.size());
  for (int64_t index : found) ctx.reply.integer(index);
}

// --- LMOVE, RPOPLPUSH, BLMOVE, BRPOPLPUSH --------------------------------------------------

enum class MoveForm : uint8_t { kLmove, kRpoplpush, kBlmove, kBrpoplpush };

// Moves one element from the list `source` (a list entry for args[1]) to args[2]. The
// destination's type is checked before anything is popped.
void move_element(CommandContext& ctx, Entry* source, End from, End to, MoveForm form) {
  const std::string_view source_key = ctx.args[1];
  const std::string_view destination_key = ctx.args[2];
  Entry* destination = ctx.lookup_write(destination_key);
  if (destination != nullptr && !is_list(destination)) return ctx.error(errors::kWrongType);

  // Rotating a list onto itself pops and pushes on the same value, so it never empties:
  // whether the source is left empty is judged after the push.
  std::string value = pop(list_of(source), from);
  if (destination == nullptr) {
    destination = ctx.db().add(destination_key, new_list(ctx));
    ctx.created(destination_key);
  }
  push(list_of(destination), to, value);
  // As Redis: the push is announced first, then the pop, then the source's deletion. It counts
  // as one change.
  ctx.changed(destination_key, kNotifyList, push_event(to));
  ctx.changed(source_key, kNotifyList, pop_event(from), 0);
  if (list_of(source).empty()) {
    ctx.db().remove(source_key);
    ctx.also_notify(kNotifyGeneric, "del", source_key);
  }
  switch (form) {
    case MoveForm::kLmove:
    case MoveForm::kRpoplpush:
      break;  // propagated as received
    case MoveForm::kBlmove:
      ctx.propagate({"LMOVE", source_key, destination_key, ctx.args[3], ctx.args[4]});
      break;
    case MoveForm::kBrpoplpush:
      ctx.propagate({"RPOPLPUSH", source_key, destination_key});
      break;
  }
  ctx.reply.bulk(value);
}

void move_generic(CommandContext& ctx, End from, End to, MoveForm form) {
  Entry* source = ctx.lookup_write(ctx.args[1]);
  if (source == nullptr) return ctx.reply.null();
  if (!is_list(source)) return ctx.error(errors::kWrongType);
  move_element(ctx, source, from, to, form);
}

void lmove_command(CommandContext& ctx) {
  End from;
  End to;
  if (!parse_end(ctx.args[3], &from) || !parse_end(ctx.args[4], &to)) {
    return ctx.error(errors::kSyntax);
  }
  move_generic(ctx, from, to, MoveForm::kLmove);
}

void rpoplpush_command(CommandContext& ctx) {
  move_generic(ctx, End::kTail, End::kHead, MoveForm::kRpoplpush);
}

void blocking_move(CommandContext& ctx, End from, End to, std::string_view timeout, MoveForm form) {
  int64_t deadline_ms;
  if (!parse_timeout(ctx, timeout, &deadline_ms)) return;
  const std::string_view source_key = ctx.args[1];
  Entry* source = ctx.lookup_write(source_key);
  if (source != nullptr && !is_list(source)) return ctx.error(errors::kWrongType);
  if (source != nullptr) return move_element(ctx, source, from, to, form);
  // Only the source is waited on; the destination is checked when there is something to move.
  if (!ctx.may_block()) return ctx.reply.null();
  const std::string_view keys[] = {source_key};
  ctx.block(keys, ValueType::kList, deadline_ms);
}

void blmove_command(CommandContext& ctx) {
  End from;
  End to;
  if (!parse_end(ctx.args[3], &from) || !parse_end(ctx.args[4], &to)) {
    return ctx.error(errors::kSyntax);
  }
  blocking_move(ctx, from, to, ctx.args[5], MoveForm::kBlmove);
}

void brpoplpush_command(CommandContext& ctx) {
  blocking_move(ctx, End::kTail, End::kHead, ctx.args[3], MoveForm::kBrpoplpush);
}

// --- BLPOP, BRPOP --------------------------------------------------------------------------

void blocking_pop(CommandContext& ctx, End end) {
  int64_t deadline_ms;
  if (!parse_timeout(ctx, ctx.args.back(), &deadline_ms)) return;
  const std::span<const std::string_view> keys = ctx.args.subspan(1, ctx.args.size() - 2);
  for (std::string_view key : ctx.keys_to_serve(keys)) {
    Entry* entry = ctx.lookup_write(key);
    if (entry == nullptr) continue;
    if (!is_list(entry)) return ctx.error(errors::kWrongType);
    ctx.reply.array_header(2);
    ctx.reply.bulk(key);
    reply_and_pop(ctx, list_of(entry), end);
    after_removal(ctx, key, entry, 1, pop_event(end));
    ctx.propagate({end == End::kHead ? "LPOP" : "RPOP", key});
    return;
  }
  if (!ctx.may_block()) return ctx.reply.null_array();
  ctx.block(keys, ValueType::kList, deadline_ms);
}

void blpop_command(CommandContext& ctx) { blocking_pop(ctx, End::kHead); }
void brpop_command(CommandContext& ctx) { blocking_pop(ctx, End::kTail); }

// --- LMPOP, BLMPOP -------------------------------------------------------------------------

// `numkeys_index`: where numkeys is (1 for LMPOP, 2 for BLMPOP after the timeout).
void mpop_generic(CommandContext& ctx, size_t numkeys_index, bool blocking) {
  const size_t argc = ctx.args.size();
  int64_t numkeys;
  if (!parse_int64(ctx.args[numkeys_index], &numkeys) || numkeys < 1) {
    return ctx.error(errors::kListNumkeysNotPositive);
  }
  // The keys and the direction must all be there.
  if (static_cast<uint64_t>(numkeys) >= argc - numkeys_index - 1) {
    return ctx.error(errors::kSyntax);
  }
  const size_t where_index = numkeys_index + static_cast<size_t>(numkeys) + 1;
  End end;
  if (!parse_end(ctx.args[where_index], &end)) return ctx.error(errors::kSyntax);
  int64_t count = -1;
  for (size_t j = where_index + 1; j < argc; ++j) {
    if (count == -1 && j + 1 < argc && equals_ignore_case(ctx.args[j], "count")) {
      if (!parse_int64(ctx.args[++j], &count) || count < 1) {
        return ctx.error(errors::kListCountNotPositive);
      }
    } else {
      return ctx.error(errors::kSyntax);
    }
  }
  if (count == -1) count = 1;
  int64_t deadline_ms = 0;
  if (blocking && !parse_timeout(ctx, ctx.args[1], &deadline_ms)) return;

  const std::span<const std::string_view> keys =
      ctx.args.subspan(numkeys_index + 1, static_cast<size_t>(numkeys));
  for (std::string_view key : ctx.keys_to_serve(keys)) {
    Entry* entry = ctx.lookup_write(key);
    if (entry == nullptr) continue;
    if (!is_list(entry)) return ctx.error(errors::kWrongType);
    ListValue& list = list_of(entry);
    const size_t popped =
        std::min(static_cast<uint64_t>(count), static_cast<uint64_t>(list.size()));
    ctx.reply.array_header(2);
    ctx.reply.bulk(key);
    reply_and_pop_range(ctx, list, end, popped);
    after_removal(ctx, key, entry, popped, pop_event(end));
    char digits[kMaxInt64Chars];
    const std::string_view popped_text(digits,
                                       int64_to_chars(static_cast<int64_t>(popped), digits));
    ctx.propagate({end == End::kHead ? "LPOP" : "RPOP", key, popped_text});
    return;
  }
  if (!blocking || !ctx.may_block()) return ctx.reply.null_array();
  ctx.block(keys, ValueType::kList, deadline_ms);
}

void lmpop_command(CommandContext& ctx) { mpop_generic(ctx, 1, false); }
void blmpop_command(CommandContext& ctx) { mpop_generic(ctx, 2, true); }

// --- Table ---------------------------------------------------------------------------------

constexpr std::string_view kPushComplexity =
    "O(1) for each element added, so O(N) to add N elements when the command is called with "
    "multiple arguments.";

constexpr CommandSpec kListCommands[] = {
    {"lpush", -3, kWrite | kDenyOom | kFast, 1, 1, 1, kAclList, lpush_command, "list", "1.0.0",
     "Prepend one or multiple elements to a list", kPushComplexity},
    {"rpush", -3, kWrite | kDenyOom | kFast, 1, 1, 1, kAclList, rpush_command, "list", "1.0.0",
     "Append one or multiple elements to a list", kPushComplexity},
    {"lpushx", -3, kWrite | kDenyOom | kFast, 1, 1, 1, kAclList, lpushx_command, "list", "2.2.0",
     "Prepend an element to a list, only if the list exists", kPushComplexity},
    {"rpushx", -3, kWrite | kDenyOom | kFast, 1, 1, 1, kAclList, rpushx_command, "list", "2.2.0",
     "Append an element to a list, only if the list exists", kPushComplexity},
    {"lpop", -2, kWrite | kFast, 1, 1, 1, kAclList, lpop_command, "list", "1.0.0",
     "Remove and get the first elements in a list",
     "O(N) where N is the number of elements returned"},
    {"rpop", -2, kWrite | kFast, 1, 1, 1, kAclList, rpop_command, "list", "1.0.0",
     "Remove and get the last elements in a list",
     "O(N) where N is the number of elements returned"},
    {"llen", 2, kReadonly | kFast, 1, 1, 1, kAclList, llen_command, "list", "1.0.0",
     "Get the length of a list", "O(1)"},
    {"lrange", 4, kReadonly, 1, 1, 1, kAclList, lrange_command, "list", "1.0.0",
     "Get a range of elements from a list",
     "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest "
     "end (HEAD or TAIL) for large lists; and N is the number of elements in the specified "
     "range."},
    {"lindex", 3, kReadonly, 1, 1, 1, kAclList, lindex_command, "list", "1.0.0",
     "Get an element from a list by its index",
     "O(N) where N is the number of elements to traverse to get to the element at index. This "
     "makes asking for the first or the last element of the list O(1)."},
    {"lset", 4, kWrite | kDenyOom, 1, 1, 1, kAclList, lset_command, "list", "1.0.0",
     "Set the value of an element in a list by its index",
     "O(N) where N is the length of the list. Setting either the first or the last element of "
     "the list is O(1)."},
    {"linsert", 5, kWrite | kDenyOom, 1, 1, 1, kAclList, linsert_command, "list", "2.2.0",
     "Insert an element before or after another element in a list",
     "O(N) where N is the number of elements to traverse before seeing the value pivot. This "
     "means that inserting somewhere on the left end on the list (head) can be considered O(1) "
     "and inserting somewhere on the right end (tail) is O(N)."},
    {"lrem", 4, kWrite, 1, 1, 1, kAclList, lrem_command, "list", "1.0.0",
     "Remove elements from a list",
     "O(N+M) where N is the length of the list and M is the number of elements removed."},
    {"ltrim", 4, kWrite, 1, 1, 1, kAclList, ltrim_command, "list", "1.0.0",
     "Trim a list to the specified range",
     "O(N) where N is the number of elements to be removed by the operation."},
    {"lpos", -3, kReadonly, 1, 1, 1, kAclList, lpos_command, "list", "6.0.6",
     "Return the index of matching elements on a list",
     "O(N) where N is the number of elements in the list, for the average case. When searching "
     "for elements near the head or the tail of the list, or when the MAXLEN option is "
     "provided, the command may run in constant time."},
    {"lmove", 5, kWrite | kDenyOom, 1, 2, 1, kAclList, lmove_command, "list", "6.2.0",
     "Pop an element from a list, push it to another list and return it", "O(1)"},
    {"rpoplpush", 3, kWrite | kDenyOom, 1, 2, 1, kAclList, rpoplpush_command, "list", "1.2.0",
     "Remove the last element in a list, prepend it to another list and return it", "O(1)"},
    {"lmpop", -4, kWrite | kMovableKeys, 0, 0, 0, kAclList, lmpop_command, "list", "7.0.0",
     "Pop elements from a list",
     "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
     {}, numkeys_keys<1>},
    {"blpop", -3, kWrite | kNoScript | kBlocking, 1, -2, 1, kAclList, blpop_command, "list",
     "2.0.0", "Remove and get the first element in a list, or block until one is available",
     "O(N) where N is the number of provided keys."},
    {"brpop", -3, kWrite | kNoScript | kBlocking, 1, -2, 1, kAclList, brpop_command, "list",
     "2.0.0", "Remove and get the last element in a list, or block until one is available",
     "O(N) where N is the number of provided keys."},
    {"blmove", 6, kWrite | kDenyOom | kNoScript | kBlocking, 1, 2, 1, kAclList, blmove_command,
     "list", "6.2.0",
     "Pop an element from a list, push it to another list and return it; or block until one "
     "is available",
     "O(1)"},
    {"brpoplpush", 4, kWrite | kDenyOom | kNoScript | kBlocking, 1, 2, 1, kAclList,
     brpoplpush_command, "list", "2.2.0",
     "Pop an element from a list, push it to another list and return it; or block until one "
     "is available",
     "O(1)"},
    {"blmpop", -5, kWrite | kBlocking | kMovableKeys, 0, 0, 0, kAclList, blmpop_command, "list",
     "7.0.0", "Pop elements from a list, or block until one is available",
     "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
     {}, numkeys_keys<2>},
};

}  // namespace

void register_list_commands(CommandTable& table) { table.add(kListCommands); }

}  // namespace keywarden
