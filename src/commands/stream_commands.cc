// Stream commands: XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM, XREAD, XSETID, XINFO, XGROUP,
// XREADGROUP, XACK, XPENDING, XCLAIM and XAUTOCLAIM, with Redis 7.0.15's replies, errors and
// argument checking order (t_stream.c).
//
// Propagation follows Redis 7.0: XADD propagates the ID it generated; XADD and XTRIM with an
// approximate trim ("~") propagate the exact threshold that resulted ("=" and the length, or
// the first ID left), so that a replica or the AOF trims the same entries whatever its node
// layout. XREADGROUP, XCLAIM and XAUTOCLAIM propagate one XCLAIM ... FORCE JUSTID per entry
// whose pending state they changed, and XGROUP SETID when only the group's last ID moved.
//
// XREAD/XREADGROUP with BLOCK park the client through ctx.block() on the keys still to serve;
// "$" is resolved to a concrete ID before parking so that running the command again after an
// XADD serves only what was added since. Inside MULTI or a script BLOCK answers at once.
#include <algorithm>
#include <climits>
#include <cstdint>
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
#include "types/stream_value.h"
#include "types/value.h"

namespace keywarden {
namespace {

constexpr std::string_view kInvalidId =
    "ERR Invalid stream ID specified as stream command argument";

StreamValue& stream_of(Entry* entry) { return entry->value.as<StreamValue>(); }

Value new_stream(CommandContext& ctx) {
  const CommandSettings& settings = ctx.server.settings();
  return Value::make_aggregate(ValueType::kStream,
                               std::make_unique<StreamValue>(settings.stream_node_max_bytes,
                                                             settings.stream_node_max_entries));
}

// Redis's streamGenericParseIDOrReply: "-", "+", "<ms>", "<ms>-<seq>", and "<ms>-*" when
// `seq_given` is passed. Strict refuses "-" and "+".
bool parse_id(std::string_view text, StreamId* id, uint64_t missing_seq, bool strict,
              bool* seq_given = nullptr) {
  if (text.size() > 127) return false;
  if (strict && text.size() == 1 && (text[0] == '-' || text[0] == '+')) return false;
  if (seq_given != nullptr) *seq_given = true;
  if (text == "-") {
    *id = {0, 0};
    return true;
  }
  if (text == "+") {
    *id = StreamId::max();
    return true;
  }
  // C string semantics: the text ends at an embedded NUL.
  const size_t nul = text.find('\0');
  if (nul != std::string_view::npos) text = text.substr(0, nul);
  const size_t dash = text.find('-');
  uint64_t ms;
  uint64_t seq;
  if (!parse_stream_number(text.substr(0, dash), &ms)) return false;
  if (dash != std::string_view::npos) {
    const std::string_view rest = text.substr(dash + 1);
    if (seq_given != nullptr && rest == "*") {
      seq = 0;
      *seq_given = false;
    } else if (!parse_stream_number(rest, &seq)) {
      return false;
    }
  } else {
    seq = missing_seq;
  }
  *id = {ms, seq};
  return true;
}

bool parse_id_or_reply(CommandContext& ctx, std::string_view text, StreamId* id,
                       uint64_t missing_seq, bool strict) {
  if (parse_id(text, id, missing_seq, strict)) return true;
  ctx.error(kInvalidId);
  return false;
}

// streamParseIntervalIDOrReply: an optional "(" for an exclusive bound.
bool parse_interval_id(CommandContext& ctx, std::string_view text, StreamId* id, bool* exclude,
                       uint64_t missing_seq) {
  *exclude = text.size() > 1 && text[0] == '(';
  if (*exclude) return parse_id_or_reply(ctx, text.substr(1), id, missing_seq, true);
  return parse_id_or_reply(ctx, text, id, missing_seq, false);
}

bool parse_ll(CommandContext& ctx, std::string_view text, int64_t* out,
              std::string_view error = errors::kNotInteger) {
  if (parse_int64(text, out)) return true;
  ctx.error(error);
  return false;
}

void reply_id(CommandContext& ctx, StreamId id) { ctx.reply.bulk(id.to_string()); }

void reply_entry(CommandContext& ctx, const StreamEntry& entry) {
  ctx.reply.array_header(2);
  reply_id(ctx, entry.id);
  ctx.reply.array_header(entry.fields.size() * 2);
  for (const auto& [field, value] : entry.fields) {
    ctx.reply.bulk(field);
    ctx.reply.bulk(value);
  }
}

// The one entry `id` as [id, [fields]]; false (nothing sent) when it is gone.
bool reply_single_entry(CommandContext& ctx, const StreamValue& stream, StreamId id) {
  bool sent = false;
  stream.for_range(id, id, false, [&](const StreamEntry& entry) {
    reply_entry(ctx, entry);
    sent = true;
    return false;
  });
  return sent;
}

std::string nogroup_key_or_group(std::string_view key, std::string_view group) {
  std::string text = "NOGROUP No such key '";
  text.append(key);
  text += "' or consumer group '";
  text.append(group);
  text += "'";
  return text;
}

std::string nogroup_for_key(std::string_view group, std::string_view key) {
  std::string text = "NOGROUP No such consumer group '";
  text.append(group);
  text += "' for key name '";
  text.append(key);
  text += "'";
  return text;
}

// A consumer of `group`, created (with its event and change) when absent.
StreamConsumer& lookup_or_create_consumer(CommandContext& ctx, std::string_view key,
                                          StreamGroup& group, std::string_view name,
                                          bool* created = nullptr) {
  auto it = group.consumers.find(name);
  if (created != nullptr) *created = it == group.consumers.end();
  if (it != group.consumers.end()) return it->second;
  StreamConsumer& consumer = group.consumers[std::string(name)];
  consumer.seen_time_ms = ctx.now_ms;
  ctx.changed(key, kNotifyStream, "xgroup-createconsumer");
  return consumer;
}

// XCLAIM <key> <group> <consumer> 0 <id> TIME <ms> RETRYCOUNT <count> FORCE JUSTID LASTID
// <group last id>: what Redis propagates for every pending entry a command changes.
void propagate_xclaim(CommandContext& ctx, std::string_view key, std::string_view group_name,
                      const StreamGroup& group, StreamId id, const StreamPending* pending) {
  const std::string id_text = id.to_string();
  const std::string last = group.last_id.to_string();
  if (pending == nullptr) {
    // The entry is gone: Redis propagates an XCLAIM that the replica drops the same way.
    ctx.propagate({"XCLAIM", key, group_name, "", "0", id_text, "TIME", "0", "RETRYCOUNT", "0",
                   "FORCE", "JUSTID", "LASTID", last});
    return;
  }
  const std::string time = format_int64(pending->delivery_time_ms);
  const std::string count = format_int64(static_cast<int64_t>(pending->delivery_count));
  ctx.propagate({"XCLAIM", key, group_name, pending->consumer, "0", id_text, "TIME", time,
                 "RETRYCOUNT", count, "FORCE", "JUSTID", "LASTID", last});
}

void propagate_setid(CommandContext& ctx, std::string_view key, std::string_view group_name,
                     const StreamGroup& group) {
  const std::string last = group.last_id.to_string();
  const std::string read = format_int64(group.entries_read);
  ctx.propagate({"XGROUP", "SETID", key, group_name, last, "ENTRIESREAD", read});
}

// A command that recorded several effects sends them as one MULTI/EXEC unit (Redis 7.0's
// execution unit), unless a transaction or script around it already does.
void wrap_effects(CommandContext& ctx) {
  if (!ctx.session.transaction.in_multi()) ctx.server.propagator().wrap_pending_in_transaction();
}

// --- XADD, XTRIM ---------------------------------------------------------------------------

struct AddTrimArgs {
  StreamTrim trim;
  size_t trim_arg = 0;  // the threshold's position
  bool no_mkstream = false;
  bool id_given = false;
  bool seq_given = true;
  StreamId id;
};

// streamParseAddOrTrimArgsOrReply: returns the position of XADD's ID (or the end for XTRIM),
// or 0 after an error reply.
size_t parse_add_trim(CommandContext& ctx, AddTrimArgs* args, bool xadd) {
  const size_t argc = ctx.args.size();
  bool limit_given = false;
  size_t i = 2;
  for (; i < argc; ++i) {
    const size_t more = argc - 1 - i;
    const std::string_view opt = ctx.args[i];
    if (xadd && opt == "*") {
      break;
    } else if (more > 0 &&
               (equals_ignore_case(opt, "maxlen") || equals_ignore_case(opt, "minid"))) {
      const bool maxlen = equals_ignore_case(opt, "maxlen");
      if (args->trim.strategy != StreamTrim::Strategy::kNone) {
        ctx.error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
        return 0;
      }
      args->trim.approx = false;
      const std::string_view next = ctx.args[i + 1];
      if (more >= 2 && next == "~") {
        args->trim.approx = true;
        ++i;
      } else if (more >= 2 && next == "=") {
        ++i;
      }
      if (maxlen) {
        if (!parse_ll(ctx, ctx.args[i + 1], &args->trim.max_length)) return 0;
        if (args->trim.max_length < 0) {
          ctx.error("ERR The MAXLEN argument must be >= 0.");
          return 0;
        }
        args->trim.strategy = StreamTrim::Strategy::kMaxLen;
      } else {
        if (!parse_id_or_reply(ctx, ctx.args[i + 1], &args->trim.min_id, 0, true)) return 0;
        args->trim.strategy = StreamTrim::Strategy::kMinId;
      }
      ++i;
      args->trim_arg = i;
    } else if (more > 0 && equals_ignore_case(opt, "limit")) {
      if (!parse_ll(ctx, ctx.args[i + 1], &args->trim.limit)) return 0;
      if (args->trim.limit < 0) {
        ctx.error("ERR The LIMIT argument must be >= 0.");
        return 0;
      }
      limit_given = true;
      ++i;
    } else if (xadd && equals_ignore_case(opt, "nomkstream")) {
      args->no_mkstream = true;
    } else if (xadd) {
      if (!parse_id(opt, &args->id, 0, true, &args->seq_given)) {
        ctx.error(kInvalidId);
        return 0;
      }
      args->id_given = true;
      break;
    } else {
      ctx.error(errors::kSyntax);
      return 0;
    }
  }
  if (args->trim.limit != 0 && args->trim.strategy == StreamTrim::Strategy::kNone) {
    ctx.error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
    return 0;
  }
  if (!xadd && args->trim.strategy == StreamTrim::Strategy::kNone) {
    ctx.error("ERR syntax error, XTRIM must be called with a trimming strategy");
    return 0;
  }
  if (ctx.session.must_obey) {
    args->trim.limit = 0;
  } else if (limit_given) {
    if (!args->trim.approx) {
      ctx.error("ERR syntax error, LIMIT cannot be used without the special ~ option");
      return 0;
    }
  } else if (args->trim.approx) {
    int64_t limit = 100 * ctx.server.settings().stream_node_max_entries;
    if (limit <= 0 || limit > 10000) limit = 10000;
    args->trim.limit = limit;
  } else {
    args->trim.limit = 0;
  }
  return i;
}

// The arguments as they are to be propagated after an approximate trim: "=" and the exact
// threshold the trim reached.
void rewrite_trim(std::vector<std::string>& out, const StreamValue& stream,
                  const AddTrimArgs& args) {
  out[args.trim_arg - 1] = "=";
  if (args.trim.strategy == StreamTrim::Strategy::kMaxLen) {
    out[args.trim_arg] = format_int64(static_cast<int64_t>(stream.length()));
  } else {
    StreamId first;
    if (!stream.edge_id(true, &first)) first = {0, 0};
    out[args.trim_arg] = first.to_string();
  }
}

void propagate_strings(CommandContext& ctx, const std::vector<std::string>& words) {
  std::vector<std::string_view> views(words.begin(), words.end());
  ctx.propagate(std::span<const std::string_view>(views));
}

void xadd_command(CommandContext& ctx) {
  AddTrimArgs args;
  const size_t id_pos = parse_add_trim(ctx, &args, true);
  if (id_pos == 0) return;
  const size_t field_pos = id_pos + 1;
  const size_t argc = ctx.args.size();
  if (argc < field_pos + 2 || (argc - field_pos) % 2 == 1) {
    return ctx.error(errors::wrong_arity(ctx.command.full_name));
  }
  if (args.id_given && args.seq_given && args.id.is_zero()) {
    return ctx.error("ERR The ID specified in XADD must be greater than 0-0");
  }
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry != nullptr && entry->value.type() != ValueType::kStream) {
    return ctx.error(errors::kWrongType);
  }
  bool created = false;
  if (entry == nullptr) {
    if (args.no_mkstream) return ctx.reply.null();
    entry = ctx.db().add(key, new_stream(ctx));
    created = true;
  }
  StreamValue& stream = stream_of(entry);
  const StreamId last = stream.last_id();
  if (last == StreamId::max()) {
    return ctx.error("ERR The stream has exhausted the last possible ID, unable to add more items");
  }
  StreamId id;
  bool ok = true;
  if (!args.id_given) {
    const uint64_t now = static_cast<uint64_t>(ctx.now_ms);
    // As streamNextID: the clock, or one past the last ID (carrying into ms at the sequence's
    // end).
    if (now > last.ms) {
      id = {now, 0};
    } else {
      id = last;
      ok = id.increment();
    }
  } else if (!args.seq_given) {
    if (args.id.ms == last.ms) {
      if (last.seq == UINT64_MAX) {
        ok = false;
      } else {
        id = {last.ms, last.seq + 1};
      }
    } else if (args.id.ms > last.ms) {
      id = {args.id.ms, 0};
    } else {
      ok = false;
    }
  } else {
    id = args.id;
    ok = id > last;
  }
  if (!ok) {
    if (created) ctx.db().remove(key);
    return ctx.error(
        "ERR The ID specified in XADD is equal or smaller than the target stream top item");
  }
  if (created) ctx.created(key);
  // The node limits in force now, as Redis reads them at every append.
  stream.set_node_limits(ctx.server.settings().stream_node_max_bytes,
                         ctx.server.settings().stream_node_max_entries);
  stream.append(id, ctx.args.subspan(field_pos));
  reply_id(ctx, id);
  ctx.changed(key, kNotifyStream, "xadd");
  if (args.trim.strategy != StreamTrim::Strategy::kNone && stream.trim(args.trim) > 0) {
    ctx.also_notify(kNotifyStream, "xtrim", key);
  }
  // The effect differs from the arguments only by a generated ID or an approximate trim;
  // nothing is built while no AOF or replica listens.
  const bool rewritten = !args.id_given || !args.seq_given || args.trim.approx;
  if (rewritten && ctx.server.propagator().active()) {
    std::vector<std::string> effect(ctx.args.begin(), ctx.args.end());
    if (args.trim.approx) rewrite_trim(effect, stream, args);
    if (!args.id_given || !args.seq_given) effect[id_pos] = id.to_string();
    propagate_strings(ctx, effect);
  }
}

void xtrim_command(CommandContext& ctx) {
  AddTrimArgs args;
  if (parse_add_trim(ctx, &args, false) == 0) return;
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) return ctx.reply.integer(0);
  if (entry->value.type() != ValueType::kStream) return ctx.error(errors::kWrongType);
  StreamValue& stream = stream_of(entry);
  const int64_t deleted = stream.trim(args.trim);
  if (deleted > 0) {
    ctx.changed(key, kNotifyStream, "xtrim", static_cast<uint64_t>(deleted));
    std::vector<std::string> effect(ctx.args.begin(), ctx.args.end());
    if (args.trim.approx) rewrite_trim(effect, stream, args);
    propagate_strings(ctx, effect);
  }
  ctx.reply.integer(deleted);
}

// --- XRANGE, XREVRANGE, XLEN, XDEL ---------------------------------------------------------

void range_generic(CommandContext& ctx, bool reverse) {
  const std::string_view start_arg = reverse ? ctx.args[3] : ctx.args[2];
  const std::string_view end_arg = reverse ? ctx.args[2] : ctx.args[3];
  StreamId start;
  StreamId end;
  bool start_ex;
  bool end_ex;
  if (!parse_interval_id(ctx, start_arg, &start, &start_ex, 0)) return;
  if (start_ex && !start.increment()) return ctx.error("ERR invalid start ID for the interval");
  if (!parse_interval_id(ctx, end_arg, &end, &end_ex, UINT64_MAX)) return;
  if (end_ex && !end.decrement()) return ctx.error("ERR invalid end ID for the interval");
  int64_t count = -1;
  for (size_t j = 4; j < ctx.args.size(); ++j) {
    if (equals_ignore_case(ctx.args[j], "count") && j + 1 < ctx.args.size()) {
      if (!parse_ll(ctx, ctx.args[++j], &count)) return;
      if (count < 0) count = 0;
    } else {
      return ctx.error(errors::kSyntax);
    }
  }
  bool wrong_type;
  const StreamValue* stream =
      ctx.read_collection<StreamValue>(ctx.args[1], ValueType::kStream, &wrong_type);
  if (wrong_type) return;
  if (stream == nullptr) return ctx.reply.array_header(0);
  if (count == 0) return ctx.reply.null_array();
  const DeferredLength length = ctx.reply.begin_deferred();
  size_t sent = 0;
  stream->for_range(start, end, reverse, [&](const StreamEntry& entry) {
    reply_entry(ctx, entry);
    ++sent;
    return count < 0 || sent < static_cast<uint64_t>(count);
  });
  ctx.reply.end_deferred_array(length, sent);
}

void xrange_command(CommandContext& ctx) { range_generic(ctx, false); }
void xrevrange_command(CommandContext& ctx) { range_generic(ctx, true); }

void xlen_command(CommandContext& ctx) {
  bool wrong_type;
  const StreamValue* stream =
      ctx.read_collection<StreamValue>(ctx.args[1], ValueType::kStream, &wrong_type);
  if (wrong_type) return;
  ctx.reply.integer(stream == nullptr ? 0 : static_cast<int64_t>(stream->length()));
}

void xdel_command(CommandContext& ctx) {
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) return ctx.reply.integer(0);
  if (entry->value.type() != ValueType::kStream) return ctx.error(errors::kWrongType);
  std::vector<StreamId> ids(ctx.args.size() - 2);
  for (size_t j = 2; j < ctx.args.size(); ++j) {
    if (!parse_id_or_reply(ctx, ctx.args[j], &ids[j - 2], 0, true)) return;
  }
  StreamValue& stream = stream_of(entry);
  int64_t deleted = 0;
  for (StreamId id : ids) deleted += stream.remove(id) ? 1 : 0;
  if (deleted > 0) ctx.changed(key, kNotifyStream, "xdel", static_cast<uint64_t>(deleted));
  ctx.reply.integer(deleted);
}

// --- XSETID --------------------------------------------------------------------------------

void xsetid_command(CommandContext& ctx) {
  StreamId id;
  StreamId max_deleted;
  int64_t entries_added = -1;
  if (!parse_id_or_reply(ctx, ctx.args[2], &id, 0, true)) return;
  for (size_t i = 3; i < ctx.args.size();) {
    const bool more = i + 1 < ctx.args.size();
    if (more && equals_ignore_case(ctx.args[i], "entriesadded")) {
      if (!parse_ll(ctx, ctx.args[i + 1], &entries_added)) return;
      if (entries_added < 0) return ctx.error("ERR entries_added must be positive");
      i += 2;
    } else if (more && equals_ignore_case(ctx.args[i], "maxdeletedid")) {
      if (!parse_id_or_reply(ctx, ctx.args[i + 1], &max_deleted, 0, true)) return;
      if (id < max_deleted) {
        return ctx.error(
            "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
      }
      i += 2;
    } else {
      return ctx.error(errors::kSyntax);
    }
  }
  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) return ctx.error(errors::kNoSuchKey);
  if (entry->value.type() != ValueType::kStream) return ctx.error(errors::kWrongType);
  StreamValue& stream = stream_of(entry);
  if (stream.length() > 0) {
    StreamId top;
    stream.edge_id(false, &top);
    if (id < top) {
      return ctx.error("ERR The ID specified in XSETID is smaller than the target stream top item");
    }
    if (entries_added != -1 && stream.length() > static_cast<uint64_t>(entries_added)) {
      return ctx.error(
          "ERR The entries_added specified in XSETID is smaller than the target stream length");
    }
  }
  stream.set_last_id(id);
  if (entries_added != -1) stream.set_entries_added(static_cast<uint64_t>(entries_added));
  if (!max_deleted.is_zero()) stream.set_max_deleted_id(max_deleted);
  ctx.changed(key, kNotifyStream, "xsetid");
  ctx.reply.simple_string("OK");
}

// --- XREAD, XREADGROUP ---------------------------------------------------------------------

// Serves `group`'s new entries after `start` to `consumer` (streamReplyWithRange with a
// group): advances the group, records pending entries and propagates them.
size_t reply_group_range(CommandContext& ctx, std::string_view key, std::string_view group_name,
                         StreamValue& stream, StreamGroup& group, std::string_view consumer_name,
                         StreamConsumer& consumer, StreamId start, int64_t count, bool noack) {
  // The visitor walks the stream's nodes; the pending maps it changes are apart from them.
  size_t served = 0;
  const DeferredLength length = ctx.reply.begin_deferred();
  bool propagate_last_id = false;
  stream.for_range(start, StreamId::max(), false, [&](const StreamEntry& entry) {
    if (entry.id > group.last_id) {
      if (group.entries_read != kInvalidEntriesRead && !stream.range_has_tombstones(entry.id)) {
        group.entries_read++;
      } else if (stream.entries_added() != 0) {
        group.entries_read = stream.estimate_distance(entry.id);
      }
      group.last_id = entry.id;
      if (noack) propagate_last_id = true;
    }
    reply_entry(ctx, entry);
    ++served;
    if (!noack) {
      const StreamId id = entry.id;
      auto [it, inserted] = group.pending.try_emplace(id);
      StreamPending& pending = it->second;
      if (!inserted) {
        auto owner = group.consumers.find(pending.consumer);
        if (owner != group.consumers.end()) owner->second.pending.erase(id);
      }
      pending.consumer.assign(consumer_name);
      pending.delivery_time_ms = ctx.now_ms;
      pending.delivery_count = 1;
      consumer.pending.insert(id);
      propagate_xclaim(ctx, key, group_name, group, id, &pending);
    }
    return count == 0 || served < static_cast<uint64_t>(count);
  });
  ctx.reply.end_deferred_array(length, served);
  if (propagate_last_id) propagate_setid(ctx, key, group_name, group);
  return served;
}

// A consumer's own history from `start` (streamReplyWithRangeFromConsumerPEL).
void reply_consumer_history(CommandContext& ctx, const StreamValue& stream, StreamGroup& group,
                            StreamConsumer& consumer, StreamId start, int64_t count) {
  const DeferredLength length = ctx.reply.begin_deferred();
  size_t sent = 0;
  for (auto it = consumer.pending.lower_bound(start);
       it != consumer.pending.end() && (count == 0 || sent < static_cast<uint64_t>(count)); ++it) {
    if (!reply_single_entry(ctx, stream, *it)) {
      ctx.reply.array_header(2);
      reply_id(ctx, *it);
      ctx.reply.null_array();
    } else {
      auto pending = group.pending.find(*it);
      if (pending != group.pending.end()) {
        pending->second.delivery_time_ms = ctx.now_ms;
        pending->second.delivery_count++;
      }
    }
    ++sent;
  }
  ctx.reply.end_deferred_array(length, sent);
}

void xread_generic(CommandContext& ctx, bool xreadgroup) {
  const size_t argc = ctx.args.size();
  // XREADGROUP propagates the XCLAIMs and SETIDs it records, never itself.
  if (xreadgroup) ctx.propagate_nothing();
  int64_t timeout = -1;
  int64_t count = 0;
  size_t streams_arg = 0;
  size_t streams_count = 0;
  bool noack = false;
  std::string_view group_name;
  std::string_view consumer_name;
  bool has_group = false;
  for (size_t i = 1; i < argc; ++i) {
    const size_t more = argc - i - 1;
    const std::string_view o = ctx.args[i];
    if (equals_ignore_case(o, "block") && more > 0) {
      if (ctx.session.script_client) {
        std::string text = "ERR ";
        text.append(ctx.args[0]);
        text += " command is not allowed with BLOCK option from scripts";
        return ctx.error(text);
      }
      ++i;
      if (!parse_ll(ctx, ctx.args[i], &timeout, "ERR timeout is not an integer or out of range")) {
        return;
      }
      if (timeout < 0) return ctx.error("ERR timeout is negative");
      if (timeout > 0) {
        if (timeout > LLONG_MAX - ctx.now_ms) return ctx.error("ERR timeout is out of range");
      }
    } else if (equals_ignore_case(o, "count") && more > 0) {
      ++i;
      if (!parse_ll(ctx, ctx.args[i], &count)) return;
      if (count < 0) count = 0;
    } else if (equals_ignore_case(o, "streams") && more > 0) {
      streams_arg = i + 1;
      streams_count = argc - streams_arg;
      if (streams_count % 2 != 0) {
        // 7.0.15 words it so for XREADGROUP too.
        return ctx.error(
            "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
            "specified.");
      }
      streams_count /= 2;
      break;
    } else if (equals_ignore_case(o, "group") && more >= 2) {
      if (!xreadgroup) {
        return ctx.error(
            "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
      }
      group_name = ctx.args[i + 1];
      consumer_name = ctx.args[i + 2];
      has_group = true;
      i += 2;
    } else if (equals_ignore_case(o, "noack")) {
      if (!xreadgroup) {
        return ctx.error(
            "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
      }
      noack = true;
    } else {
      return ctx.error(errors::kSyntax);
    }
  }
  if (streams_arg == 0) return ctx.error(errors::kSyntax);
  if (xreadgroup && !has_group) return ctx.error("ERR Missing GROUP option for XREADGROUP");

  const bool rerun = ctx.session.blocked.blocked();
  const std::span<const std::string_view> all_keys = ctx.args.subspan(streams_arg, streams_count);
  const std::span<const std::string_view> serve = ctx.keys_to_serve(all_keys);
  auto serving = [&](std::string_view key) {
    return std::find(serve.begin(), serve.end(), key) != serve.end();
  };
  if (rerun && xreadgroup) {
    // Woken by any change of the key (as Redis 7.0 signals a deleted or overwritten stream
    // to XREADGROUP waiters): a stream that is gone, or a group that is, ends the wait.
    for (std::string_view key : serve) {
      Entry* entry = ctx.lookup_read(key);
      if (entry == nullptr || entry->value.type() != ValueType::kStream) {
        return ctx.error("UNBLOCKED the stream key no longer exists");
      }
      if (stream_of(entry).find_group(group_name) == nullptr) {
        return ctx.error("NOGROUP the consumer group this client was blocked on no longer exists");
      }
    }
  }
  std::vector<StreamId> ids(streams_count);
  std::vector<bool> new_only(streams_count, false);  // ">"
  // When running again for a parked client: each stream's entries_added when it parked (see
  // below), so that only an XADD since then serves it, as only XADD wakes Redis's readers.
  std::vector<uint64_t> added_when_parked(streams_count, 0);
  for (size_t k = 0; k < streams_count; ++k) {
    const std::string_view key = ctx.args[streams_arg + k];
    std::string_view id_arg = ctx.args[streams_arg + streams_count + k];
    if (rerun && !serving(key)) continue;
    if (rerun) {
      const size_t bar = id_arg.rfind('|');
      if (bar != std::string_view::npos) {
        parse_uint64(id_arg.substr(bar + 1), &added_when_parked[k]);
        id_arg = id_arg.substr(0, bar);
      }
    }
    bool wrong_type;
    const StreamValue* stream =
        ctx.read_collection<StreamValue>(key, ValueType::kStream, &wrong_type);
    if (wrong_type) return;
    if (has_group) {
      if (stream == nullptr ||
          const_cast<StreamValue*>(stream)->find_group(group_name) == nullptr) {
        std::string text = nogroup_key_or_group(key, group_name);
        text += " in XREADGROUP with GROUP option";
        return ctx.error(text);
      }
    }
    if (id_arg == "$") {
      if (xreadgroup) {
        return ctx.error(
            "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
            "history of this consumer by specifying a proper ID, or use the > ID to get new "
            "messages. The $ ID would just return an empty result set.");
      }
      ids[k] = stream != nullptr ? stream->last_id() : StreamId{0, 0};
      continue;
    }
    if (id_arg == ">") {
      if (!xreadgroup) {
        return ctx.error(
            "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
            "<consumer> option.");
      }
      ids[k] = StreamId::max();
      new_only[k] = true;
      continue;
    }
    if (!parse_id_or_reply(ctx, id_arg, &ids[k], 0, true)) return;
  }

  size_t served = 0;
  DeferredLength outer{};
  for (size_t k = 0; k < streams_count; ++k) {
    const std::string_view key = all_keys[k];
    if (!serving(key)) continue;
    Entry* entry = ctx.lookup_read(key);
    if (entry == nullptr) continue;
    StreamValue& stream = stream_of(entry);
    StreamId gt = ids[k];
    bool serve_now = false;
    bool history = false;
    StreamGroup* group = nullptr;
    StreamConsumer* consumer = nullptr;
    if (has_group) {
      group = stream.find_group(group_name);
      if (!new_only[k]) {
        serve_now = true;
        history = true;
      } else if (rerun) {
        // Redis serves a woken client when the stream's last ID passed the group's, even if
        // the entries after it are gone (an empty reply).
        gt = group->last_id;
        serve_now = stream.entries_added() != added_when_parked[k] && stream.last_id() > gt;
      } else if (stream.length() > 0) {
        StreamId top;
        stream.edge_id(false, &top);
        if (top > group->last_id) {
          serve_now = true;
          gt = group->last_id;
        }
      }
    } else if (rerun) {
      serve_now = stream.entries_added() != added_when_parked[k] && stream.last_id() > gt;
    } else if (stream.length() > 0) {
      StreamId top;
      stream.edge_id(false, &top);
      serve_now = top > gt;
    }
    if (!serve_now) continue;
    if (group != nullptr) {
      bool created;
      consumer = &lookup_or_create_consumer(ctx, key, *group, consumer_name, &created);
      consumer->seen_time_ms = ctx.now_ms;
      // As 7.0: only a NOACK read, which propagates no XCLAIM, announces a new consumer.
      if (created && noack) {
        ctx.propagate({"XGROUP", "CREATECONSUMER", key, group_name, consumer_name});
      }
    }
    if (++served == 1) outer = ctx.reply.begin_deferred();
    StreamId start = gt;
    start.increment();
    if (ctx.reply.resp() == 2) ctx.reply.array_header(2);
    ctx.reply.bulk(key);
    if (group == nullptr) {
      const DeferredLength length = ctx.reply.begin_deferred();
      size_t sent = 0;
      stream.for_range(start, StreamId::max(), false, [&](const StreamEntry& e) {
        reply_entry(ctx, e);
        ++sent;
        return count == 0 || sent < static_cast<uint64_t>(count);
      });
      ctx.reply.end_deferred_array(length, sent);
    } else if (history) {
      reply_consumer_history(ctx, stream, *group, *consumer, start, count);
    } else {
      reply_group_range(ctx, key, group_name, stream, *group, consumer_name, *consumer, start,
                        count, noack);
    }
    if (group != nullptr) ctx.changed_without_event(key, 1);
  }
  if (served > 0) {
    if (xreadgroup) wrap_effects(ctx);
    if (ctx.reply.resp() == 2) {
      ctx.reply.end_deferred_array(outer, served);
    } else {
      ctx.reply.end_deferred_map(outer, served);
    }
    return;
  }
  if (timeout != -1) {
    if (!ctx.may_block()) return ctx.reply.null_array();
    // "$" becomes the ID it stood for, so that running again serves only newer entries; each
    // ID carries "|<entries_added>" of its stream now, which the run for a woken client reads
    // back (these arguments are only ever run again, never shown or propagated).
    std::vector<std::string> words(ctx.args.begin(), ctx.args.end());
    for (size_t k = 0; k < streams_count; ++k) {
      std::string& word = words[streams_arg + streams_count + k];
      if (word == "$") word = ids[k].to_string();
      const Entry* entry = ctx.db().find_raw(all_keys[k]);
      const uint64_t added = entry != nullptr && entry->value.type() == ValueType::kStream
                                 ? entry->value.as<StreamValue>().entries_added()
                                 : 0;
      word += '|';
      word += std::to_string(added);
    }
    std::vector<std::string_view> views(words.begin(), words.end());
    const int64_t deadline = timeout > 0 ? ctx.now_ms + timeout : 0;
    ctx.block_with_args(all_keys, ValueType::kStream, deadline, views);
    if (xreadgroup) ctx.session.blocked.set_wakes_on_any_change(true);
    return;
  }
  ctx.reply.null_array();
}

void xread_command(CommandContext& ctx) { xread_generic(ctx, false); }
void xreadgroup_command(CommandContext& ctx) { xread_generic(ctx, true); }

// --- XACK, XPENDING ------------------------------------------------------------------------

void xack_command(CommandContext& ctx) {
  bool wrong_type;
  Entry* entry = ctx.lookup_read(ctx.args[1]);
  if (entry != nullptr && entry->value.type() != ValueType::kStream) {
    return ctx.error(errors::kWrongType);
  }
  (void)wrong_type;
  StreamGroup* group = entry == nullptr ? nullptr : stream_of(entry).find_group(ctx.args[2]);
  if (group == nullptr) return ctx.reply.integer(0);
  std::vector<StreamId> ids(ctx.args.size() - 3);
  for (size_t j = 3; j < ctx.args.size(); ++j) {
    if (!parse_id_or_reply(ctx, ctx.args[j], &ids[j - 3], 0, true)) return;
  }
  int64_t acknowledged = 0;
  for (StreamId id : ids) {
    auto it = group->pending.find(id);
    if (it == group->pending.end()) continue;
    auto owner = group->consumers.find(it->second.consumer);
    if (owner != group->consumers.end()) owner->second.pending.erase(id);
    group->pending.erase(it);
    ++acknowledged;
  }
  if (acknowledged > 0) ctx.changed_without_event(ctx.args[1], static_cast<uint64_t>(acknowledged));
  ctx.reply.integer(acknowledged);
}

void xpending_command(CommandContext& ctx) {
  const size_t argc = ctx.args.size();
  const bool justinfo = argc == 3;
  StreamId start;
  StreamId end;
  int64_t count = 0;
  int64_t min_idle = 0;
  std::string_view consumer_name;
  bool has_consumer = false;
  if (argc != 3 && (argc < 6 || argc > 9)) return ctx.error(errors::kSyntax);
  if (argc >= 6) {
    size_t start_index = 3;
    if (equals_ignore_case(ctx.args[3], "idle")) {
      if (!parse_ll(ctx, ctx.args[4], &min_idle)) return;
      if (argc < 8) return ctx.error(errors::kSyntax);
      start_index += 2;
    }
    if (!parse_ll(ctx, ctx.args[start_index + 2], &count)) return;
    if (count < 0) count = 0;
    bool start_ex;
    bool end_ex;
    if (!parse_interval_id(ctx, ctx.args[start_index], &start, &start_ex, 0)) return;
    if (start_ex && !start.increment()) return ctx.error("ERR invalid start ID for the interval");
    if (!parse_interval_id(ctx, ctx.args[start_index + 1], &end, &end_ex, UINT64_MAX)) return;
    if (end_ex && !end.decrement()) return ctx.error("ERR invalid end ID for the interval");
    if (start_index + 3 < argc) {
      consumer_name = ctx.args[start_index + 3];
      has_consumer = true;
    }
  }
  bool wrong_type;
  const StreamValue* stream =
      ctx.read_collection<StreamValue>(ctx.args[1], ValueType::kStream, &wrong_type);
  if (wrong_type) return;
  const StreamGroup* group = nullptr;
  if (stream != nullptr) {
    auto it = stream->groups().find(ctx.args[2]);
    if (it != stream->groups().end()) group = &it->second;
  }
  if (group == nullptr) return ctx.error(nogroup_key_or_group(ctx.args[1], ctx.args[2]));

  if (justinfo) {
    ctx.reply.array_header(4);
    ctx.reply.integer(static_cast<int64_t>(group->pending.size()));
    if (group->pending.empty()) {
      ctx.reply.null();
      ctx.reply.null();
      ctx.reply.null_array();
      return;
    }
    reply_id(ctx, group->pending.begin()->first);
    reply_id(ctx, group->pending.rbegin()->first);
    size_t with_pending = 0;
    for (const auto& [name, consumer] : group->consumers) with_pending += !consumer.pending.empty();
    ctx.reply.array_header(with_pending);
    for (const auto& [name, consumer] : group->consumers) {
      if (consumer.pending.empty()) continue;
      ctx.reply.array_header(2);
      ctx.reply.bulk(name);
      ctx.reply.bulk_integer(static_cast<int64_t>(consumer.pending.size()));
    }
    return;
  }
  const StreamConsumer* consumer = nullptr;
  if (has_consumer) {
    auto it = group->consumers.find(consumer_name);
    if (it == group->consumers.end()) return ctx.reply.array_header(0);
    consumer = &it->second;
  }
  const DeferredLength length = ctx.reply.begin_deferred();
  size_t sent = 0;
  auto emit = [&](StreamId id, const StreamPending& pending) {
    const int64_t idle = ctx.now_ms - pending.delivery_time_ms;
    if (min_idle != 0 && idle < min_idle) return;
    ++sent;
    --count;
    ctx.reply.array_header(4);
    reply_id(ctx, id);
    ctx.reply.bulk(pending.consumer);
    ctx.reply.integer(std::max<int64_t>(idle, 0));
    ctx.reply.integer(static_cast<int64_t>(pending.delivery_count));
  };
  if (consumer != nullptr) {
    for (auto it = consumer->pending.lower_bound(start);
         count > 0 && it != consumer->pending.end() && *it <= end; ++it) {
      auto pending = group->pending.find(*it);
      if (pending != group->pending.end()) emit(*it, pending->second);
    }
  } else {
    for (auto it = group->pending.lower_bound(start);
         count > 0 && it != group->pending.end() && it->first <= end; ++it) {
      emit(it->first, it->second);
    }
  }
  ctx.reply.end_deferred_array(length, sent);
}

// --- XCLAIM, XAUTOCLAIM --------------------------------------------------------------------

// Moves `pending` (of `id`) to `consumer_name`.
void move_pending(StreamGroup& group, StreamId id, StreamPending& pending,
                  std::string_view consumer_name, StreamConsumer& consumer) {
  if (pending.consumer != consumer_name) {
    auto old = group.consumers.find(pending.consumer);
    if (old != group.consumers.end()) old->second.pending.erase(id);
    pending.consumer.assign(consumer_name);
  }
  consumer.pending.insert(id);
}

void drop_pending(StreamGroup& group, std::map<StreamId, StreamPending>::iterator it) {
  auto owner = group.consumers.find(it->second.consumer);
  if (owner != group.consumers.end()) owner->second.pending.erase(it->first);
  group.pending.erase(it);
}

void xclaim_command(CommandContext& ctx) {
  const std::string_view key = ctx.args[1];
  const std::string_view group_name = ctx.args[2];
  const std::string_view consumer_name = ctx.args[3];
  ctx.propagate_nothing();
  Entry* entry = ctx.lookup_read(key);
  if (entry != nullptr && entry->value.type() != ValueType::kStream) {
    return ctx.error(errors::kWrongType);
  }
  StreamGroup* group = entry == nullptr ? nullptr : stream_of(entry).find_group(group_name);
  if (group == nullptr) return ctx.error(nogroup_key_or_group(key, group_name));
  StreamValue& stream = stream_of(entry);
  int64_t min_idle;
  if (!parse_ll(ctx, ctx.args[4], &min_idle, "ERR Invalid min-idle-time argument for XCLAIM")) {
    return;
  }
  if (min_idle < 0) min_idle = 0;
  std::vector<StreamId> ids;
  size_t j = 5;
  for (; j < ctx.args.size(); ++j) {
    StreamId id;
    if (!parse_id(ctx.args[j], &id, 0, true)) break;
    ids.push_back(id);
  }
  const int64_t now = ctx.now_ms;
  int64_t delivery_time = -1;
  int64_t retry_count = -1;
  bool force = false;
  bool justid = false;
  StreamId last_id;
  for (; j < ctx.args.size(); ++j) {
    const bool more = j + 1 < ctx.args.size();
    const std::string_view opt = ctx.args[j];
    if (equals_ignore_case(opt, "force")) {
      force = true;
    } else if (equals_ignore_case(opt, "justid")) {
      justid = true;
    } else if (equals_ignore_case(opt, "idle") && more) {
      if (!parse_ll(ctx, ctx.args[++j], &delivery_time,
                    "ERR Invalid IDLE option argument for XCLAIM")) {
        return;
      }
      delivery_time = now - delivery_time;
    } else if (equals_ignore_case(opt, "time") && more) {
      if (!parse_ll(ctx, ctx.args[++j], &delivery_time,
                    "ERR Invalid TIME option argument for XCLAIM")) {
        return;
      }
    } else if (equals_ignore_case(opt, "retrycount") && more) {
      if (!parse_ll(ctx, ctx.args[++j], &retry_count,
                    "ERR Invalid RETRYCOUNT option argument for XCLAIM")) {
        return;
      }
    } else if (equals_ignore_case(opt, "lastid") && more) {
      if (!parse_id_or_reply(ctx, ctx.args[++j], &last_id, 0, true)) return;
    } else {
      std::string text = "ERR Unrecognized XCLAIM option '";
      text.append(opt);
      text += "'";
      return ctx.error(text);
    }
  }
  bool propagate_last_id = false;
  if (last_id > group->last_id) {
    group->last_id = last_id;
    propagate_last_id = true;
  }
  if (delivery_time != -1) {
    if (delivery_time < 0 || delivery_time > now) delivery_time = now;
  } else {
    delivery_time = now;
  }
  StreamConsumer* consumer = nullptr;
  const DeferredLength length = ctx.reply.begin_deferred();
  size_t sent = 0;
  for (StreamId id : ids) {
    auto it = group->pending.find(id);
    if (!stream.contains(id)) {
      if (it != group->pending.end()) {
        propagate_xclaim(ctx, key, group_name, *group, id, &it->second);
        propagate_last_id = false;
        ctx.changed_without_event(key, 1);
        drop_pending(*group, it);
      }
      continue;
    }
    bool fresh = false;
    if (force && it == group->pending.end()) {
      it = group->pending.try_emplace(id).first;
      fresh = true;
    }
    if (it == group->pending.end()) continue;
    StreamPending& pending = it->second;
    if (!fresh && min_idle != 0 && now - pending.delivery_time_ms < min_idle) continue;
    if (consumer == nullptr) {
      consumer = &lookup_or_create_consumer(ctx, key, *group, consumer_name);
    }
    if (fresh) pending.consumer.clear();
    move_pending(*group, id, pending, consumer_name, *consumer);
    pending.delivery_time_ms = delivery_time;
    if (retry_count >= 0) {
      pending.delivery_count = static_cast<uint64_t>(retry_count);
    } else if (!justid) {
      pending.delivery_count++;
    }
    if (justid) {
      reply_id(ctx, id);
    } else if (!reply_single_entry(ctx, stream, id)) {
      ctx.reply.null();
    }
    ++sent;
    propagate_xclaim(ctx, key, group_name, *group, id, &pending);
    propagate_last_id = false;
    ctx.changed_without_event(key, 1);
  }
  if (propagate_last_id) {
    propagate_setid(ctx, key, group_name, *group);
    ctx.changed_without_event(key, 1);
  }
  wrap_effects(ctx);
  ctx.reply.end_deferred_array(length, sent);
}

void xautoclaim_command(CommandContext& ctx) {
  const std::string_view key = ctx.args[1];
  const std::string_view group_name = ctx.args[2];
  const std::string_view consumer_name = ctx.args[3];
  ctx.propagate_nothing();
  int64_t min_idle;
  if (!parse_ll(ctx, ctx.args[4], &min_idle, "ERR Invalid min-idle-time argument for XAUTOCLAIM")) {
    return;
  }
  if (min_idle < 0) min_idle = 0;
  StreamId start;
  bool start_ex;
  if (!parse_interval_id(ctx, ctx.args[5], &start, &start_ex, 0)) return;
  if (start_ex && !start.increment()) return ctx.error("ERR invalid start ID for the interval");
  int64_t count = 100;
  bool justid = false;
  constexpr int64_t kAttemptsFactor = 10;
  for (size_t j = 6; j < ctx.args.size(); ++j) {
    const bool more = j + 1 < ctx.args.size();
    if (equals_ignore_case(ctx.args[j], "count") && more) {
      const int64_t max_count = LONG_MAX / 16;
      if (!parse_int64(ctx.args[j + 1], &count) || count < 1 || count > max_count) {
        return ctx.error("ERR COUNT must be > 0");
      }
      ++j;
    } else if (equals_ignore_case(ctx.args[j], "justid")) {
      justid = true;
    } else {
      return ctx.error(errors::kSyntax);
    }
  }
  Entry* entry = ctx.lookup_read(key);
  if (entry != nullptr && entry->value.type() != ValueType::kStream) {
    return ctx.error(errors::kWrongType);
  }
  StreamGroup* group = entry == nullptr ? nullptr : stream_of(entry).find_group(group_name);
  if (group == nullptr) return ctx.error(nogroup_key_or_group(key, group_name));
  StreamValue& stream = stream_of(entry);
  int64_t attempts = count * kAttemptsFactor;
  const int64_t now = ctx.now_ms;
  StreamConsumer* consumer = nullptr;
  std::vector<StreamId> deleted;
  ctx.reply.array_header(3);
  // The cursor comes first in the reply but is known last: the claimed entries are built
  // aside and sent after it.
  std::string claimed_bytes;
  size_t claimed = 0;
  {
    ReplyWriter side(&claimed_bytes, ctx.reply.resp());
    auto it = group->pending.lower_bound(start);
    while (attempts-- > 0 && count > 0 && it != group->pending.end()) {
      const StreamId id = it->first;
      if (!stream.contains(id)) {
        propagate_xclaim(ctx, key, group_name, *group, id, &it->second);
        ctx.changed_without_event(key, 1);
        auto next = std::next(it);
        drop_pending(*group, it);
        it = next;
        deleted.push_back(id);
        --count;
        continue;
      }
      StreamPending& pending = it->second;
      if (min_idle != 0 && now - pending.delivery_time_ms < min_idle) {
        ++it;
        continue;
      }
      if (consumer == nullptr) {
        consumer = &lookup_or_create_consumer(ctx, key, *group, consumer_name);
      }
      move_pending(*group, id, pending, consumer_name, *consumer);
      pending.delivery_time_ms = now;
      if (!justid) pending.delivery_count++;
      if (justid) {
        side.bulk(id.to_string());
      } else {
        bool sent = false;
        stream.for_range(id, id, false, [&](const StreamEntry& e) {
          side.array_header(2);
          side.bulk(e.id.to_string());
          side.array_header(e.fields.size() * 2);
          for (const auto& [f, v] : e.fields) {
            side.bulk(f);
            side.bulk(v);
          }
          sent = true;
          return false;
        });
        if (!sent) side.null();
      }
      ++claimed;
      --count;
      propagate_xclaim(ctx, key, group_name, *group, id, &pending);
      ctx.changed_without_event(key, 1);
      ++it;
    }
    reply_id(ctx, it == group->pending.end() ? StreamId{0, 0} : it->first);
  }
  wrap_effects(ctx);
  ctx.reply.array_header(claimed);
  ctx.reply.raw(claimed_bytes);
  ctx.reply.array_header(deleted.size());
  for (StreamId id : deleted) reply_id(ctx, id);
}

// --- XGROUP --------------------------------------------------------------------------------

// The stream and group an XGROUP subcommand works on; false after an error reply.
bool xgroup_lookup(CommandContext& ctx, bool mkstream, Entry** entry, StreamGroup** group) {
  *entry = ctx.lookup_write(ctx.args[2]);
  *group = nullptr;
  if (*entry != nullptr && (*entry)->value.type() != ValueType::kStream) {
    ctx.error(errors::kWrongType);
    return false;
  }
  if (!mkstream) {
    if (*entry == nullptr) {
      ctx.error(
          "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may "
          "want to use the MKSTREAM option to create an empty stream automatically.");
      return false;
    }
    *group = stream_of(*entry).find_group(ctx.args[3]);
    const std::string_view sub = ctx.args[1];
    if (*group == nullptr &&
        (equals_ignore_case(sub, "setid") || equals_ignore_case(sub, "createconsumer") ||
         equals_ignore_case(sub, "delconsumer"))) {
      ctx.error(nogroup_for_key(ctx.args[3], ctx.args[2]));
      return false;
    }
  } else if (*entry != nullptr) {
    *group = stream_of(*entry).find_group(ctx.args[3]);
  }
  return true;
}

bool parse_entries_read(CommandContext& ctx, std::string_view text, int64_t* out) {
  if (!parse_ll(ctx, text, out)) return false;
  if (*out < 0 && *out != kInvalidEntriesRead) {
    ctx.error("ERR value for ENTRIESREAD must be positive or -1");
    return false;
  }
  return true;
}

void xgroup_create_command(CommandContext& ctx) {
  bool mkstream = false;
  int64_t entries_read = kInvalidEntriesRead;
  const size_t argc = ctx.args.size();
  if (argc > 5) {
    for (size_t i = 5; i < argc;) {
      if (equals_ignore_case(ctx.args[i], "mkstream")) {
        mkstream = true;
        ++i;
      } else if (equals_ignore_case(ctx.args[i], "entriesread") && i + 1 < argc) {
        if (!parse_entries_read(ctx, ctx.args[i + 1], &entries_read)) return;
        i += 2;
      } else {
        return ctx.error(errors::subcommand_syntax(ctx.args[0], ctx.args[1]));
      }
    }
  }
  Entry* entry;
  StreamGroup* group;
  if (!xgroup_lookup(ctx, mkstream, &entry, &group)) return;
  if (argc > 8) return ctx.error(errors::subcommand_syntax(ctx.args[0], ctx.args[1]));
  StreamId id;
  if (ctx.args[4] == "$") {
    id = entry != nullptr ? stream_of(entry).last_id() : StreamId{0, 0};
  } else if (!parse_id_or_reply(ctx, ctx.args[4], &id, 0, true)) {
    return;
  }
  const std::string_view key = ctx.args[2];
  if (entry == nullptr) {
    entry = ctx.db().add(key, new_stream(ctx));
    ctx.created(key);
    ctx.changed_without_event(key, 0);
  }
  StreamValue& stream = stream_of(entry);
  if (stream.find_group(ctx.args[3]) != nullptr) {
    return ctx.error("BUSYGROUP Consumer Group name already exists");
  }
  StreamGroup& created = stream.groups()[std::string(ctx.args[3])];
  created.last_id = id;
  created.entries_read = entries_read;
  ctx.reply.simple_string("OK");
  ctx.changed(key, kNotifyStream, "xgroup-create");
}

void xgroup_setid_command(CommandContext& ctx) {
  const size_t argc = ctx.args.size();
  Entry* entry;
  StreamGroup* group;
  if (!xgroup_lookup(ctx, false, &entry, &group)) return;
  if (argc != 5 && argc != 7) return ctx.error(errors::subcommand_syntax(ctx.args[0], ctx.args[1]));
  StreamId id;
  if (ctx.args[4] == "$") {
    id = stream_of(entry).last_id();
  } else if (!parse_id_or_reply(ctx, ctx.args[4], &id, 0, false)) {
    return;
  }
  int64_t entries_read = kInvalidEntriesRead;
  if (argc == 7) {
    if (!equals_ignore_case(ctx.args[5], "entriesread")) {
      return ctx.error(errors::subcommand_syntax(ctx.args[0], ctx.args[1]));
    }
    if (!parse_entries_read(ctx, ctx.args[6], &entries_read)) return;
  }
  group->last_id = id;
  group->entries_read = entries_read;
  ctx.reply.simple_string("OK");
  ctx.changed(ctx.args[2], kNotifyStream, "xgroup-setid");
}

void xgroup_destroy_command(CommandContext& ctx) {
  Entry* entry;
  StreamGroup* group;
  if (!xgroup_lookup(ctx, false, &entry, &group)) return;
  if (group == nullptr) return ctx.reply.integer(0);
  stream_of(entry).groups().erase(std::string(ctx.args[3]));
  ctx.reply.integer(1);
  ctx.changed(ctx.args[2], kNotifyStream, "xgroup-destroy");
}

void xgroup_createconsumer_command(CommandContext& ctx) {
  Entry* entry;
  StreamGroup* group;
  if (!xgroup_lookup(ctx, false, &entry, &group)) return;
  bool created;
  lookup_or_create_consumer(ctx, ctx.args[2], *group, ctx.args[4], &created);
  ctx.reply.integer(created ? 1 : 0);
}

void xgroup_delconsumer_command(CommandContext& ctx) {
  Entry* entry;
  StreamGroup* group;
  if (!xgroup_lookup(ctx, false, &entry, &group)) return;
  auto it = group->consumers.find(ctx.args[4]);
  int64_t pending = 0;
  if (it != group->consumers.end()) {
    pending = static_cast<int64_t>(it->second.pending.size());
    for (StreamId id : it->second.pending) group->pending.erase(id);
    group->consumers.erase(it);
    ctx.changed(ctx.args[2], kNotifyStream, "xgroup-delconsumer");
  }
  ctx.reply.integer(pending);
}

void xgroup_help_command(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CREATE <key> <groupname> <id|$> [option]",
      "    Create a new consumer group. Options are:",
      "    * MKSTREAM",
      "      Create the empty stream if it does not exist.",
      "    * ENTRIESREAD entries_read",
      "      Set the group's entries_read counter (internal use).",
      "CREATECONSUMER <key> <groupname> <consumer>",
      "    Create a new consumer in the specified group.",
      "DELCONSUMER <key> <groupname> <consumer>",
      "    Remove the specified consumer.",
      "DESTROY <key> <groupname>",
      "    Remove the specified group.",
      "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
      "    Set the current group ID and entries_read counter.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply_status_lines(kLines);
}

// --- XINFO ---------------------------------------------------------------------------------

const StreamValue* xinfo_lookup(CommandContext& ctx) {
  Entry* entry = ctx.lookup_read(ctx.args[2]);
  if (entry == nullptr) {
    ctx.error(errors::kNoSuchKey);
    return nullptr;
  }
  if (entry->value.type() != ValueType::kStream) {
    ctx.error(errors::kWrongType);
    return nullptr;
  }
  return &stream_of(entry);
}

void reply_optional(CommandContext& ctx, bool valid, int64_t value) {
  if (valid) {
    ctx.reply.integer(value);
  } else {
    ctx.reply.null();
  }
}

void xinfo_consumers_command(CommandContext& ctx) {
  const StreamValue* stream = xinfo_lookup(ctx);
  if (stream == nullptr) return;
  auto it = stream->groups().find(ctx.args[3]);
  if (it == stream->groups().end()) return ctx.error(nogroup_for_key(ctx.args[3], ctx.args[2]));
  const StreamGroup& group = it->second;
  ctx.reply.array_header(group.consumers.size());
  for (const auto& [name, consumer] : group.consumers) {
    ctx.reply.map_header(3);
    ctx.reply.bulk("name");
    ctx.reply.bulk(name);
    ctx.reply.bulk("pending");
    ctx.reply.integer(static_cast<int64_t>(consumer.pending.size()));
    ctx.reply.bulk("idle");
    ctx.reply.integer(std::max<int64_t>(ctx.now_ms - consumer.seen_time_ms, 0));
  }
}

void xinfo_groups_command(CommandContext& ctx) {
  const StreamValue* stream = xinfo_lookup(ctx);
  if (stream == nullptr) return;
  ctx.reply.array_header(stream->groups().size());
  for (const auto& [name, group] : stream->groups()) {
    ctx.reply.map_header(6);
    ctx.reply.bulk("name");
    ctx.reply.bulk(name);
    ctx.reply.bulk("consumers");
    ctx.reply.integer(static_cast<int64_t>(group.consumers.size()));
    ctx.reply.bulk("pending");
    ctx.reply.integer(static_cast<int64_t>(group.pending.size()));
    ctx.reply.bulk("last-delivered-id");
    reply_id(ctx, group.last_id);
    ctx.reply.bulk("entries-read");
    reply_optional(ctx, group.entries_read != kInvalidEntriesRead, group.entries_read);
    ctx.reply.bulk("lag");
    int64_t lag = 0;
    const bool valid = stream->group_lag(group, &lag);
    reply_optional(ctx, valid, lag);
  }
}

// Redis's count of rax nodes for the node keys: not reproducible without a radix tree, so an
// estimate of the same order (one node per key plus the shared prefix nodes).
int64_t radix_tree_nodes(const StreamValue& stream) {
  return static_cast<int64_t>(stream.node_count()) + 1;
}

void xinfo_stream_command(CommandContext& ctx) {
  const size_t argc = ctx.args.size();
  bool full = false;
  int64_t count = 10;
  if (argc > 3) {
    if (!equals_ignore_case(ctx.args[3], "full")) return ctx.error(errors::subcommand_syntax(ctx.args[0], ctx.args[1]));
    full = true;
    if (argc > 4) {
      if (argc != 6 || !equals_ignore_case(ctx.args[4], "count")) {
        return ctx.error(errors::subcommand_syntax(ctx.args[0], ctx.args[1]));
      }
      if (!parse_ll(ctx, ctx.args[5], &count)) return;
      if (count < 0) count = 10;
    }
  }
  const StreamValue* stream = xinfo_lookup(ctx);
  if (stream == nullptr) return;
  ctx.reply.map_header(full ? 9 : 10);
  ctx.reply.bulk("length");
  ctx.reply.integer(static_cast<int64_t>(stream->length()));
  ctx.reply.bulk("radix-tree-keys");
  ctx.reply.integer(static_cast<int64_t>(stream->node_count()));
  ctx.reply.bulk("radix-tree-nodes");
  ctx.reply.integer(radix_tree_nodes(*stream));
  ctx.reply.bulk("last-generated-id");
  reply_id(ctx, stream->last_id());
  ctx.reply.bulk("max-deleted-entry-id");
  reply_id(ctx, stream->max_deleted_id());
  ctx.reply.bulk("entries-added");
  ctx.reply.integer(static_cast<int64_t>(stream->entries_added()));
  ctx.reply.bulk("recorded-first-entry-id");
  reply_id(ctx, stream->first_id());
  if (!full) {
    ctx.reply.bulk("groups");
    ctx.reply.integer(static_cast<int64_t>(stream->groups().size()));
    for (const bool first : {true, false}) {
      ctx.reply.bulk(first ? "first-entry" : "last-entry");
      bool sent = false;
      stream->for_range({0, 0}, StreamId::max(), !first, [&](const StreamEntry& e) {
        reply_entry(ctx, e);
        sent = true;
        return false;
      });
      if (!sent) ctx.reply.null();
    }
    return;
  }
  ctx.reply.bulk("entries");
  {
    const DeferredLength length = ctx.reply.begin_deferred();
    size_t sent = 0;
    stream->for_range({0, 0}, StreamId::max(), false, [&](const StreamEntry& e) {
      reply_entry(ctx, e);
      ++sent;
      return count == 0 || sent < static_cast<uint64_t>(count);
    });
    ctx.reply.end_deferred_array(length, sent);
  }
  ctx.reply.bulk("groups");
  ctx.reply.array_header(stream->groups().size());
  for (const auto& [name, group] : stream->groups()) {
    ctx.reply.map_header(7);
    ctx.reply.bulk("name");
    ctx.reply.bulk(name);
    ctx.reply.bulk("last-delivered-id");
    reply_id(ctx, group.last_id);
    ctx.reply.bulk("entries-read");
    reply_optional(ctx, group.entries_read != kInvalidEntriesRead, group.entries_read);
    ctx.reply.bulk("lag");
    int64_t lag = 0;
    const bool valid = stream->group_lag(group, &lag);
    reply_optional(ctx, valid, lag);
    ctx.reply.bulk("pel-count");
    ctx.reply.integer(static_cast<int64_t>(group.pending.size()));
    ctx.reply.bulk("pending");
    const size_t pel_shown =
        count == 0 ? group.pending.size() : std::min<size_t>(group.pending.size(), count);
    ctx.reply.array_header(pel_shown);
    size_t shown = 0;
    for (const auto& [id, pending] : group.pending) {
      if (shown++ == pel_shown) break;
      ctx.reply.array_header(4);
      reply_id(ctx, id);
      ctx.reply.bulk(pending.consumer);
      ctx.reply.integer(pending.delivery_time_ms);
      ctx.reply.integer(static_cast<int64_t>(pending.delivery_count));
    }
    ctx.reply.bulk("consumers");
    ctx.reply.array_header(group.consumers.size());
    for (const auto& [cname, consumer] : group.consumers) {
      ctx.reply.map_header(4);
      ctx.reply.bulk("name");
      ctx.reply.bulk(cname);
      ctx.reply.bulk("seen-time");
      ctx.reply.integer(consumer.seen_time_ms);
      ctx.reply.bulk("pel-count");
      ctx.reply.integer(static_cast<int64_t>(consumer.pending.size()));
      ctx.reply.bulk("pending");
      const size_t cshown =
          count == 0 ? consumer.pending.size() : std::min<size_t>(consumer.pending.size(), count);
      ctx.reply.array_header(cshown);
      size_t n = 0;
      for (StreamId id : consumer.pending) {
        if (n++ == cshown) break;
        auto p = group.pending.find(id);
        ctx.reply.array_header(3);
        reply_id(ctx, id);
        ctx.reply.integer(p == group.pending.end() ? 0 : p->second.delivery_time_ms);
        ctx.reply.integer(
            p == group.pending.end() ? 0 : static_cast<int64_t>(p->second.delivery_count));
      }
    }
  }
}

void xinfo_help_command(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CONSUMERS <key> <groupname>",
      "    Show consumers of <groupname>.",
      "GROUPS <key>",
      "    Show the stream consumer groups.",
      "STREAM <key> [FULL [COUNT <count>]",
      "    Show information about the stream.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply_status_lines(kLines);
}

// --- Table ---------------------------------------------------------------------------------

// XREAD / XREADGROUP keys: the first half of what follows STREAMS.
std::vector<int> xread_keys(std::span<const std::string_view> args) {
  std::vector<int> positions;
  const bool group = args[0].size() == 10;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (equals_ignore_case(arg, "block") || equals_ignore_case(arg, "count")) {
      ++i;
    } else if (group && equals_ignore_case(arg, "group")) {
      i += 2;
    } else if (equals_ignore_case(arg, "noack")) {
    } else if (equals_ignore_case(arg, "streams")) {
      const size_t rest = args.size() - i - 1;
      if (rest == 0 || rest % 2 != 0) return {};
      for (size_t k = 0; k < rest / 2; ++k) positions.push_back(static_cast<int>(i + 1 + k));
      return positions;
    } else {
      return {};
    }
  }
  return {};
}

constexpr CommandSpec kXGroupSubcommands[] = {
    {"create", -5, kWrite | kDenyOom, 2, 2, 1, kAclStream, xgroup_create_command, "stream", "5.0.0",
     "Create a consumer group.", "O(1)"},
    {"createconsumer", 5, kWrite | kDenyOom, 2, 2, 1, kAclStream, xgroup_createconsumer_command,
     "stream", "6.2.0", "Create a consumer in a consumer group.", "O(1)"},
    {"delconsumer", 5, kWrite, 2, 2, 1, kAclStream, xgroup_delconsumer_command, "stream", "5.0.0",
     "Delete a consumer from a consumer group.", "O(1)"},
    {"destroy", 4, kWrite, 2, 2, 1, kAclStream, xgroup_destroy_command, "stream", "5.0.0",
     "Destroy a consumer group.",
     "O(N) where N is the number of entries in the group's pending entries list (PEL)."},
    {"help", 2, kLoading | kStale, 0, 0, 0, kAclStream, xgroup_help_command, "stream", "5.0.0",
     "Show helpful text about the different subcommands", "O(1)"},
    {"setid", -5, kWrite, 2, 2, 1, kAclStream, xgroup_setid_command, "stream", "5.0.0",
     "Set a consumer group to an arbitrary last delivered ID value.", "O(1)"},
};

constexpr CommandSpec kXInfoSubcommands[] = {
    {"consumers", 4, kReadonly, 2, 2, 1, kAclStream, xinfo_consumers_command, "stream", "5.0.0",
     "List the consumers in a consumer group", "O(1)"},
    {"groups", 3, kReadonly, 2, 2, 1, kAclStream, xinfo_groups_command, "stream", "5.0.0",
     "List the consumer groups of a stream", "O(1)"},
    {"help", 2, kLoading | kStale, 0, 0, 0, kAclStream, xinfo_help_command, "stream", "5.0.0",
     "Show helpful text about the different subcommands", "O(1)"},
    {"stream", -3, kReadonly, 2, 2, 1, kAclStream, xinfo_stream_command, "stream", "5.0.0",
     "Get information about a stream", "O(1)"},
};

constexpr CommandSpec kStreamCommands[] = {
    {"xack", -4, kWrite | kFast, 1, 1, 1, kAclStream, xack_command, "stream", "5.0.0",
     "Marks a pending message as correctly processed", "O(1) for each message ID processed."},
    {"xadd", -5, kWrite | kDenyOom | kFast, 1, 1, 1, kAclStream, xadd_command, "stream", "5.0.0",
     "Appends a new entry to a stream",
     "O(1) when adding a new entry, O(N) when trimming where N being the number of entries "
     "evicted."},
    {"xautoclaim", -6, kWrite | kFast, 1, 1, 1, kAclStream, xautoclaim_command, "stream", "6.2.0",
     "Changes (or acquires) ownership of messages in a consumer group", "O(1) if COUNT is small."},
    {"xclaim", -6, kWrite | kFast, 1, 1, 1, kAclStream, xclaim_command, "stream", "5.0.0",
     "Changes (or acquires) ownership of a message in a consumer group",
     "O(log N) with N being the number of messages in the PEL of the consumer group."},
    {"xdel", -3, kWrite | kFast, 1, 1, 1, kAclStream, xdel_command, "stream", "5.0.0",
     "Removes the specified entries from the stream",
     "O(1) for each single item to delete in the stream, regardless of the stream size."},
    {"xgroup", -2, 0, 0, 0, 0, 0, nullptr, "stream", "5.0.0",
     "A container for consumer groups commands", "Depends on subcommand.", kXGroupSubcommands},
    {"xinfo", -2, 0, 0, 0, 0, 0, nullptr, "stream", "5.0.0",
     "A container for stream introspection commands", "Depends on subcommand.", kXInfoSubcommands},
    {"xlen", 2, kReadonly | kFast, 1, 1, 1, kAclStream, xlen_command, "stream", "5.0.0",
     "Return the number of entries in a stream", "O(1)"},
    {"xpending", -3, kReadonly, 1, 1, 1, kAclStream, xpending_command, "stream", "5.0.0",
     "Return information and entries from a stream consumer group pending entries list",
     "O(N) with N being the number of elements returned"},
    {"xrange", -4, kReadonly, 1, 1, 1, kAclStream, xrange_command, "stream", "5.0.0",
     "Return a range of elements in a stream, with IDs matching the specified IDs interval",
     "O(N) with N being the number of elements being returned."},
    {"xread",
     -4,
     kReadonly | kBlocking | kMovableKeys,
     0,
     0,
     0,
     kAclStream,
     xread_command,
     "stream",
     "5.0.0",
     "Return never seen elements in multiple streams",
     "For each stream mentioned: O(N) with N being the number of elements being returned.",
     {},
     xread_keys},
    {"xreadgroup",
     -7,
     kWrite | kBlocking | kMovableKeys,
     0,
     0,
     0,
     kAclStream,
     xreadgroup_command,
     "stream",
     "5.0.0",
     "Return new entries from a stream using a consumer group",
     "For each stream mentioned: O(M) with M being the number of elements returned.",
     {},
     xread_keys},
    {"xrevrange", -4, kReadonly, 1, 1, 1, kAclStream, xrevrange_command, "stream", "5.0.0",
     "Return a range of elements in a stream, in reverse order",
     "O(N) with N being the number of elements returned."},
    {"xsetid", -3, kWrite | kDenyOom | kFast, 1, 1, 1, kAclStream, xsetid_command, "stream",
     "5.0.0", "An internal command for replicating stream values", "O(1)"},
    {"xtrim", -4, kWrite, 1, 1, 1, kAclStream, xtrim_command, "stream", "5.0.0",
     "Trims the stream to (approximately if '~' is passed) a certain size",
     "O(N), with N being the number of evicted entries."},
};

}  // namespace

void register_stream_commands(CommandTable& table) { table.add(kStreamCommands); }

}  // namespace keywarden
