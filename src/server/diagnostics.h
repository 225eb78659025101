// Diagnostics as a service: the slow log, the latency monitor, INFO latencystats and the
// MONITOR feed, with their commands (SLOWLOG, LATENCY, MONITOR), their directives
// (slowlog-*, latency-monitor-threshold, latency-tracking*) and their INFO section. The
// server tells it about every command that ran (after_command), including those run inside
// another one (EXEC's queue, a script's redis.call), as Redis's call() reports each.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commands/service.h"

namespace keywarden {

class ClientSession;
class Connection;
class Server;
struct Command;

struct SlowlogEntry {
  uint64_t id;
  int64_t time_sec;
  int64_t duration_us;
  std::vector<std::string> args;
  std::string peer;
  std::string name;
};

struct LatencySample {
  int64_t time_sec;
  int64_t latency_ms;
};

struct LatencyEvent {
  std::deque<LatencySample> history;  // at most 160 samples, as Redis keeps
  int64_t max_ms = 0;
};

// A command's latency distribution for INFO latencystats, bucketed as Redis's HDR histogram
// with two significant digits over 1 ns..1 s: a value keeps its top 8 bits, so a bucket is
// exact below 256 ns and 1/128 of its magnitude wide above.
struct LatencyHistogram {
  std::map<int64_t, uint64_t> buckets;  // lowest value of a bucket (ns) -> samples in it
  uint64_t total = 0;
  void record(int64_t nanoseconds);
  // The highest value equivalent to the sample at `percentile` (0..100), as hdr_histogram
  // reports it; 0 when empty.
  int64_t value_at_percentile(double percentile) const;
};

// A percentile as Redis names it in config and INFO: "%f" without trailing zeros ("99.9", "50").
std::string format_percentile(double value);

struct DiagnosticsSettings {
  int64_t slowlog_log_slower_than = 10000;
  int64_t slowlog_max_len = 128;
  int64_t latency_monitor_threshold = 0;
  bool latency_tracking = true;
  std::vector<double> latency_tracking_percentiles = {50, 99, 99.9};
};

class Diagnostics final : public Service {
 public:
  explicit Diagnostics(Server& server);
  ~Diagnostics() override;

  void install(ServiceSetup& setup) override;

  DiagnosticsSettings& settings() { return settings_; }

  // After each command a client ran (not one refused before running): its latency histogram,
  // the slow log, the latency monitor and the MONITOR feed.
  void after_command(Connection& connection, std::span<const std::string_view> args,
                     const Command& command, int64_t duration_us);
  // The same for a command run inside another one, as Redis 7.0 logs and shows each: MULTI,
  // the queued commands, then EXEC; EVAL, then its commands as the "lua" client.
  void after_nested_command(const ClientSession& session, std::span<const std::string_view> args,
                            const Command& command, int64_t duration_us);
  // EVAL/FCALL, before they run (their commands follow them in the feed).
  void feed_monitors_from_script(const ClientSession& client,
                                 std::span<const std::string_view> args);
  void add_monitor(Connection& connection);
  void remove_monitor(uint64_t connection_id) { std::erase(monitors_, connection_id); }

  std::deque<SlowlogEntry>& slowlog() { return slowlog_; }
  std::map<std::string, LatencyEvent>& latency_events() { return latency_events_; }
  // The per-command latency histograms (latency-tracking), by command.
  const std::map<const Command*, LatencyHistogram>& command_latency() const {
    return command_latency_;
  }
  // CONFIG RESETSTAT: the latency histograms and the latency monitor's events.
  void reset_stats();

 private:
  // Slow log and latency monitor for one command that ran.
  void record_command_duration(const Command& command, std::span<const std::string_view> args,
                               int64_t duration_us, std::string_view peer, std::string_view name);
  void record_latency(const std::string& event, int64_t latency_ms);
  // How MONITOR names a client: its address, or the unix socket's path.
  std::string monitor_source(const Connection& client) const;
  // Sends one MONITOR line for a command run in `db` by `source` (a peer address, or "lua").
  void write_monitor_line(int db, std::string_view source, std::span<const std::string_view> args);
  void register_config(ConfigRegistry& config);
  // Whether argument `index` of a command carries a secret, shown as "(redacted)".
  bool is_redacted(std::span<const std::string_view> args, size_t index);

  Server& server_;
  DiagnosticsSettings settings_;
  std::deque<SlowlogEntry> slowlog_;
  uint64_t slowlog_next_id_ = 0;
  std::map<std::string, LatencyEvent> latency_events_;
  std::map<const Command*, LatencyHistogram> command_latency_;
  std::vector<uint64_t> monitors_;  // connection ids
};

// SLOWLOG, LATENCY and MONITOR (diagnostics_commands.cc).
void register_diagnostics_commands(CommandTable& table);

}  // namespace keywarden
