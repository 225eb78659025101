// The persistence command family: DUMP and RESTORE (values in the RDB serialization, with the
// 2-byte RDB version and CRC64 footer Redis puts after them), SAVE, BGSAVE and LASTSAVE.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "commands/arg_parser.h"
#include "commands/context.h"
#include "commands/errors.h"
#include "commands/notifications.h"
#include "common/number.h"
#include "persistence/fork_child.h"
#include "persistence/rdb_codec.h"
#include "persistence/rdb_format.h"
#include "persistence/rdb_service.h"

namespace keywarden {
namespace {

void dump_command(CommandContext& ctx) {
  const Entry* entry = ctx.lookup_read(ctx.args[1]);
  if (entry == nullptr) return ctx.reply.null();
  ctx.reply.bulk(encode_dump_payload(entry->value));
}

void restore_command(CommandContext& ctx) {
  bool replace = false, absttl = false;
  int64_t idle = -1, freq = -1;
  for (size_t i = 4; i < ctx.args.size(); ++i) {
    const std::string_view option = ctx.args[i];
    const bool has_value = i + 1 < ctx.args.size();
    if (equals_ignore_case(option, "replace")) {
      replace = true;
    } else if (equals_ignore_case(option, "absttl")) {
      absttl = true;
    } else if (equals_ignore_case(option, "idletime") && has_value && freq == -1) {
      if (!parse_int64(ctx.args[++i], &idle)) return ctx.error(errors::kNotInteger);
      if (idle < 0) return ctx.error(errors::kInvalidIdletime);
    } else if (equals_ignore_case(option, "freq") && has_value && idle == -1) {
      if (!parse_int64(ctx.args[++i], &freq)) return ctx.error(errors::kNotInteger);
      if (freq < 0 || freq > 255) return ctx.error(errors::kInvalidFreq);
    } else {
      return ctx.error(errors::kSyntax);
    }
  }
  const std::string_view key = ctx.args[1];
  Database& db = ctx.db();
  if (!replace && ctx.lookup_write(key) != nullptr) return ctx.error(errors::kBusyKey);
  int64_t ttl;
  if (!parse_int64(ctx.args[2], &ttl)) return ctx.error(errors::kNotInteger);
  if (ttl < 0) return ctx.error(errors::kInvalidTtl);
  const CommandSettings& settings = ctx.server.settings();
  const bool deep =
      settings.sanitize_dump_payload == kSanitizeDumpYes ||
      (settings.sanitize_dump_payload == kSanitizeDumpClients && !ctx.session.payloads_trusted);
  Value value;
  switch (decode_dump_payload(ctx.args[3], settings, deep, &value,
                              &ctx.server.stats().dump_payload_sanitizations)) {
    case DumpPayloadStatus::kBadFooter:
      return ctx.error(errors::kDumpPayload);
    case DumpPayloadStatus::kBadData:
      return ctx.error(errors::kBadDataFormat);
    case DumpPayloadStatus::kOk:
      break;
  }

  bool deleted = false;
  if (replace) {
    if (Entry* old = ctx.lookup_write(key)) {
      db.remove(old, ctx.server.settings().lazyfree_lazy_server_del);
      deleted = true;
    }
  }
  // A relative TTL that overflows wraps around as in Redis (so the key is already expired),
  // without the signed overflow.
  if (ttl != 0 && !absttl) {
    ttl = static_cast<int64_t>(static_cast<uint64_t>(ttl) + static_cast<uint64_t>(ctx.now_ms));
  }
  // Already in the past: the key is not created, and one it replaced is simply gone.
  if (ttl != 0 && ttl <= ctx.now_ms) {
    if (deleted) {
      ctx.propagate({"DEL", key});
      ctx.key_modified(key);
      ctx.notify(kNotifyGeneric, "del", key);
      ctx.dirty();
    }
    return ctx.reply.simple_string("OK");
  }
  Entry* entry = db.add(key, std::move(value));
  ctx.notify(kNotifyNew, "new", key);
  std::vector<std::string_view> effect(ctx.args.begin(), ctx.args.end());
  std::string absolute;
  if (ttl != 0) {
    db.set_expiry(entry, ttl);
    if (!absttl) {
      absolute = format_int64(ttl);
      effect[2] = absolute;
      effect.push_back("ABSTTL");
    }
  }
  if (policy_uses_lfu(settings.maxmemory_policy)) {
    if (freq >= 0) {
      entry->access_clock =
          (access_clock::lfu_initial(ctx.now_ms) & ~uint32_t{0xff}) | static_cast<uint32_t>(freq);
    }
  } else if (idle >= 0) {
    // The LRU clock holds no longer idle time (and times 1000 a huge one would overflow).
    entry->access_clock =
        access_clock::lru_stamp(ctx.now_ms - std::min(idle, int64_t{access_clock::kLruMax}) * 1000);
  }
  ctx.propagate(effect);
  ctx.key_modified(key);
  ctx.notify(kNotifyGeneric, "restore", key);
  ctx.dirty();
  ctx.reply.simple_string("OK");
}

void save_command(CommandContext& ctx) {
  RdbService* rdb = ctx.server.rdb();
  if (rdb == nullptr) return ctx.error("ERR persistence is not available");
  if (rdb->bgsave_in_progress()) return ctx.error(errors::kBgsaveInProgress);
  if (!rdb->save().empty()) return ctx.error("ERR");
  ctx.reply.simple_string("OK");
}

void bgsave_command(CommandContext& ctx) {
  RdbService* rdb = ctx.server.rdb();
  if (rdb == nullptr) return ctx.error("ERR persistence is not available");
  bool schedule = false;
  if (ctx.args.size() > 1) {
    if (ctx.args.size() == 2 && equals_ignore_case(ctx.args[1], "schedule")) {
      schedule = true;
    } else {
      return ctx.error(errors::kSyntax);
    }
  }
  if (rdb->bgsave_in_progress()) return ctx.error(errors::kBgsaveInProgress);
  if (ForkChild::active()) {
    if (!schedule) return ctx.error(errors::kBgsaveAofInProgress);
    rdb->schedule_background_save();
    return ctx.reply.simple_string("Background saving scheduled");
  }
  const std::string error = rdb->background_save();
  if (!error.empty()) return ctx.error("ERR " + error);
  ctx.reply.simple_string("Background saving started");
}

void lastsave_command(CommandContext& ctx) {
  RdbService* rdb = ctx.server.rdb();
  ctx.reply.integer(rdb != nullptr ? rdb->last_save_time_s() : 0);
}

constexpr CommandSpec kPersistenceCommands[] = {
    {"dump", 2, kReadonly, 1, 1, 1, kAclKeyspace, dump_command, "generic", "2.6.0",
     "Return a serialized version of the value stored at the specified key.",
     "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of "
     "Redis objects composing the value and M their average size. For small string values the "
     "time complexity is thus O(1)+O(1*M) where M is small, so simply O(1)."},
    {"restore", -4, kWrite | kDenyOom, 1, 1, 1, kAclKeyspace | kAclDangerous, restore_command,
     "generic", "2.6.0",
     "Create a key using the provided serialized value, previously obtained using DUMP.",
     "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, "
     "where N is the number of Redis objects composing the value and M their average size. For "
     "small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply "
     "O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting "
     "values into sorted sets is O(log(N))."},
    {"save", 1, kAdmin | kNoScript | kNoMulti, 0, 0, 0, 0, save_command, "server", "1.0.0",
     "Synchronously save the dataset to disk",
     "O(N) where N is the total number of keys in all databases"},
    {"bgsave", -1, kAdmin | kNoScript, 0, 0, 0, 0, bgsave_command, "server", "1.0.0",
     "Asynchronously save the dataset to disk", "O(1)"},
    {"lastsave", 1, kLoading | kStale | kFast, 0, 0, 0, kAclAdmin | kAclDangerous, lastsave_command,
     "server", "1.0.0", "Get the UNIX time stamp of the last successful save to disk", "O(1)"},
};

}  // namespace

void register_persistence_commands(CommandTable& table) { table.add(kPersistenceCommands); }

}  // namespace keywarden
