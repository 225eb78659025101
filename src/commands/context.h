// What a command handler works with: its arguments, the reply being built, the calling
// client's session, the server state, and the time snapshot of this execution. Redis reads the
// clock once per command so that every key a command touches is judged against the same
// instant; `now_ms` is that instant.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "commands/client_session.h"
#include "commands/command_table.h"
#include "commands/notifications.h"
#include "commands/server_state.h"
#include "common/string_block.h"
#include "resp/reply_writer.h"
#include "storage/database.h"

namespace keywarden {

class CommandContext {
 public:
  CommandContext(ServerState& server, ClientSession& session, ReplyWriter& reply,
                 std::span<const std::string_view> args, const Command& command, int64_t now_ms)
      : server(server), session(session), reply(reply), args(args), command(command),
        now_ms(now_ms) {
    stamp_new_entries();
  }

  ServerState& server;
  ClientSession& session;
  ReplyWriter& reply;
  std::span<const std::string_view> args;
  const Command& command;
  const int64_t now_ms;
  // Arguments whose bytes the caller holds in blocks the command may keep (big bulks a
  // connection read aside, or kept by EXEC's queue); empty for scripts.
  OwnedArguments owned_arguments;

  // The block holding args[index] when the caller owns one (else an empty block: copy the
  // bytes). Taking it moves the bytes' ownership to the command, whose caller still reads them
  // through args after the handler returns (propagation, MONITOR, the slow log): only a
  // command that stores the block where nothing later in the same command frees it may take
  // it (SET; not MSET, whose later pairs may overwrite the same key).
  StringBlock take_argument(size_t index) {
    for (OwnedArgument& owned : owned_arguments) {
      if (owned.index == index) return std::move(owned.block);
    }
    return {};
  }

  // The service (or shared part) of type T, which the server provided (commands/service.h).
  template <typename T>
  T& service() const {
    return server.services().get<T>();
  }

  Database& db() { return server.keyspace().db(session.db); }
  Database& db(int index) { return server.keyspace().db(index); }

  // Lookup options, as Redis's LOOKUP_* flags.
  enum LookupFlags : uint8_t {
    kLookupNone = 0,
    // Leaves the access clock alone (TYPE, EXISTS, TTL, OBJECT… look without using).
    kLookupNoTouch = 1 << 0,
    // Updates the access clock even for a CLIENT NO-TOUCH client (TOUCH).
    kLookupTouchAlways = 1 << 1,
    // A miss fires no `keymiss` event (OBJECT, MEMORY USAGE look without reading).
    kLookupNoNotify = 1 << 2,
  };

  // Looks a key up for reading: lazy expiry, keyspace hit/miss counters, access time.
  Entry* lookup_read(std::string_view key, uint8_t flags = kLookupNone);
  // The collection of class T (ValueType `type`) at `key`, looked up for reading: null when
  // the key is absent; when it holds another type, replies WRONGTYPE, sets *wrong_type and
  // returns null.
  template <typename T>
  const T* read_collection(std::string_view key, ValueType type, bool* wrong_type) {
    const Entry* entry = lookup_read_typed(key, type, wrong_type);
    return entry == nullptr ? nullptr : &entry->value.as<T>();
  }
  const Entry* lookup_read_typed(std::string_view key, ValueType type, bool* wrong_type);
  // Looks a key up for writing: lazy expiry and access time, no hit/miss counters.
  Entry* lookup_write(std::string_view key, uint8_t flags = kLookupNone) {
    return lookup_write(db(), key, flags);
  }
  Entry* lookup_write(Database& database, std::string_view key, uint8_t flags = kLookupNone);
  // Records an access for the eviction policy: the LRU time, or an LFU counter step.
  void record_access(Entry* entry);

  // An array of status lines: the shape of every HELP reply.
  void reply_status_lines(std::span<const std::string_view> lines) {
    reply.array_header(lines.size());
    for (std::string_view line : lines) reply.simple_string(line);
  }

  // Sends an error reply and counts it (errorstats, the command's failed_calls).
  void error(std::string_view text);
  // The same for an error that a nested command already counted in errorstats (a script
  // passing on redis.call's error): only the command's failed_calls counts it.
  void error_counted_elsewhere(std::string_view text) {
    failed_ = true;
    reply.error(text);
  }
  bool failed() const { return failed_; }

  // --- A write's effects ------------------------------------------------------------------
  //
  // A command that changes the dataset owes four things: WATCH and blocked clients must learn
  // which keys changed, the keyspace events must fire, the change must be counted (INFO
  // rdb_changes_since_last_save, Redis's server.dirty), and its deterministic effect must reach
  // the AOF and the replicas. Handlers do not do these separately: one call records a change to
  // one key and does the first three together, and the fourth is derived from the count, as
  // Redis's call() does it:
  //
  //   - changed(key, class, event[, changes]) for each key a command changed, in Redis's event
  //     order. `changes` is what Redis adds to server.dirty for it (1 by default; the number of
  //     elements for LPUSH, HSET…; 0 for a second key whose change another call counted, as
  //     RENAME's target, or for a command that signals without changing, as LTRIM of nothing).
  //   - created(key) fires the `new` event of a key the change added (Redis fires it from
  //     dbAdd, before the command's own event); also_notify() fires a further event of a change
  //     already recorded (the `del` after `hdel` emptied the hash, SET's `expire`).
  //   - changed_without_key(changes) counts a change that belongs to no key (FLUSHALL, SWAPDB,
  //     FUNCTION LOAD); database_replaced() is their WATCH/blocking signal.
  //
  // When the handler returns, the dispatcher calls finish_effects(): a command that counted a
  // change and recorded no effect of its own is propagated once, exactly as received. A handler
  // whose effect differs from its arguments (SET EX → SET PXAT, EXPIRE → PEXPIREAT, SPOP →
  // SREM, a served BLPOP → LPOP) records it with propagate(), which replaces the verbatim
  // command; propagate_as_received() propagates the command even though it counted no change
  // (PUBLISH; FLUSHDB of an empty database). Commands that run other commands (EXEC, scripts)
  // count nothing themselves: each nested command's effect joins the outer command's batch.
  //
  // The individual steps are private so that no handler can do one without the others.

  // Records a change to `key` in the current database, or in `database`: tells WATCH and the
  // clients blocked on the key, fires `event` of class `event_class` (a NotifyClass bit), and
  // counts `changes`.
  void changed(std::string_view key, uint32_t event_class, std::string_view event,
               uint64_t changes = 1) {
    changed(db(), key, event_class, event, changes);
  }
  void changed(Database& database, std::string_view key, uint32_t event_class,
               std::string_view event, uint64_t changes = 1) {
    key_modified(database, key);
    notify(database, event_class, event, key);
    count_changes(changes);
  }
  // The `new` event of a key this command just added (fired where Redis's dbAdd fires it:
  // before the command's own event, which changed() fires).
  void created(std::string_view key) { notify(kNotifyNew, "new", key); }
  void created(Database& database, std::string_view key) {
    notify(database, kNotifyNew, "new", key);
  }
  // A further event of a change already recorded with changed(): no signal, no count.
  void also_notify(uint32_t event_class, std::string_view event, std::string_view key) {
    notify(event_class, event, key);
  }
  void also_notify(Database& database, uint32_t event_class, std::string_view event,
                   std::string_view key) {
    notify(database, event_class, event, key);
  }
  // A change to `key` that fires no event (Redis's signalModifiedKey and server.dirty++ alone):
  // PFCOUNT's refresh of the cardinality cached in an HLL.
  void changed_without_event(std::string_view key, uint64_t changes = 1) {
    key_modified(db(), key);
    count_changes(changes);
  }
  // A change to no single key (FLUSHDB, FLUSHALL, SWAPDB, FUNCTION LOAD…): counted only.
  void changed_without_key(uint64_t changes = 1) { count_changes(changes); }
  // The WATCH and blocking signal of a whole database: before it loses all its keys (FLUSHDB,
  // FLUSHALL) or, with `replaced_with`, gets another's (SWAPDB, once per side, before
  // swapping). The caller counts the change with changed_without_key().
  void database_replaced(Database& emptied, Database* replaced_with = nullptr) {
    server.watches().touch_all_in_db(emptied, replaced_with, now_ms);
    // A flush serves no list waiter but frees every lock of the database.
    server.blocking().signal_all_in_db(emptied.index());
  }
  // Every key name of the server may have changed (FLUSHDB, FLUSHALL: Redis's
  // signalFlushedDb): clients tracking keys are told "everything", once.
  void keys_flushed() { server.tracking().invalidate_all(); }
  // A key added that Redis neither counts nor announces nor propagates (DEBUG POPULATE): WATCH
  // and blocked clients are still told.
  void changed_uncounted(std::string_view key) { key_modified(db(), key); }
  // Changes counted by this execution (not by the commands it ran nested).
  uint64_t changes() const { return changes_; }

  // Records this command's effect, with relative times made absolute, for the AOF and the
  // replicas, in the current database. Replaces the verbatim propagation; call it once per
  // command of the effect, in order.
  void propagate(std::span<const std::string_view> effect) {
    effect_recorded_ = true;
    server.propagator().add(session.db, effect);
  }
  void propagate(std::initializer_list<std::string_view> effect) {
    effect_recorded_ = true;
    server.propagator().add(session.db, effect);
  }
  // Propagates nothing for this command even though it counted changes: its effects, if any,
  // were recorded with propagate() (XREADGROUP, XCLAIM: Redis's preventCommandPropagation).
  void propagate_nothing() { effect_recorded_ = true; }
  // Propagates the command exactly as the client sent it, whether or not it changed anything
  // (Redis's forceCommandPropagation).
  void propagate_as_received() { propagate(args); }
  // The dispatcher's end of a command: a counted change with no effect of its own recorded
  // propagates the command as received.
  void finish_effects() {
    if (changes_ > 0 && !effect_recorded_) server.propagator().add(session.db, args);
  }

  // Blocking commands (BLPOP, BZPOPMIN…). A command may block only when it runs on its own:
  // inside MULTI/EXEC or a script it answers as if its timeout had passed.
  bool may_block() const {
    // What the server must apply (a primary's stream, the AOF) never waits: it is served
    // at once or gets the timeout reply.
    return !session.transaction.in_multi() && !session.script_client && !session.must_obey;
  }
  // Parks the client on `keys` of its database until one holds a `type` value, then runs this
  // command again; or until `deadline_ms` (0: never), then replies a null array. The handler
  // replies nothing after calling this. When the command is being run again for a client
  // that is already blocked, the client simply stays blocked, keeping its place.
  void block(std::span<const std::string_view> keys, ValueType type, int64_t deadline_ms) {
    if (session.blocked.blocked()) {
      blocked_again_ = true;
      return;
    }
    server.blocking().block(session, command, args, session.db, keys, type, deadline_ms, now_ms);
  }
  // The same, running `args` again instead of the command as received (XREAD's "$" resolved to
  // the ID it stood for when the client blocked).
  void block_with_args(std::span<const std::string_view> keys, ValueType type, int64_t deadline_ms,
                       std::span<const std::string_view> run_args) {
    if (session.blocked.blocked()) {
      blocked_again_ = true;
      return;
    }
    server.blocking().block(session, command, run_args, session.db, keys, type, deadline_ms,
                            now_ms);
  }
  // Parks the client on `key` until any write, deletion, expiry or eviction signals it, then
  // runs this command again (which may block again, keeping its place); or until
  // `deadline_ms` (0: never), then replies a null array. LOCK.ACQUIRE's queue.
  void block_until_key_changes(std::string_view key, int64_t deadline_ms) {
    if (session.blocked.blocked()) {
      blocked_again_ = true;
      return;
    }
    server.blocking().block(session, command, args, session.db, {&key, 1}, ValueType::kHash,
                            deadline_ms, now_ms);
    session.blocked.set_wakes_on_any_change(true);
  }
  // Parks the client without keys until `deadline_ms` (0: never): WAIT, which the replication
  // service runs again as replicas acknowledge (ReplicationHost::retry_blocked_client), and
  // which the deadline runs again once more with timed_out() set, so that it replies itself.
  void block_until_woken(int64_t deadline_ms) {
    if (session.blocked.blocked()) {
      blocked_again_ = true;
      return;
    }
    server.blocking().block(session, command, args, session.db, {}, ValueType::kString,
                            deadline_ms, now_ms);
    session.blocked.set_reply_on_timeout(true);
  }
  // The run of a block_until_woken() command after its deadline passed: it must reply.
  bool timed_out() const { return session.blocked.timing_out(); }
  bool blocked_again() const { return blocked_again_; }
  // The keys a blocking command should try to serve from: all of `keys` on a first run; only
  // the key that became ready when the command runs again for a blocked client.
  std::span<const std::string_view> keys_to_serve(std::span<const std::string_view> keys) {
    if (!session.blocked.blocked() || session.blocked.serving_key().empty()) return keys;
    serving_key_ = session.blocked.serving_key();
    return {&serving_key_, 1};
  }

 private:
  // The steps of changed(), never taken one at a time by a handler.
  // Redis's signalModifiedKey: WATCH, and the clients blocked on the key (see blocking.h).
  // Cheap when nobody watches or waits.
  void key_modified(Database& database, std::string_view key) {
    if (!server.watches().empty()) server.watches().touch(database, key);
    server.blocking().signal(database.index(), key);
    if (server.tracking().active()) server.tracking().invalidate(key);
  }
  // Redis's notifyKeyspaceEvent, in the current database or in `database`.
  void notify(uint32_t event_class, std::string_view event, std::string_view key) {
    server.notify_keyspace_event(event_class, event, key, session.db);
  }
  void notify(Database& database, uint32_t event_class, std::string_view event,
              std::string_view key) {
    server.notify_keyspace_event(event_class, event, key, database.index());
  }
  // Redis's server.dirty, and this execution's own share of it (which decides propagation).
  void count_changes(uint64_t count) {
    server.stats().dirty += count;
    changes_ += count;
  }

  // Sets the access clock that entries created by this command start with.
  void stamp_new_entries();
  void touch_if_allowed(Entry* entry, uint8_t flags);

  bool failed_ = false;
  bool blocked_again_ = false;
  uint64_t changes_ = 0;
  bool effect_recorded_ = false;
  std::string_view serving_key_;
};

}  // namespace keywarden
