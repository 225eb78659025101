// The one background child process the server may have at a time (Redis allows a single fork
// child: an RDB save or an AOF rewrite, never both).
//
// start() forks. The child never returns into the event loop: it restores default signal
// dispositions, runs `body` and leaves with _exit(body's result), so no atexit handler, stdio
// buffer or destructor of the parent's objects runs twice. The parent remembers the child (kind,
// pid, start time) until poll() reaps it or kill_child() ends it.
//
// While a child is alive the keyspace attached with attach() does not resize its hash tables:
// the child shares the parent's pages copy-on-write, and every bucket array written or node
// moved by a rehash would be a page copied for nothing. Reaping the child allows resizes again.
//
// Everything here is process-wide state used from the command thread only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>

namespace keywarden {

class Keyspace;

class ForkChild {
 public:
  enum class Kind : uint8_t { kNone, kRdb, kAof };

  // What start() gives back: the child's pid, or the errno of a failed fork (or EEXIST when a
  // child is already running).
  struct Started {
    pid_t pid = -1;
    int error = 0;
    bool ok() const { return error == 0; }
  };

  // How a reaped child ended.
  struct Exit {
    Kind kind = Kind::kNone;
    pid_t pid = -1;
    int exit_code = -1;  // the body's result when it exited, -1 when a signal ended it
    int signal = 0;      // the signal that ended it, 0 when it exited
    int64_t duration_ms = 0;
    bool success() const { return signal == 0 && exit_code == 0; }
  };

  // The keyspace whose tables must not resize while a child runs (the server's; may be null).
  static void attach(Keyspace* keyspace);

  // Forks a child that runs `body` and exits with its result. Fails with EEXIST while another
  // child is active.
  static Started start(Kind kind, std::function<int()> body);

  static bool active() { return pid_ > 0; }
  static Kind kind() { return kind_; }
  static pid_t pid() { return pid_; }
  // Wall time when the active child was started (ms), 0 when none.
  static int64_t start_time_ms() { return start_ms_; }
  // How long the last fork() call took in the parent (µs: the page-table copy that stalls the
  // command thread, INFO's latest_fork_usec), and how many children were forked.
  static int64_t latest_fork_usec() { return latest_fork_usec_; }
  static int64_t total_forks() { return total_forks_; }

  // Non-blocking check from the cron: once the child has ended, reaps it, allows resizes again
  // and returns how it ended; nullopt while it runs or when there is none.
  static std::optional<Exit> poll();

  // Ends the active child (SIGUSR1, as Redis) and reaps it, waiting for it. No-op when none.
  static void kill_child();

  // True in a forked child (for code that must behave differently there, e.g. logging).
  static bool in_child() { return in_child_; }

  // Run in every child right after the fork, before its body (the server sets the child's
  // oom_score_adj there).
  static void set_child_setup(std::function<void()> setup) { child_setup_ = std::move(setup); }

 private:
  static void finished();

  static inline Keyspace* keyspace_ = nullptr;
  static inline pid_t pid_ = -1;
  static inline Kind kind_ = Kind::kNone;
  static inline int64_t start_ms_ = 0;
  static inline int64_t latest_fork_usec_ = 0;
  static inline int64_t total_forks_ = 0;
  static inline bool in_child_ = false;
  static inline std::function<void()> child_setup_;
};

}  // namespace keywarden
