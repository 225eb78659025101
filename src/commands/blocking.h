// Clients blocked on keys (BLPOP, BLMOVE, BLMPOP, BZPOPMIN, BZMPOP…), as Redis 7 keeps them.
//
// A blocking command that finds nothing to serve parks its client: the command's arguments are
// copied into the client's BlockedCommand, and the registry lists the client under every key
// it waits on, in arrival order. Any write to a key with waiters marks the key ready (the same
// hook that tells WATCH, CommandContext::key_modified). After the command that wrote it, the
// dispatcher walks the ready keys and runs each waiter's command again, oldest waiter first,
// as long as the key holds the type the waiter wants: the command either serves the client
// (its reply goes out and the client is unblocked) or blocks again, keeping its place. A
// served command can push to another key (BLMOVE), which makes that key ready in turn; the
// walk goes on until no key is ready. Clients whose deadline passes get the command's timeout
// reply from the server's loop.
//
// Lock waiters (LOCK.ACQUIRE) are the exception: they wake on any signal of their key, also
// when a deletion, an expiry or an eviction removed it, since a lock is free when its key is
// gone.
//
// Waking by "a write touched the key and it now holds the right type" reproduces what Redis
// 7.0 observes: a key deleted, renamed away or expired leaves its waiters waiting; a key that
// comes back as the right type (a push, RENAME, MOVE, SWAPDB, a transaction) wakes them; a key
// overwritten with another type keeps them blocked.
//
// Invariant: a client is in the registry's list for (db, key) exactly when it is blocked and
// its BlockedCommand names that key; its deadline is in the deadline index exactly when it is
// blocked with a deadline.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "types/value.h"

namespace keywarden {

struct Command;
struct ClientSession;
class BlockingRegistry;

// What a blocked client is waiting for, and the command to run again once it may proceed.
class BlockedCommand {
 public:
  BlockedCommand() = default;
  BlockedCommand(const BlockedCommand&) = delete;
  BlockedCommand& operator=(const BlockedCommand&) = delete;
  ~BlockedCommand();

  bool blocked() const { return registry_ != nullptr; }
  int db() const { return db_; }
  const Command* command() const { return command_; }
  const std::vector<std::string>& args() const { return args_; }
  const std::vector<std::string>& keys() const { return keys_; }
  ValueType type() const { return type_; }
  // Absolute wall-clock deadline in ms; 0 for none.
  int64_t deadline_ms() const { return deadline_ms_; }
  int64_t blocked_since_ms() const { return since_ms_; }
  // While the command runs again for a ready key: that key (Redis serves a client blocked on
  // several keys from the one that became ready, not from the first in argument order).
  const std::string& serving_key() const { return serving_key_; }
  void set_serving_key(std::string_view key) { serving_key_.assign(key); }
  // The command replies itself when its deadline passes (it runs again with timing_out()),
  // instead of the null array of the commands blocked on keys.
  bool reply_on_timeout() const { return reply_on_timeout_; }
  void set_reply_on_timeout(bool on) { reply_on_timeout_ = on; }
  bool timing_out() const { return timing_out_; }
  void set_timing_out(bool on) { timing_out_ = on; }
  // The command runs again whenever its key is signalled, whatever the key holds, even when it
  // is gone: LOCK.ACQUIRE waits for its key to disappear, the opposite of a list waiter.
  bool wakes_on_any_change() const { return wakes_on_any_change_; }
  void set_wakes_on_any_change(bool on) { wakes_on_any_change_ = on; }

 private:
  friend class BlockingRegistry;

  BlockingRegistry* registry_ = nullptr;
  ClientSession* session_ = nullptr;
  int db_ = 0;
  const Command* command_ = nullptr;
  std::vector<std::string> args_;
  std::vector<std::string> keys_;
  ValueType type_ = ValueType::kList;
  int64_t deadline_ms_ = 0;
  int64_t since_ms_ = 0;
  std::string serving_key_;
  bool reply_on_timeout_ = false;
  bool timing_out_ = false;
  bool wakes_on_any_change_ = false;
  std::multimap<int64_t, ClientSession*>::iterator deadline_entry_;
};

class BlockingRegistry {
 public:
  struct ReadyKey {
    int db;
    std::string key;
  };

  // Parks `session` (not already blocked) on `keys` of database `db` until one holds a `type`
  // value, or until `deadline_ms` (0: forever). `args` is the command to run again.
  void block(ClientSession& session, const Command& command,
             std::span<const std::string_view> args, int db,
             std::span<const std::string_view> keys, ValueType type, int64_t deadline_ms,
             int64_t now_ms);
  // Takes `session` off every list (served, timed out, unblocked, or disconnected).
  void unblock(ClientSession& session);

  // Number of blocked clients (INFO blocked_clients).
  size_t blocked_count() const { return blocked_count_; }
  // Blocked clients with a deadline (INFO clients_in_timeout_table).
  size_t timed_count() const { return deadlines_.size(); }

  // A write touched `key` in database `db`: if anyone waits on it, it is ready.
  void signal(int db, std::string_view key) {
    if (blocked_count_ != 0) signal_slow(db, key);
  }
  // SWAPDB gave database `db` new contents: every key waited on there may be ready.
  void signal_all_in_db(int db);
  bool has_ready() const { return !ready_.empty(); }
  // The keys signalled so far, in signal order; the registry forgets them.
  std::vector<ReadyKey> take_ready();
  // Clients waiting on `key` in `db`, oldest first (a copy: serving them changes the list).
  std::vector<ClientSession*> waiters(int db, std::string_view key) const;

  // The earliest deadline of a blocked client, or 0 when none has one.
  int64_t earliest_deadline_ms() const {
    return deadlines_.empty() ? 0 : deadlines_.begin()->first;
  }
  // Clients whose deadline is before `now_ms`, earliest first (still blocked).
  std::vector<ClientSession*> timed_out(int64_t now_ms) const;

 private:
  using Waiters = std::vector<ClientSession*>;
  using KeyMap = std::unordered_map<std::string, Waiters>;

  void signal_slow(int db, std::string_view key);
  KeyMap& keys_of(int db);

  std::vector<KeyMap> by_db_;
  std::multimap<int64_t, ClientSession*> deadlines_;
  std::vector<ReadyKey> ready_;
  size_t blocked_count_ = 0;
};

// Parses a blocking command's timeout in seconds (fractions allowed) into an absolute deadline
// in ms (0 for "forever"), as Redis 7.0 does; false with the error text in `*error`.
bool parse_block_timeout(std::string_view text, int64_t now_ms, int64_t* deadline_ms,
                         std::string_view* error);

}  // namespace keywarden
