// Keyspace commands: DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, RANDOMKEY, RENAME, RENAMENX, COPY,
// MOVE, SWAPDB, DBSIZE, FLUSHDB, FLUSHALL, TOUCH and OBJECT.
//
// Replies, errors, statistics and propagation follow Redis 7.0 (db.c, object.c): writes that
// changed something propagate verbatim, and a lookup that finds a key past its deadline deletes
// it first (propagated as DEL by the keyspace listener, ahead of the command's own effect).
#include <algorithm>
#include <climits>
#include <deque>
#include <string>
#include <vector>

#include "commands/context.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "commands/scan_options.h"
#include "common/ascii.h"
#include "common/glob.h"
#include "common/number.h"

namespace keywarden {
namespace {

// RANDOMKEY draws this many keys before it clears out the due keys of the database at once.
constexpr int kRandomKeyDraws = 100;
// Redis shares the integers 0..9999 between keys (OBJ_SHARED_INTEGERS); OBJECT REFCOUNT reports
// a shared object's refcount as INT_MAX.
constexpr int64_t kSharedIntegers = 10000;
constexpr int64_t kSharedRefcount = INT_MAX;

// A database index as getIntFromObjectOrReply reads it (MOVE, COPY … DB): an integer, then
// within int.
bool parse_int_argument(CommandContext& ctx, std::string_view text, int* out) {
  int64_t value;
  if (!parse_int64(text, &value)) {
    ctx.error(errors::kNotInteger);
    return false;
  }
  if (value < INT_MIN || value > INT_MAX) {
    ctx.error(errors::kIntOutOfRange);
    return false;
  }
  *out = static_cast<int>(value);
  return true;
}

bool valid_db_index(const CommandContext& ctx, int64_t index) {
  return index >= 0 && index < ctx.server.keyspace().database_count();
}

// --- DEL, UNLINK, EXISTS, TYPE, TOUCH ------------------------------------------------------

void delete_keys(CommandContext& ctx, bool lazy) {
  Database& db = ctx.db();
  int64_t deleted = 0;
  for (size_t i = 1; i < ctx.args.size(); ++i) {
    Entry* entry = db.lookup(ctx.args[i], ctx.now_ms);
    if (entry == nullptr) continue;
    db.remove(entry, lazy);
    ctx.changed(db, ctx.args[i], kNotifyGeneric, "del");
    ++deleted;
  }
  ctx.reply.integer(deleted);
}

void del_command(CommandContext& ctx) {
  delete_keys(ctx, ctx.server.settings().lazyfree_lazy_user_del);
}

void unlink_command(CommandContext& ctx) { delete_keys(ctx, true); }

void exists_command(CommandContext& ctx) {
  int64_t found = 0;
  for (size_t i = 1; i < ctx.args.size(); ++i) {
    if (ctx.lookup_read(ctx.args[i], CommandContext::kLookupNoTouch) != nullptr) ++found;
  }
  ctx.reply.integer(found);
}

void type_command(CommandContext& ctx) {
  Entry* entry = ctx.lookup_read(ctx.args[1], CommandContext::kLookupNoTouch);
  ctx.reply.simple_string(entry == nullptr ? "none" : value_type_name(entry->value.type()));
}

void touch_command(CommandContext& ctx) {
  int64_t touched = 0;
  for (size_t i = 1; i < ctx.args.size(); ++i) {
    if (ctx.lookup_read(ctx.args[i], CommandContext::kLookupTouchAlways) != nullptr) ++touched;
  }
  ctx.reply.integer(touched);
}

// --- KEYS, SCAN, RANDOMKEY, DBSIZE ---------------------------------------------------------

// Like Redis, KEYS hides keys past their deadline but leaves deleting them to others: it walks
// the table, which must not change under the walk.
void keys_command(CommandContext& ctx) {
  const std::string_view pattern = ctx.args[1];
  Database& db = ctx.db();
  const int64_t now_ms = ctx.now_ms;
  const bool all = pattern == "*";
  DeferredLength header = ctx.reply.begin_deferred();
  size_t count = 0;
  if (!all && glob_is_literal(pattern)) {
    // A pattern without special bytes names exactly one key.
    const Entry* entry = db.find_raw(pattern);
    if (entry != nullptr && !db.is_expired(entry, now_ms)) {
      ctx.reply.bulk(entry->key());
      count = 1;
    }
  } else {
    db.for_each([&](const Entry* entry) {
      if ((all || glob_match(pattern, entry->key())) && !db.is_expired(entry, now_ms)) {
        ctx.reply.bulk(entry->key());
        ++count;
      }
      return !ctx.reply.discarding();  // a client closed for its output limit stops the walk
    });
  }
  ctx.reply.end_deferred_array(header, count);
}

void scan_command(CommandContext& ctx) {
  uint64_t cursor;
  if (!parse_scan_cursor(ctx.args[1], &cursor)) return ctx.error(errors::kCursor);

  ScanOptions options;
  if (!parse_scan_options(ctx, 2, /*allow_type=*/true, &options)) return;
  const int64_t count = options.count;
  const std::string_view pattern = options.pattern;
  const bool use_pattern = options.use_pattern;
  const std::string_view type_name = options.type_name;
  const bool use_type = options.use_type;

  // Collect first, filter after, as Redis does: the filters may delete expired keys, which the
  // table's scan step must not see happen under it. Like Redis, give up after COUNT * 10 steps
  // so that a sparse table cannot make one call walk it all.
  Database& db = ctx.db();
  std::vector<Entry*> batch;
  batch.reserve(static_cast<size_t>(std::min<int64_t>(count, 1024)));
  int64_t steps_left = count > INT64_MAX / 10 ? INT64_MAX : count * 10;
  do {
    cursor = db.scan(cursor, [&batch](Entry* entry) { batch.push_back(entry); });
  } while (cursor != 0 && steps_left-- > 0 && batch.size() < static_cast<uint64_t>(count));

  // Survivors point into the table (each filter step can only delete the key it examines);
  // `gone` keeps the names of keys returned although deleted (see TYPE none below).
  std::vector<std::string_view> keys;
  keys.reserve(batch.size());
  std::deque<std::string> gone;
  for (Entry* entry : batch) {
    if (use_pattern && !glob_match(pattern, entry->key())) continue;
    if (use_type) {
      // Redis checks the type through a read lookup: it counts a hit or a miss and deletes an
      // expired key, whose type then reads "none". So TYPE none returns the names of keys that
      // had just expired; kept because clients can observe it.
      if (db.is_expired(entry, ctx.now_ms)) {
        std::string key(entry->key());  // the lookup is about to delete the entry
        ctx.lookup_read(key, CommandContext::kLookupNoTouch);
        if (equals_ignore_case("none", type_name)) {
          keys.push_back(gone.emplace_back(std::move(key)));
        }
        continue;
      }
      ctx.lookup_read(entry->key(), CommandContext::kLookupNoTouch);
      if (!equals_ignore_case(value_type_name(entry->value.type()), type_name)) continue;
    }
    if (db.is_expired(entry, ctx.now_ms)) {
      db.expire(entry);
      continue;
    }
    keys.push_back(entry->key());
  }

  char digits[kMaxUint64Chars];
  ctx.reply.array_header(2);
  ctx.reply.bulk(std::string_view(digits, uint64_to_chars(cursor, digits)));
  ctx.reply.array_header(keys.size());
  for (std::string_view key : keys) ctx.reply.bulk(key);
}

// Draws until a live key turns up, deleting the expired ones drawn, as Redis does. A database
// made mostly of expired keys would make that a long walk of single deletions; past a fixed
// number of draws the due keys are taken from the front of the expiry index instead (the work
// the active cycle would do anyway), after which any draw is a live key. While CLIENT PAUSE
// holds expiry nothing can be deleted: past that number of draws the key drawn is returned even
// if expired (Redis 7.0 loops for ever there; later versions return it, as replicas do).
void randomkey_command(CommandContext& ctx) {
  Database& db = ctx.db();
  std::mt19937_64& rng = ctx.server.keyspace().rng();
  for (int draws = 0;; ++draws) {
    if (draws >= kRandomKeyDraws && db.expiry_held()) {
      Entry* entry = db.random_entry(rng);
      return entry == nullptr ? ctx.reply.null() : ctx.reply.bulk(entry->key());
    }
    if (draws == kRandomKeyDraws) {
      ExpiryIndex& index = db.expiry_index();
      while (!index.empty() && index.front_deadline() < ctx.now_ms) db.expire(index.front());
    }
    Entry* entry = db.random_entry(rng);
    if (entry == nullptr) return ctx.reply.null();
    if (db.is_expired(entry, ctx.now_ms)) {
      db.expire(entry);
      continue;
    }
    return ctx.reply.bulk(entry->key());
  }
}

void dbsize_command(CommandContext& ctx) {
  ctx.reply.integer(static_cast<int64_t>(ctx.db().size()));
}

// --- RENAME, RENAMENX, COPY, MOVE, SWAPDB --------------------------------------------------

void rename_generic(CommandContext& ctx, bool only_if_new) {
  const std::string_view source = ctx.args[1];
  const std::string_view target = ctx.args[2];
  Entry* entry = ctx.lookup_write(source);
  if (entry == nullptr) return ctx.error(errors::kNoSuchKey);
  if (source == target) {
    // Nothing changes, but the key had to exist.
    return only_if_new ? ctx.reply.integer(0) : ctx.reply.simple_string("OK");
  }
  Database& db = ctx.db();
  if (Entry* existing = ctx.lookup_write(target); existing != nullptr) {
    if (only_if_new) return ctx.reply.integer(0);
    db.remove(existing, ctx.server.settings().lazyfree_lazy_server_del);
  }
  // The entry itself moves, so its deadline and access clock travel with it.
  db.move_entry(entry, db, target);
  ctx.created(db, target);
  // One change for Redis, announced on both names.
  ctx.changed(db, source, kNotifyGeneric, "rename_from");
  ctx.changed(db, target, kNotifyGeneric, "rename_to", 0);
  if (only_if_new) return ctx.reply.integer(1);
  ctx.reply.simple_string("OK");
}

void rename_command(CommandContext& ctx) { rename_generic(ctx, false); }
void renamenx_command(CommandContext& ctx) { rename_generic(ctx, true); }

void copy_command(CommandContext& ctx) {
  bool replace = false;
  int target_index = ctx.session.db;
  for (size_t i = 3; i < ctx.args.size(); ++i) {
    if (equals_ignore_case(ctx.args[i], "REPLACE")) {
      replace = true;
    } else if (equals_ignore_case(ctx.args[i], "DB") && i + 1 < ctx.args.size()) {
      if (!parse_int_argument(ctx, ctx.args[i + 1], &target_index)) return;
      if (!valid_db_index(ctx, target_index)) return ctx.error(errors::kDbIndexOutOfRange);
      ++i;
    } else {
      return ctx.error(errors::kSyntax);
    }
  }
  const std::string_view key = ctx.args[1];
  const std::string_view new_key = ctx.args[2];
  if (target_index == ctx.session.db && key == new_key) return ctx.error(errors::kSameObject);

  Entry* source = ctx.lookup_read(key);
  if (source == nullptr) return ctx.reply.integer(0);
  Database& target = ctx.db(target_index);
  if (Entry* existing = ctx.lookup_write(target, new_key); existing != nullptr) {
    if (!replace) return ctx.reply.integer(0);
    target.remove(existing, ctx.server.settings().lazyfree_lazy_server_del);
  }
  // A copy keeps the value's encoding and the key's deadline; as a new object it starts a
  // fresh access clock.
  Value duplicate = source->value;
  const int64_t deadline = ctx.db().deadline_of(source);
  target.add(new_key, std::move(duplicate), deadline);
  ctx.created(target, new_key);
  ctx.changed(target, new_key, kNotifyGeneric, "copy_to");
  ctx.reply.integer(1);
}

void move_command(CommandContext& ctx) {
  int target_index;
  if (!parse_int_argument(ctx, ctx.args[2], &target_index)) return;
  if (!valid_db_index(ctx, target_index)) return ctx.error(errors::kDbIndexOutOfRange);
  if (target_index == ctx.session.db) return ctx.error(errors::kSameObject);

  const std::string_view key = ctx.args[1];
  Entry* entry = ctx.lookup_write(key);
  if (entry == nullptr) return ctx.reply.integer(0);
  Database& target = ctx.db(target_index);
  if (ctx.lookup_write(target, key) != nullptr) return ctx.reply.integer(0);
  ctx.db().move_entry(entry, target, key);
  ctx.created(target, key);
  // One change for Redis, announced in both databases.
  ctx.changed(ctx.db(), key, kNotifyGeneric, "move_from");
  ctx.changed(target, key, kNotifyGeneric, "move_to", 0);
  ctx.reply.integer(1);
}

void swapdb_command(CommandContext& ctx) {
  int64_t first, second;
  if (!parse_int64(ctx.args[1], &first) || first < INT_MIN || first > INT_MAX) {
    return ctx.error(errors::kInvalidFirstDbIndex);
  }
  if (!parse_int64(ctx.args[2], &second) || second < INT_MIN || second > INT_MAX) {
    return ctx.error(errors::kInvalidSecondDbIndex);
  }
  if (!valid_db_index(ctx, first) || !valid_db_index(ctx, second)) {
    return ctx.error(errors::kDbIndexOutOfRange);
  }
  // Swapping a database with itself changes nothing but, as in Redis, still counts as a write.
  if (first != second) {
    Database& one = ctx.db(static_cast<int>(first));
    Database& other = ctx.db(static_cast<int>(second));
    ctx.database_replaced(one, &other);
    ctx.database_replaced(other, &one);
  }
  ctx.server.keyspace().swap(static_cast<int>(first), static_cast<int>(second));
  ctx.changed_without_key();
  ctx.reply.simple_string("OK");
}

// --- FLUSHDB, FLUSHALL ---------------------------------------------------------------------

// [ASYNC|SYNC]; without either, lazyfree-lazy-user-flush decides.
bool parse_flush_mode(CommandContext& ctx, bool* async) {
  if (ctx.args.size() == 2 && equals_ignore_case(ctx.args[1], "SYNC")) {
    *async = false;
  } else if (ctx.args.size() == 2 && equals_ignore_case(ctx.args[1], "ASYNC")) {
    *async = true;
  } else if (ctx.args.size() > 1) {
    ctx.error(errors::kSyntax);
    return false;
  } else {
    *async = ctx.server.settings().lazyfree_lazy_user_flush;
  }
  return true;
}

// Both flushes propagate even when there was nothing to remove, so that a replica or an AOF
// replay ends up empty whatever it held.
void flushdb_command(CommandContext& ctx) {
  bool async;
  if (!parse_flush_mode(ctx, &async)) return;
  ctx.database_replaced(ctx.db());
  ctx.keys_flushed();
  ctx.changed_without_key(ctx.db().clear(async));
  ctx.propagate_as_received();
  ctx.reply.simple_string("OK");
}

void flushall_command(CommandContext& ctx) {
  bool async;
  if (!parse_flush_mode(ctx, &async)) return;
  Keyspace& keyspace = ctx.server.keyspace();
  size_t removed = 0;
  for (int i = 0; i < keyspace.database_count(); ++i) {
    ctx.database_replaced(keyspace.db(i));
    removed += keyspace.db(i).clear(async);
  }
  ctx.keys_flushed();
  // Redis 7.0 counts the keys removed, no more (when save points are configured it also
  // rewrites the RDB snapshot; that belongs to the persistence layer), and propagates the
  // command even when there was nothing to remove.
  ctx.changed_without_key(removed);
  ctx.propagate_as_received();
  ctx.reply.simple_string("OK");
}

// --- OBJECT --------------------------------------------------------------------------------

// OBJECT looks keys up without touching them, but counts hits and misses; a missing key is a
// null reply.
Entry* object_lookup(CommandContext& ctx) {
  Entry* entry = ctx.lookup_read(ctx.args[2], CommandContext::kLookupNoTouch |
                                                  CommandContext::kLookupNoNotify);
  if (entry == nullptr) ctx.reply.null();
  return entry;
}

void object_encoding_command(CommandContext& ctx) {
  if (Entry* entry = object_lookup(ctx); entry != nullptr) {
    ctx.reply.bulk(encoding_name(entry->value.encoding()));
  }
}

// Redis keeps one shared object per small integer and reports a shared object's refcount as
// INT_MAX; everything else in the keyspace has a single reference.
void object_refcount_command(CommandContext& ctx) {
  Entry* entry = object_lookup(ctx);
  if (entry == nullptr) return;
  const Value& value = entry->value;
  const bool shared = value.type() == ValueType::kString && value.is_int() &&
                      value.int_value() >= 0 && value.int_value() < kSharedIntegers;
  ctx.reply.integer(shared ? kSharedRefcount : 1);
}

void object_idletime_command(CommandContext& ctx) {
  Entry* entry = object_lookup(ctx);
  if (entry == nullptr) return;
  if (policy_uses_lfu(ctx.server.settings().maxmemory_policy)) {
    return ctx.error(errors::kLfuSelected);
  }
  ctx.reply.integer(access_clock::lru_idle_ms(entry->access_clock, ctx.now_ms) / 1000);
}

void object_freq_command(CommandContext& ctx) {
  Entry* entry = object_lookup(ctx);
  if (entry == nullptr) return;
  const CommandSettings& settings = ctx.server.settings();
  if (!policy_uses_lfu(settings.maxmemory_policy)) return ctx.error(errors::kLfuNotSelected);
  ctx.reply.integer(
      access_clock::lfu_decayed_count(entry->access_clock, ctx.now_ms, settings.lfu_decay_time));
}

void object_help_command(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "ENCODING <key>",
      "    Return the kind of internal representation used in order to store the value",
      "    associated with a <key>.",
      "FREQ <key>",
      "    Return the access frequency index of the <key>. The returned integer is",
      "    proportional to the logarithm of the recent access frequency of the key.",
      "IDLETIME <key>",
      "    Return the idle time of the <key>, that is the approximated number of",
      "    seconds elapsed since the last access to the key.",
      "REFCOUNT <key>",
      "    Return the number of references of the value associated with the specified",
      "    <key>.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply_status_lines(kLines);
}

// --- Table ---------------------------------------------------------------------------------

constexpr CommandSpec kObjectSubcommands[] = {
    {"encoding", 3, kReadonly, 2, 2, 1, kAclKeyspace, object_encoding_command, "generic",
     "2.2.3", "Inspect the internal encoding of a Redis object", "O(1)"},
    {"freq", 3, kReadonly, 2, 2, 1, kAclKeyspace, object_freq_command, "generic", "4.0.0",
     "Get the logarithmic access frequency counter of a Redis object", "O(1)"},
    {"help", 2, kLoading | kStale, 0, 0, 0, kAclKeyspace, object_help_command, "generic",
     "6.2.0", "Show helpful text about the different subcommands", "O(1)"},
    {"idletime", 3, kReadonly, 2, 2, 1, kAclKeyspace, object_idletime_command, "generic",
     "2.2.3", "Get the time since a Redis object was last accessed", "O(1)"},
    {"refcount", 3, kReadonly, 2, 2, 1, kAclKeyspace, object_refcount_command, "generic",
     "2.2.3", "Get the number of references to the value of the key", "O(1)"},
};

constexpr CommandSpec kKeyCommands[] = {
    {"del", -2, kWrite, 1, -1, 1, kAclKeyspace, del_command, "generic", "1.0.0", "Delete a key",
     "O(N) where N is the number of keys that will be removed. When a key to remove holds a "
     "value other than a string, the individual complexity for this key is O(M) where M is the "
     "number of elements in the list, set, sorted set or hash. Removing a single key that holds "
     "a string value is O(1)."},
    {"unlink", -2, kWrite | kFast, 1, -1, 1, kAclKeyspace, unlink_command, "generic", "4.0.0",
     "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non "
     "blocking.",
     "O(1) for each key removed regardless of its size. Then the command does O(N) work in a "
     "different thread in order to reclaim memory, where N is the number of allocations the "
     "deleted objects where composed of."},
    {"exists", -2, kReadonly | kFast, 1, -1, 1, kAclKeyspace, exists_command, "generic",
     "1.0.0", "Determine if a key exists", "O(N) where N is the number of keys to check."},
    {"type", 2, kReadonly | kFast, 1, 1, 1, kAclKeyspace, type_command, "generic", "1.0.0",
     "Determine the type stored at key", "O(1)"},
    {"keys", 2, kReadonly, 0, 0, 0, kAclKeyspace | kAclDangerous, keys_command, "generic",
     "1.0.0", "Find all keys matching the given pattern",
     "O(N) with N being the number of keys in the database, under the assumption that the key "
     "names in the database and the given pattern have limited length."},
    {"scan", -2, kReadonly, 0, 0, 0, kAclKeyspace, scan_command, "generic", "2.8.0",
     "Incrementally iterate the keys space",
     "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
     "the cursor to return back to 0. N is the number of elements inside the collection."},
    {"randomkey", 1, kReadonly, 0, 0, 0, kAclKeyspace, randomkey_command, "generic", "1.0.0",
     "Return a random key from the keyspace", "O(1)"},
    {"rename", 3, kWrite, 1, 2, 1, kAclKeyspace, rename_command, "generic", "1.0.0",
     "Rename a key", "O(1)"},
    {"renamenx", 3, kWrite | kFast, 1, 2, 1, kAclKeyspace, renamenx_command, "generic",
     "1.0.0", "Rename a key, only if the new key does not exist", "O(1)"},
    {"copy", -3, kWrite | kDenyOom, 1, 2, 1, kAclKeyspace, copy_command, "generic", "6.2.0",
     "Copy a key",
     "O(N) worst case for collections, where N is the number of nested items. O(1) for string "
     "values."},
    {"move", 3, kWrite | kFast, 1, 1, 1, kAclKeyspace, move_command, "generic", "1.0.0",
     "Move a key to another database", "O(1)"},
    {"swapdb", 3, kWrite | kFast, 0, 0, 0, kAclKeyspace | kAclDangerous, swapdb_command,
     "server", "4.0.0", "Swaps two Redis databases",
     "O(N) where N is the count of clients watching or blocking on keys from both databases."},
    {"dbsize", 1, kReadonly | kFast, 0, 0, 0, kAclKeyspace, dbsize_command, "server", "1.0.0",
     "Return the number of keys in the selected database", "O(1)"},
    {"flushdb", -1, kWrite, 0, 0, 0, kAclKeyspace | kAclDangerous, flushdb_command, "server",
     "1.0.0", "Remove all keys from the current database",
     "O(N) where N is the number of keys in the selected database"},
    {"flushall", -1, kWrite, 0, 0, 0, kAclKeyspace | kAclDangerous, flushall_command, "server",
     "1.0.0", "Remove all keys from all databases",
     "O(N) where N is the total number of keys in all databases"},
    {"touch", -2, kReadonly | kFast, 1, -1, 1, kAclKeyspace, touch_command, "generic", "3.2.1",
     "Alters the last access time of a key(s). Returns the number of existing keys specified.",
     "O(N) where N is the number of keys that will be touched."},
    {"object", -2, 0, 0, 0, 0, 0, nullptr, "generic", "2.2.3",
     "A container for object introspection commands", "Depends on subcommand.",
     kObjectSubcommands},
};

}  // namespace

void register_key_commands(CommandTable& table) { table.add(kKeyCommands); }

}  // namespace keywarden
