// FAILOVER: a coordinated hand-over from this primary to one of its replicas, as Redis 7.0
// runs it (no data lost, no moment with two primaries):
//   1. writes are held back (CLIENT PAUSE WRITE, under its own purpose), so the stream stops
//      growing (no PINGs nor GETACKs are added to it either);
//   2. waiting-for-sync: once the target replica (the named one, or the first) acknowledges
//      the whole stream, this server turns into its replica;
//   3. failover-in-progress: it connects to the target and sends `PSYNC <replid> <offset>
//      FAILOVER`, which makes the target promote itself and continue this server's history;
//   4. when the target answers the PSYNC, the failover is over and writes are let go (they
//      now get -READONLY). A refused PSYNC, a timeout without FORCE, or FAILOVER ABORT rolls
//      back: the server is a primary again.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace keywarden {

class CommandContext;
class CommandTable;
class ReplicationService;

class Failover {
 public:
  enum class State : uint8_t { kNone, kWaitForSync, kInProgress };

  explicit Failover(ReplicationService& service) : service_(service) {}

  // Registers FAILOVER.
  void install(CommandTable& commands);
  // FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms].
  void command(CommandContext& ctx);
  // From before-sleep and the cron: moves from waiting-for-sync on once the target caught up
  // (or the timeout passed).
  void update(int64_t now_ms);
  // The replica side's PSYNC to the target got its answer (in progress only): accepted ends
  // the failover, refused rolls it back.
  void psync_answered(bool accepted);

  State state() const { return state_; }
  bool in_progress() const { return state_ == State::kInProgress; }
  bool active() const { return state_ != State::kNone; }
  // INFO master_failover_state.
  std::string_view state_name() const;

 private:
  void abort(std::string_view reason);
  void clear();
  void fail_over_to_target(std::string_view why);

  ReplicationService& service_;
  State state_ = State::kNone;
  std::string target_host_;  // empty: the first replica to catch up
  int64_t target_port_ = 0;
  int64_t end_ms_ = 0;  // 0: no timeout
  bool force_ = false;
};

}  // namespace keywarden
