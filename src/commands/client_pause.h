// CLIENT PAUSE: the state of a pause (until when, and whether it holds back every command or
// only those that may write or replicate). The dispatcher reads it to postpone a client's
// command — held, not refused: the command stays unread in the client's query buffer and runs
// once the pause ends. CLIENT PAUSE and CLIENT UNPAUSE set it, the event loop ends it when its
// deadline passes and then runs the clients it held.
//
// Both kinds of pause keep the dataset still, as in Redis 7.0: while one is in force, keys are
// neither deleted by expiry (expired keys read as missing but stay) nor evicted.
#pragma once

#include <cstdint>

#include "storage/keyspace.h"

namespace keywarden {

class ClientPause {
 public:
  explicit ClientPause(Keyspace& keyspace) : keyspace_(keyspace) {}

  // Pauses clients until `deadline_ms` (wall clock), all commands or with `write_only` only
  // those that may write or replicate. A pause already in force is never shortened nor
  // weakened by a new one, as in Redis; a deadline already past pauses nothing.
  void pause(int64_t deadline_ms, bool write_only, int64_t now_ms) {
    if (deadline_ms_ != 0 && deadline_ms_ > now_ms) {
      deadline_ms = deadline_ms > deadline_ms_ ? deadline_ms : deadline_ms_;
      write_only = write_only && write_only_;
    }
    if (deadline_ms <= now_ms) return;
    deadline_ms_ = deadline_ms;
    write_only_ = write_only;
    keyspace_.hold_expiry(Keyspace::kHoldForPause, true);
  }
  // Ends the pause (CLIENT UNPAUSE, or its deadline passed). The held clients are to run
  // again: take_ended() says so once.
  void unpause() {
    deadline_ms_ = 0;
    write_only_ = false;
    ended_ = true;
    keyspace_.hold_expiry(Keyspace::kHoldForPause, false);
  }
  // Ends the pause when its deadline has passed at `now_ms`.
  void end_if_due(int64_t now_ms) {
    if (deadline_ms_ != 0 && now_ms >= deadline_ms_) unpause();
  }
  // True once after the pause ended: the caller then runs the clients it held (never inside
  // the command that ended it).
  bool take_ended() {
    const bool ended = ended_;
    ended_ = false;
    return ended;
  }

  bool active() const { return deadline_ms_ != 0; }
  // The end of the pause in force (0 when none) and whether it holds back writes only.
  int64_t deadline_ms() const { return deadline_ms_; }
  bool write_only() const { return write_only_; }

 private:
  Keyspace& keyspace_;
  int64_t deadline_ms_ = 0;
  bool write_only_ = false;
  bool ended_ = false;
};

}  // namespace keywarden
