// The server process: configuration, listening sockets, client connections, the cron, and the
// glue between the event loop and the command layer. Commands that concern the process rather
// than the data (CONFIG, INFO, CLIENT, SHUTDOWN, DEBUG, MONITOR, SLOWLOG, LATENCY) live in this
// layer's own families and reach the Server through ServerHost.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "commands/dispatcher.h"
#include "commands/server_state.h"
#include "common/clock.h"
#include "persistence/aof.h"
#include "persistence/fork_child.h"
#include "server/config.h"
#include "server/inert_config.h"
#include "server/connection.h"
#include "server/event_loop.h"
#include "server/oom_score.h"
#include "persistence/rdb_service.h"

namespace keywarden {

class ScriptEngine;

struct NetworkSettings {
  int64_t port = 6379;
  std::string bind = "127.0.0.1 -::1";
  std::string unixsocket;
  int64_t unixsocketperm = 0;
  int64_t maxclients = 10000;
  int64_t timeout = 0;  // seconds idle before a client is closed; 0 = never
  int64_t tcp_keepalive = 300;
  int64_t tcp_backlog = 511;
  bool protected_mode = true;
  int64_t client_query_buffer_limit = 1024LL * 1024 * 1024;
  int64_t proto_max_bulk_len = 512LL * 1024 * 1024;
};

// client-output-buffer-limit of one client class: bytes (0: none) and how long the soft
// limit may be exceeded.
struct OutputBufferLimit {
  int64_t hard = 0;
  int64_t soft = 0;
  int64_t soft_seconds = 0;
};
enum OutputClass : int { kOutputClassNormal = 0, kOutputClassReplica = 1, kOutputClassPubSub = 2 };

struct ServerSettings {
  int hz = 10;
  bool dynamic_hz = true;
  int databases = 16;
  int enable_debug_command = 0;  // DebugCommandAccess
  std::string dir;
  std::string logfile;
  int loglevel = 1;
  std::string pidfile;
  bool daemonize = false;
  std::string save = "3600 1 300 100 60 10000";
  AofSettings aof;  // appendonly, appendfilename, appendfsync, aof-* …
  int64_t key_load_delay = 0;  // microseconds per loaded key or command (negative: nanoseconds)
  // An RDB load serves clients each time it has read this many more bytes.
  int64_t loading_process_events_interval_bytes = 2 * 1024 * 1024;
  // Source address of outgoing connections ("": the kernel's choice). keywarden opens none yet;
  // whatever connects out (replication, MIGRATE) binds to it first.
  std::string bind_source_addr;
  OomScoreSettings oom_score;  // oom-score-adj, oom-score-adj-values
  int64_t slowlog_log_slower_than = 10000;
  int64_t slowlog_max_len = 128;
  int64_t latency_monitor_threshold = 0;
  // Indexed by OutputClass.
  OutputBufferLimit output_buffer_limits[3] = {
      {0, 0, 0}, {256LL << 20, 64LL << 20, 60}, {32LL << 20, 8LL << 20, 60}};
  int64_t io_threads = 1;
  // maxmemory-clients: a byte count, or minus a percentage of maxmemory ("10%" is -10); 0 off.
  int64_t maxmemory_clients = 0;
  bool latency_tracking = true;
  std::vector<double> latency_tracking_percentiles = {50, 99, 99.9};
};

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

// Counters of the server layer that INFO reports and CONFIG RESETSTAT clears (by assigning {}).
struct NetworkStats {
  uint64_t total_connections_received = 0;
  uint64_t rejected_connections = 0;
  uint64_t net_input_bytes = 0;
  uint64_t net_output_bytes = 0;
  uint64_t reads_processed = 0;   // read events handled (total_reads_processed)
  uint64_t writes_processed = 0;  // flushes with something to send (total_writes_processed)
  uint64_t evicted_clients = 0;   // closed by client eviction (maxmemory-clients)
  // instantaneous_*: per-second rates over the last 16 cron samples.
  uint64_t ops_samples[16] = {};
  uint64_t input_samples[16] = {};
  uint64_t output_samples[16] = {};
  int ops_sample_index = 0;
  uint64_t last_ops_count = 0;
  uint64_t last_input_bytes = 0;
  uint64_t last_output_bytes = 0;
  int64_t last_ops_sample_us = 0;
  std::map<const Command*, LatencyHistogram> command_latency;
};

// Start-up loading, for INFO persistence and the -LOADING refusal.
struct LoadingState {
  bool active = false;
  int64_t start_sec = 0;
  int64_t total_bytes = 0;
  int64_t loaded_bytes = 0;
  int64_t start_us = 0;
};

class Server final : public ServerHost {
 public:
  Server();
  ~Server() override;

  // Applies the config file and arguments; returns "" or the fatal error report.
  std::string configure(const std::string& config_path, std::span<const std::string> arguments);
  // Opens listeners; returns "" or the reason for failing.
  std::string listen();
  // Start-up, after listen() (clients get -LOADING meanwhile): loads the RDB file when
  // appendonly is no. Returns "" or the reason the server must not start.
  std::string load_data();
  RdbService& rdb() { return *rdb_; }
  // Runs until SHUTDOWN or a termination signal.
  void run();
  void request_shutdown() { loop_.stop(); }

  static Server& from(CommandContext& context);

  ServerState& state() { return state_; }
  Dispatcher& dispatcher() { return dispatcher_; }
  ScriptEngine& scripting() { return *scripting_; }
  // Called by a script running past busy-reply-threshold: answers other clients (-BUSY,
  // SCRIPT KILL, SHUTDOWN NOSAVE) without running the cron.
  void process_while_busy();
  // Sends what connections queued for writing.
  void flush_pending_writes();
  ConfigRegistry& config() { return config_; }
  EventLoop& loop() { return loop_; }
  const Clock& clock() const { return clock_; }
  NetworkSettings& network() { return network_; }
  ServerSettings& settings() { return settings_; }
  NetworkStats& network_stats() { return network_stats_; }
  const std::string& config_file() const { return config_file_; }
  int64_t start_time_ms() const { return start_time_ms_; }
  int64_t actual_port() const { return actual_port_; }

  const std::map<uint64_t, std::unique_ptr<Connection>>& connections() const {
    return connections_;
  }
  Connection* connection(uint64_t id);
  // Marks a connection for flushing before the loop sleeps.
  void queue_write(Connection* connection);
  // Called by a connection that closed itself.
  void connection_closed(Connection* connection);

  // Client eviction (maxmemory-clients), as Redis 7.0 does it: every connection reports what it
  // holds whenever that may have changed (after reading, after its commands ran, after a flush,
  // after a pub/sub delivery), the server keeps the total, and once the total reaches the limit
  // the connections holding the most are evicted until it is under again. CLIENT NO-EVICT
  // exempts a connection (its memory still counts in the total). An evicted connection is
  // closed without a reply at its next flush, like one over its output buffer limit, so the
  // eviction may happen anywhere, even in the middle of a command delivering to it.
  void client_memory_changed(Connection& connection);
  void evict_clients();
  // The limit in bytes: maxmemory-clients, or its percentage of maxmemory (none without a
  // maxmemory), never below 128 KiB so that a bad setting cannot cut everyone off; 0 = off.
  size_t client_eviction_limit() const;
  // What every open connection held when it last reported.
  size_t client_memory() const { return client_memory_; }

  // After each command that ran (not one refused before running): slow log, latency monitor,
  // MONITOR feed.
  void after_command(Connection& connection, std::span<const std::string_view> args,
                     int64_t duration_us);
  // The same for a command run inside another one (EXEC's queue, a script's redis.call), as
  // Redis 7.0 logs and shows each: MULTI, the queued commands, then EXEC; EVAL, then its
  // commands as the "lua" client.
  void after_nested_command(const ClientSession& session, std::span<const std::string_view> args,
                            const Command& command, int64_t duration_us);
  void feed_monitors(const Connection& source, std::span<const std::string_view> args);
  // EVAL/FCALL, before they run.
  void feed_monitors_from_script(const ClientSession& client,
                                 std::span<const std::string_view> args);
  void add_monitor(Connection& connection);

  std::deque<SlowlogEntry>& slowlog() { return slowlog_; }
  uint64_t& slowlog_next_id() { return slowlog_next_id_; }
  std::map<std::string, LatencyEvent>& latency_events() { return latency_events_; }
  void record_latency(const std::string& event, int64_t latency_ms);

  // Blocked clients (commands/blocking.h): runs again the commands of the clients waiting on
  // keys that writes made ready; queues a served client's buffered commands for before_sleep.
  void serve_blocked_clients();
  void resume_later(Connection* connection);

  // Connections holding a command back for the pause (Connection::held_by_pause).
  void pause_hold_changed(int delta) { clients_held_by_pause_ += delta; }
  int64_t clients_held_by_pause() const { return clients_held_by_pause_; }

  // Live bytes held from the allocator (storage/memory_accounting.h): a few loads, cheap
  // enough to check before every command.
  size_t used_memory() const;
  size_t peak_memory() const { return peak_memory_; }
  // used_memory() when the server started listening (INFO used_memory_startup).
  size_t startup_memory() const { return startup_memory_; }

  // Random per start, 40 hex digits each: INFO run_id and master_replid.
  const std::string& run_id() const { return run_id_; }
  const std::string& replication_id() const { return replication_id_; }
  // DEBUG CHANGE-REPL-ID: a new random replication ID (the second one stays cleared).
  void change_replication_id();
  // DEBUG PAUSE-CRON: while set, the cron does nothing (Redis's pause_cron).
  void set_cron_paused(bool paused) { cron_paused_ = paused; }

  // Adds an executed command's duration to its INFO latencystats histogram.
  void record_command_latency(const Command& command, int64_t duration_us);

  uint64_t next_client_id() { return ++last_client_id_; }

  // Start-up, after listen() (clients get -LOADING meanwhile): loads the AOF when appendonly
  // is yes and opens it for appending. Returns "" or the fatal report.
  std::string load_append_only_file();
  // Between chunks of a start-up load: records progress for INFO and answers the clients.
  void serve_while_loading(int64_t loaded_bytes, int64_t total_bytes);
  // Called before any reply leaves the process: what the AOF buffered is written (and fsynced
  // under appendfsync always) first.
  void sync_aof_before_replies() {
    if (aof_ != nullptr && aof_->has_pending()) aof_->flush(false);
  }
  AofLog* aof() { return aof_.get(); }
  // DEBUG LOADAOF: writes what the AOF buffered, empties every database and replays the AOF
  // files (their effects are not written back to the AOF). Returns "" or why nothing could be
  // loaded (no files, or a refused file), after which Redis exits.
  std::string reload_append_only_file();
  const LoadingState& loading() const { return loading_; }
  // CONFIG SET appendonly yes / no at run time.
  std::string start_append_only();
  void stop_append_only();
  // BGREWRITEAOF: a new base from the keyspace; writes meanwhile go to a new incremental file.
  // Returns "" or the reason it could not run.
  std::string rewrite_append_only();
  bool shutting_down() const { return shutting_down_; }

 private:
  // Slow log and latency monitor for one command that ran (`command` null when unknown).
  void record_command_duration(const Command* command, std::span<const std::string_view> args,
                               int64_t duration_us, std::string_view peer, std::string_view name);
  // How MONITOR names a client: its address, or the unix socket's path.
  std::string monitor_source(const Connection& client) const;
  // Sends one MONITOR line for a command run in `db` by `source` (a peer address, or "lua").
  void write_monitor_line(int db, std::string_view source, std::span<const std::string_view> args);
  class Listener;
  // Opens a listening socket for every `bind` address on `port` into `out`.
  std::string open_tcp_listeners(std::vector<std::unique_ptr<Listener>>& out);
  // CONFIG SET port/bind: replaces the TCP listeners, keeping the old ones on failure.
  std::string reopen_tcp_listeners();
  void register_config();
  void register_aof_config();
  // Reaps the fork child (either kind) and starts what was scheduled behind it.
  void child_cron();
  void aof_cron();
  void finish_rewrite(bool ok);
  // An AOF base in RDB format: rdbcompression/rdbchecksum, the aof-base AUX field.
  RdbSaveOptions rewrite_rdb_options();
  void rewrite_child_done(const ForkChild::Exit& exit);
  // CONFIG SET appendonly no and shutdown end a running rewrite, as Redis does.
  void kill_rewrite_child();
  void accept_client(int listen_fd, bool unix_socket);
  void before_sleep();
  void cron();
  void close_idle_clients();
  // Per-client cron work (buffer resizing), for a slice of the clients at a time.
  void clients_cron();
  // rename-command, oom-score-adj and oom-score-adj-values.
  void register_process_config();
  // Clients over their output soft limit for too long are closed even when nothing more is
  // sent to them (Redis's clientsCron check).
  void check_output_limits();
  void apply_hz();

  SystemClock clock_;
  ServerSettings settings_;
  NetworkSettings network_;
  ServerState state_;
  Dispatcher dispatcher_;
  std::unique_ptr<ScriptEngine> scripting_;
  std::unique_ptr<RdbService> rdb_;
  ConfigRegistry config_;
  InertDirectives inert_directives_;  // Redis directives known here but not acted on
  EventLoop loop_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::map<uint64_t, std::unique_ptr<Connection>> connections_;
  std::vector<Connection*> pending_writes_;
  std::vector<uint64_t> closed_connections_;
  uint64_t clients_cron_cursor_ = 0;  // the id clients_cron() visited last
  size_t client_memory_ = 0;
  std::vector<uint64_t> monitors_;
  NetworkStats network_stats_;
  std::deque<SlowlogEntry> slowlog_;
  uint64_t slowlog_next_id_ = 0;
  std::map<std::string, LatencyEvent> latency_events_;
  std::string config_file_;
  int64_t start_time_ms_ = 0;
  int64_t actual_port_ = 0;
  uint64_t last_client_id_ = 0;
  int64_t clients_held_by_pause_ = 0;
  std::vector<uint64_t> resume_ids_;  // unblocked clients to run at the next before_sleep
  bool shutting_down_ = false;
  size_t peak_memory_ = 0;
  size_t startup_memory_ = 0;
  bool jemalloc_bg_thread_ = true;  // CONFIG jemalloc-bg-thread
  std::string run_id_;
  std::string replication_id_;
  int64_t cron_loops_ = 0;
  bool cron_paused_ = false;
  std::unique_ptr<AofLog> aof_;
  LoadingState loading_;
  bool rewrite_rdb_format_ = false;  // the running rewrite writes an RDB-format base
};

}  // namespace keywarden
