// maxmemory enforcement: before a command runs, while the memory the server counts for
// eviction is above `maxmemory`, delete keys chosen by the policy in force (EvictionPool) and
// report whether the command may still run. Deletions propagate as DEL, fire `evicted`, touch
// WATCHed keys and count in INFO's evicted_keys, as in Redis 7.0 (evict.c).
//
// Memory is read through a gauge the host installs (the server: used memory minus what Redis
// does not count for eviction, such as replication and AOF buffers), so that this layer works
// with whatever accounting the server has and tests can fake it. With maxmemory 0 the
// dispatcher's whole cost is one comparison (enabled()).
//
// Eviction time per call is bounded by maxmemory-eviction-tenacity, as Redis bounds it: past
// the limit the command runs anyway (the state is "running", not "failed") and the server's
// cron continues via run_pending() until memory is under the limit or nothing can go.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "commands/command_table.h"
#include "storage/eviction.h"

namespace keywarden {

class ServerState;
struct ClientSession;

struct EvictionSettings {
  int64_t maxmemory = 0;  // bytes; 0 is no limit
  int64_t samples = 5;    // maxmemory-samples
  int64_t tenacity = 10;  // maxmemory-eviction-tenacity, 0..100
};

class Evictor {
 public:
  enum class Result : uint8_t { kOk, kRunning, kFail };
  // Tells whether a script command (EVAL…, FCALL…) denies OOM given its script's flags: 1 yes,
  // 0 no, -1 not known (use the command's own flags). Installed by the scripting layer.
  using ScriptOomRule = std::function<int(const Command&, std::span<const std::string_view>)>;

  explicit Evictor(ServerState& state) : state_(state) {}

  EvictionSettings& settings() { return settings_; }
  const EvictionSettings& settings() const { return settings_; }
  bool enabled() const { return settings_.maxmemory != 0; }

  void set_memory_gauge(std::function<size_t()> gauge) { gauge_ = std::move(gauge); }
  // Memory counted against maxmemory; 0 when no gauge is installed.
  size_t counted_memory() const { return gauge_ ? gauge_() : 0; }
  void set_script_oom_rule(ScriptOomRule rule) { script_rule_ = std::move(rule); }

  // Evicts until memory is under maxmemory, nothing can go, or the time limit passes.
  Result perform();
  // The cron's share: continues an eviction that ran out of time. Cheap when none is pending.
  void run_pending() {
    if (pending_) perform();
  }
  bool pending() const { return pending_; }
  // Makes the cron evict without waiting for a command (CONFIG SET maxmemory, as Redis does).
  void schedule() { pending_ = enabled(); }

  // Whether `command` with `args` is refused when memory is over the limit (denyoom): its
  // flags, its script's flags for EVAL/FCALL, any queued command's for EXEC.
  bool denies_oom(const Command& command, std::span<const std::string_view> args,
                  ClientSession& session) const;

  // OOM state when the running script (or EXEC) started; a script's first write is refused
  // when it was set (Redis's server.script_oom).
  bool script_oom() const { return script_oom_; }
  void set_script_oom(bool oom) { script_oom_ = oom; }

  uint64_t evicted_keys() const { return evicted_keys_; }
  // INFO's total_eviction_exceeded_time and current_eviction_exceeded_time, in ms.
  int64_t total_exceeded_ms() const;
  int64_t current_exceeded_ms() const;
  void reset_stats();
  // Forgets pooled candidates (FLUSHALL, a policy change); harmless to skip.
  void forget_candidates() { pool_.clear(); }

  // Microseconds one perform() may spend evicting; UINT64_MAX for no limit.
  static uint64_t time_limit_us(int64_t tenacity);

 private:
  void update_exceeded_time(Result result);

  ServerState& state_;
  EvictionSettings settings_;
  std::function<size_t()> gauge_;
  ScriptOomRule script_rule_;
  EvictionPool pool_;
  bool pending_ = false;
  bool script_oom_ = false;
  uint64_t evicted_keys_ = 0;
  int64_t exceeded_total_us_ = 0;
  int64_t exceeded_since_us_ = 0;  // 0: not over the limit
  std::string key_copy_;
};

}  // namespace keywarden
