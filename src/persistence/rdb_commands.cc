// The persistence command family: DUMP and RESTORE (values in the RDB serialization, with the
// 2-byte RDB version and CRC64 footer Redis puts after them), MIGRATE (DUMP here, RESTORE on
// the target), SAVE, BGSAVE and LASTSAVE.
//
// MIGRATE works as Redis 7.0's: it sends, in one write, AUTH (or AUTH with a user name, for
// AUTH2) when given, SELECT when the cached connection last selected another database, and one
// RESTORE key ttl payload [REPLACE] per key still alive; then reads the replies in order. A key
// the target acknowledged is deleted here (unless COPY) and the deletions propagate as one DEL.
// The first error the target sends is the reply ("Target instance replied with error: …").
// A socket error before any reply retries once on a fresh connection, unless it was a timeout;
// otherwise the reply is -IOERR. The blocking I/O is bounded by the timeout
// (migrate_socket.h).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "commands/context.h"
#include "commands/errors.h"
#include "commands/notifications.h"
#include "common/ascii.h"
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
      ctx.changed(key, kNotifyGeneric, "del");
    }
    return ctx.reply.simple_string("OK");
  }
  Entry* entry = db.add(key, std::move(value), ttl != 0 ? ttl : kNoExpiry);
  ctx.created(key);
  std::vector<std::string_view> effect(ctx.args.begin(), ctx.args.end());
  std::string absolute;
  if (ttl != 0) {
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
  ctx.changed(key, kNotifyGeneric, "restore");
  ctx.reply.simple_string("OK");
}

// Appends one RESP bulk string.
void append_bulk(std::string& out, std::string_view bytes) {
  out += '$';
  out += std::to_string(bytes.size());
  out += "\r\n";
  out.append(bytes);
  out += "\r\n";
}

void append_command(std::string& out, std::initializer_list<std::string_view> args) {
  out += '*';
  out += std::to_string(args.size());
  out += "\r\n";
  for (std::string_view arg : args) append_bulk(out, arg);
}

void migrate_command(CommandContext& ctx) {
  bool copy = false, replace = false;
  std::string_view username, password;
  bool has_password = false, has_username = false;
  size_t first_key = 3, key_count = 1;
  for (size_t i = 6; i < ctx.args.size(); ++i) {
    const std::string_view option = ctx.args[i];
    const size_t more = ctx.args.size() - 1 - i;
    if (equals_ignore_case(option, "copy")) {
      copy = true;
    } else if (equals_ignore_case(option, "replace")) {
      replace = true;
    } else if (equals_ignore_case(option, "auth")) {
      if (more < 1) return ctx.error(errors::kSyntax);
      password = ctx.args[++i];
      has_password = true;
    } else if (equals_ignore_case(option, "auth2")) {
      if (more < 2) return ctx.error(errors::kSyntax);
      username = ctx.args[++i];
      password = ctx.args[++i];
      has_password = has_username = true;
    } else if (equals_ignore_case(option, "keys")) {
      if (!ctx.args[3].empty()) return ctx.error(errors::kMigrateKeysNeedEmptyKey);
      first_key = i + 1;
      key_count = ctx.args.size() - i - 1;
      break;
    } else {
      return ctx.error(errors::kSyntax);
    }
  }
  int64_t timeout_ms, db_index;
  if (!parse_int64(ctx.args[5], &timeout_ms) || !parse_int64(ctx.args[4], &db_index)) {
    return ctx.error(errors::kNotInteger);
  }
  if (timeout_ms <= 0) timeout_ms = 1000;

  // Keys missing (or expired) now are left out; with none left there is nothing to do.
  std::vector<std::string_view> keys;
  for (size_t i = 0; i < key_count; ++i) {
    if (ctx.lookup_read(ctx.args[first_key + i]) != nullptr) keys.push_back(ctx.args[first_key + i]);
  }
  if (keys.empty()) return ctx.reply.simple_string("NOKEY");

  RdbService* rdb = ctx.server.services().find<RdbService>();
  if (rdb == nullptr) return ctx.error("ERR persistence is not available");
  const std::string_view host = ctx.args[1], port = ctx.args[2];
  MigrateConnections& connections = rdb->migrate_connections();
  const int64_t now_s = ctx.server.clock().wall_ms() / 1000;
  bool may_retry = true;
  for (;;) {
    MigrateConnection* target = connections.get(host, port, timeout_ms, now_s);
    if (target == nullptr) return ctx.error(errors::kMigrateConnect);

    std::string request;
    if (has_password) {
      if (has_username) {
        append_command(request, {"AUTH", username, password});
      } else {
        append_command(request, {"AUTH", password});
      }
    }
    const bool select = target->last_db != db_index;
    if (select) append_command(request, {"SELECT", format_int64(db_index)});
    std::vector<std::string_view> sent;
    for (std::string_view key : keys) {
      const Entry* entry = ctx.db().find_raw(key);
      if (entry == nullptr) continue;
      int64_t ttl = 0;
      if (entry->has_expiry()) {
        ttl = ctx.db().deadline_of(entry) - ctx.now_ms;
        if (ttl < 0) continue;
        if (ttl < 1) ttl = 1;
      }
      sent.push_back(key);
      request += replace ? "*5\r\n" : "*4\r\n";
      append_bulk(request, "RESTORE");
      append_bulk(request, key);
      append_bulk(request, format_int64(ttl));
      append_bulk(request, encode_dump_payload(entry->value));
      if (replace) append_bulk(request, "REPLACE");
    }

    bool write_error = false, timed_out = false, socket_error = false, error_from_target = false;
    std::string auth_reply, select_reply, restore_reply;
    std::vector<std::string_view> deleted;
    size_t replies = 0;
    auto failed = [&](SyncStatus status) {
      if (status == SyncStatus::kTimeout) timed_out = true;
      return status != SyncStatus::kOk;
    };
    // Redis writes in 64 KiB pieces, each bounded by the timeout.
    constexpr size_t kChunk = 64 * 1024;
    for (size_t at = 0; at < request.size() && !write_error; at += kChunk) {
      write_error = failed(target->write_all(
          std::string_view(request).substr(at, kChunk), timeout_ms));
    }
    bool retry_now = write_error ||
                     (has_password && failed(target->read_line(&auth_reply, timeout_ms))) ||
                     (select && failed(target->read_line(&select_reply, timeout_ms)));
    if (!retry_now) {
      for (; replies < sent.size(); ++replies) {
        if (failed(target->read_line(&restore_reply, timeout_ms))) {
          socket_error = true;
          break;
        }
        const bool auth_failed = has_password && auth_reply.starts_with('-');
        const bool select_failed = select && select_reply.starts_with('-');
        if (auth_failed || select_failed || restore_reply.starts_with('-')) {
          if (!error_from_target) {
            // The target's database is unknown after an error: SELECT again next time.
            target->last_db = -1;
            const std::string& text =
                auth_failed ? auth_reply : (select_failed ? select_reply : restore_reply);
            ctx.error(std::string(errors::kMigrateTargetError) + text.substr(1));
            error_from_target = true;
          }
        } else if (!copy) {
          if (Entry* entry = ctx.db().find_raw(sent[replies])) {
            ctx.db().remove(entry, ctx.server.settings().lazyfree_lazy_server_del);
          }
          ctx.changed(sent[replies], kNotifyGeneric, "del");
          deleted.push_back(sent[replies]);
        }
      }
      // Nothing was processed yet: a dropped cached connection is worth one more try.
      retry_now = !error_from_target && socket_error && replies == 0 && may_retry && !timed_out;
    }
    if (!retry_now) {
      if (socket_error) connections.close(host, port);
      if (!deleted.empty()) {
        std::vector<std::string_view> effect{"DEL"};
        effect.insert(effect.end(), deleted.begin(), deleted.end());
        ctx.propagate(effect);
      }
      if (!error_from_target && !socket_error) {
        target->last_db = db_index;
        return ctx.reply.simple_string("OK");
      }
      if (error_from_target) return;
      may_retry = false;
    }
    // A socket error: the connection goes, and one retry is made unless it timed out.
    connections.close(host, port);
    if (!timed_out && may_retry) {
      may_retry = false;
      continue;
    }
    return ctx.error(write_error ? errors::kMigrateWriting : errors::kMigrateReading);
  }
}

// MIGRATE's keys: the key argument, or those after KEYS (for COMMAND GETKEYS and ACLs). The
// options before KEYS are walked as Redis 7.0 walks them, stepping over the value of AUTH and
// the two of AUTH2, so that a password or user name spelt "keys" is not taken for the keyword.
// Anything else (an unknown option, a value missing at the end) is left for the command to
// reject: the walk just goes on, and without KEYS the key argument is the answer. KEYS with a
// non-empty key argument is a syntax error of the command, and names no key.
std::vector<int> migrate_keys(std::span<const std::string_view> args) {
  for (size_t i = 6; i < args.size(); ++i) {
    if (equals_ignore_case(args[i], "auth")) {
      i += 1;
    } else if (equals_ignore_case(args[i], "auth2")) {
      i += 2;
    } else if (equals_ignore_case(args[i], "keys")) {
      std::vector<int> positions;
      if (!args[3].empty()) return positions;
      for (size_t key = i + 1; key < args.size(); ++key) {
        positions.push_back(static_cast<int>(key));
      }
      return positions;
    }
  }
  return args.size() > 3 ? std::vector<int>{3} : std::vector<int>{};
}

void save_command(CommandContext& ctx) {
  RdbService* rdb = ctx.server.services().find<RdbService>();
  if (rdb == nullptr) return ctx.error("ERR persistence is not available");
  if (rdb->bgsave_in_progress()) return ctx.error(errors::kBgsaveInProgress);
  if (!rdb->save().empty()) return ctx.error("ERR");
  ctx.reply.simple_string("OK");
}

void bgsave_command(CommandContext& ctx) {
  RdbService* rdb = ctx.server.services().find<RdbService>();
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
  RdbService* rdb = ctx.server.services().find<RdbService>();
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
    {"migrate", -6, kWrite | kMovableKeys, 3, 3, 1, kAclKeyspace | kAclDangerous, migrate_command,
     "generic", "2.6.0", "Atomically transfer a key from a Redis instance to another one.",
     "This command actually executes a DUMP+DEL in the source instance, and a RESTORE in the "
     "target instance. See the pages of these commands for time complexity. Also an O(N) data "
     "transfer between the two instances is performed.",
     {}, migrate_keys},
    {"save", 1, kAdmin | kNoScript | kNoAsyncLoading | kNoMulti, 0, 0, 0, 0, save_command, "server", "1.0.0",
     "Synchronously save the dataset to disk",
     "O(N) where N is the total number of keys in all databases"},
    {"bgsave", -1, kAdmin | kNoScript | kNoAsyncLoading, 0, 0, 0, 0, bgsave_command, "server", "1.0.0",
     "Asynchronously save the dataset to disk", "O(1)"},
    {"lastsave", 1, kLoading | kStale | kFast, 0, 0, 0, kAclAdmin | kAclDangerous, lastsave_command,
     "server", "1.0.0", "Get the UNIX time stamp of the last successful save to disk", "O(1)"},
};

}  // namespace

void register_persistence_commands(CommandTable& table) { table.add(kPersistenceCommands); }

}  // namespace keywarden
