// MULTI/EXEC/WATCH state, as Redis 7.0 keeps it (multi.c).
//
// Each client owns a ClientTransaction: whether it is inside MULTI, the commands queued since
// (arguments copied, because the query buffer they came from is consumed; a big argument the
// connection read into a block of its own is kept in that block instead, so that a queued SET
// of a 64 MB value still stores it without a copy), the two abort
// flags (an error while queueing; a watched key touched), and the keys it watches as
// (db, key) pairs. The server owns one WatchRegistry: per database, key → the clients watching
// it, so that a write finds the watchers of its key without walking every client.
//
// What counts as a change is what Redis 7.0.15 counts (checked against it): every write a
// command makes to the key (value, type, existence, deadline), its deletion by expiry, its
// deadline passing before EXEC even if nothing deleted it yet, and FLUSHDB/FLUSHALL/SWAPDB when
// the key exists on either side. A key that was already expired (but still stored) when
// WATCHed is logically absent: its deletion by expiry changes nothing.
//
// Invariants: a client appears in the registry's list of (db, key) exactly when its own
// watched list holds (db, key); a client flagged dirty by a touch watches nothing any more
// (Redis drops the watches at once: the outcome of EXEC is already decided).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/string_block.h"

namespace keywarden {

struct Command;
class Database;
class Keyspace;
class WatchRegistry;

struct QueuedCommand {
  Command* command;
  // Copied arguments; empty at the index of an owned one.
  std::vector<std::string> args;
  // Big arguments kept in the blocks they were read into (see OwnedArgument): EXEC hands them
  // to the command, which may keep one as a value.
  std::vector<OwnedArgument> owned;

  // Every argument in order, viewing `args` and the owned blocks.
  std::vector<std::string_view> views() const;
};

struct WatchedKey {
  int db;
  std::string key;
  // The key was stored but past its deadline when WATCHed (or became so through SWAPDB).
  bool expired_at_watch;
};

class ClientTransaction {
 public:
  ClientTransaction() = default;
  ClientTransaction(const ClientTransaction&) = delete;
  ClientTransaction& operator=(const ClientTransaction&) = delete;
  ~ClientTransaction() { unwatch_all(); }

  bool in_multi() const { return in_multi_; }
  // An error was replied while queueing: EXEC answers EXECABORT.
  bool dirty_exec() const { return dirty_exec_; }
  // A watched key was touched: EXEC answers a null array.
  bool dirty_cas() const { return dirty_cas_; }
  // Commands queued so far (CLIENT LIST multi=); none are kept once the transaction is dirty.
  size_t queued_count() const { return queue_.size(); }
  // EXEC runs them in place: they stay queued (and counted) until it ends, as in Redis.
  std::vector<QueuedCommand>& queue() { return queue_; }
  const std::vector<QueuedCommand>& queue() const { return queue_; }
  const std::vector<WatchedKey>& watched() const { return watched_; }
  // Bytes held by the queued arguments and the watch records (CLIENT LIST multi-mem=).
  size_t memory_overhead() const;

  void begin() { in_multi_ = true; }
  // Marks the transaction aborted by a queueing error (Redis's flagTransaction).
  void flag_error() {
    if (in_multi_) dirty_exec_ = true;
  }
  // Copies the arguments, except the owned ones whose blocks it takes.
  void queue(Command* command, std::span<const std::string_view> args, OwnedArguments owned);
  // Leaves MULTI, drops the queue and both flags, unwatches everything (discardTransaction).
  void discard();

  // WATCH of one key in `db`; `expired_now` tells whether the key is stored but past its
  // deadline. Does nothing when the key is already watched in that db.
  void watch(WatchRegistry& registry, int db, std::string_view key, bool expired_now);
  void unwatch_all();
  void clear_dirty_cas() { dirty_cas_ = false; }
  // True when a key watched while alive is now stored but past its deadline: EXEC fails.
  bool watched_key_expired(Keyspace& keyspace, int64_t now_ms) const;

 private:
  friend class WatchRegistry;
  WatchedKey* find_watched(int db, std::string_view key);

  bool in_multi_ = false;
  bool dirty_exec_ = false;
  bool dirty_cas_ = false;
  std::vector<QueuedCommand> queue_;
  size_t queued_arg_bytes_ = 0;  // argument bytes plus a pointer per argument, queue_'s
  std::vector<WatchedKey> watched_;
  WatchRegistry* registry_ = nullptr;
};

class WatchRegistry {
 public:
  // Whether any client watches anything: writes test this first and stop.
  bool empty() const { return watch_count_ == 0; }

  // A write or an expiry changed `key` in `database` (Redis's touchWatchedKey): its watchers
  // become dirty, except those that watched it already expired and now find it gone.
  void touch(Database& database, std::string_view key);
  // `emptied` loses all its keys (FLUSHDB, FLUSHALL) or, with `replaced_with`, gets that
  // database's keys (SWAPDB, called for both sides before the swap): watchers of a key stored
  // on either side become dirty, unless it is expired (at `now_ms`) before and after
  // (touchAllWatchedKeysInDb).
  void touch_all_in_db(Database& emptied, Database* replaced_with, int64_t now_ms);

 private:
  friend class ClientTransaction;
  using Watchers = std::vector<ClientTransaction*>;
  using KeyMap = std::unordered_map<std::string, Watchers>;

  void add(int db, std::string_view key, ClientTransaction* client);
  void remove(int db, const std::string& key, ClientTransaction* client);
  static void mark_dirty(ClientTransaction* client);

  std::vector<KeyMap> by_db_;
  size_t watch_count_ = 0;
};

}  // namespace keywarden
