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

  // Records `count` changes to the dataset (INFO rdb_changes_since_last_save).
  void dirty(uint64_t count = 1) { server.stats().dirty += count; }
  // Hands this command's effect to the propagation path, in the current database.
  void propagate(std::span<const std::string_view> effect) {
    server.propagator().add(session.db, effect);
  }
  void propagate(std::initializer_list<std::string_view> effect) {
    server.propagator().add(session.db, effect);
  }
  // Propagates the command exactly as the client sent it.
  void propagate_as_received() { propagate(args); }

  // Tells WATCH that a write changed `key` (Redis's signalModifiedKey): every write command
  // calls it for each key whose value, type, existence or deadline it changed, in the database
  // it changed it in. Cheap when nobody watches.
  void key_modified(std::string_view key) { key_modified(db(), key); }
  // Also wakes the clients blocked on the key (see blocking.h).
  void key_modified(Database& database, std::string_view key) {
    if (!server.watches().empty()) server.watches().touch(database, key);
    server.blocking().signal(database.index(), key);
  }
  // Fires keyspace event `event` of class `event_class` (a NotifyClass bit) for `key` in the
  // current database, or in `database`. Handlers call it where Redis 7.0 calls
  // notifyKeyspaceEvent: after the change, once per event, in Redis's order.
  void notify(uint32_t event_class, std::string_view event, std::string_view key) {
    server.notify_keyspace_event(event_class, event, key, session.db);
  }
  void notify(Database& database, uint32_t event_class, std::string_view event,
              std::string_view key) {
    server.notify_keyspace_event(event_class, event, key, database.index());
  }

  // Before a database loses all its keys (FLUSHDB, FLUSHALL) or, with `replaced_with`, gets
  // another's (SWAPDB, once per side, before swapping).
  void database_replaced(Database& emptied, Database* replaced_with = nullptr) {
    server.watches().touch_all_in_db(emptied, replaced_with, now_ms);
    if (replaced_with != nullptr) server.blocking().signal_all_in_db(emptied.index());
  }

  // Blocking commands (BLPOP, BZPOPMIN…). A command may block only when it runs on its own:
  // inside MULTI/EXEC or a script it answers as if its timeout had passed.
  bool may_block() const { return !session.transaction.in_multi() && !session.script_client; }
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
  bool blocked_again() const { return blocked_again_; }
  // The keys a blocking command should try to serve from: all of `keys` on a first run; only
  // the key that became ready when the command runs again for a blocked client.
  std::span<const std::string_view> keys_to_serve(std::span<const std::string_view> keys) {
    if (!session.blocked.blocked() || session.blocked.serving_key().empty()) return keys;
    serving_key_ = session.blocked.serving_key();
    return {&serving_key_, 1};
  }

 private:
  // Sets the access clock that entries created by this command start with.
  void stamp_new_entries();
  void touch_if_allowed(Entry* entry, uint8_t flags);

  bool failed_ = false;
  bool blocked_again_ = false;
  std::string_view serving_key_;
};

}  // namespace keywarden
