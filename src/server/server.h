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

#include "commands/config_registry.h"
#include "commands/context.h"
#include "commands/dispatcher.h"
#include "commands/info_text.h"
#include "commands/service.h"
#include "commands/server_state.h"
#include "common/clock.h"
#include "persistence/aof_service.h"
#include "persistence/fork_child.h"
#include "server/inert_config.h"
#include "server/connection.h"
#include "server/connection_host.h"
#include "server/diagnostics.h"
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
};

struct ServerSettings {
  int hz = 10;
  bool dynamic_hz = true;
  int databases = 16;
  std::string dir;
  std::string logfile;
  int loglevel = 1;
  std::string pidfile;
  bool daemonize = false;
  int64_t key_load_delay = 0;  // microseconds per loaded key or command (negative: nanoseconds)
  // An RDB load serves clients each time it has read this many more bytes.
  int64_t loading_process_events_interval_bytes = 2 * 1024 * 1024;
  // Source address of outgoing connections ("": the kernel's choice). keywarden opens none yet;
  // whatever connects out (replication, MIGRATE) binds to it first.
  std::string bind_source_addr;
  OomScoreSettings oom_score;  // oom-score-adj, oom-score-adj-values
  int64_t io_threads = 1;
  // maxmemory-clients: a byte count, or minus a percentage of maxmemory ("10%" is -10); 0 off.
  int64_t maxmemory_clients = 0;
};

// Counters of the server layer that INFO reports and CONFIG RESETSTAT clears (by assigning {}).
struct NetworkStats : TrafficStats {
  uint64_t total_connections_received = 0;
  uint64_t rejected_connections = 0;
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
};

// Start-up loading, for INFO persistence and the -LOADING refusal.
struct LoadingState {
  bool active = false;
  int64_t start_sec = 0;
  int64_t total_bytes = 0;
  int64_t loaded_bytes = 0;
  int64_t start_us = 0;
};

class Server final : public ConnectionHost {
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
  AofService& aof() { return *aof_; }
  Diagnostics& diagnostics() { return *diagnostics_; }
  // Runs until SHUTDOWN or a termination signal.
  void run();
  void request_shutdown() { loop_.stop(); }

  // The server running `context`'s command (commands of the server layer's own families).
  static Server& from(CommandContext& context) { return context.service<Server>(); }
  // INFO's writers, section by section (commands/info_text.h).
  const InfoSections& info_sections() const { return info_sections_; }

  // ConnectionHost (connection_host.h): what every connection may ask of the server.
  ServerState& state() override { return state_; }
  Dispatcher& dispatcher() override { return dispatcher_; }
  EventLoop& loop() override { return loop_; }
  const ClientLimits& client_limits() const override { return client_limits_; }
  TrafficStats& traffic() override { return network_stats_; }
  bool script_running_for(const ClientSession& session) const override;
  void queue_write(Connection* connection) override;
  void before_replies() override { aof_->sync_before_replies(); }
  void command_ran(Connection& connection, std::span<const std::string_view> args,
                   const Command& command, int64_t duration_us) override {
    diagnostics_->after_command(connection, args, command, duration_us);
  }
  void serve_blocked_clients() override;
  void client_memory_changed(Connection& connection) override;
  void resume_later(Connection* connection) override;
  void pause_hold_changed(int delta) override { clients_held_by_pause_ += delta; }
  void connection_closed(Connection* connection) override;

  ScriptEngine& scripting() { return *scripting_; }
  // Called by a script running past busy-reply-threshold: answers other clients (-BUSY,
  // SCRIPT KILL, SHUTDOWN NOSAVE) without running the cron.
  void process_while_busy();
  // Sends what connections queued for writing.
  void flush_pending_writes();
  ConfigRegistry& config() { return config_; }
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

  // Client eviction (maxmemory-clients), as Redis 7.0 does it: every connection reports what it
  // holds whenever that may have changed (after reading, after its commands ran, after a flush,
  // after a pub/sub delivery), the server keeps the total, and once the total reaches the limit
  // the connections holding the most are evicted until it is under again. CLIENT NO-EVICT
  // exempts a connection (its memory still counts in the total). An evicted connection is
  // closed without a reply at its next flush, like one over its output buffer limit, so the
  // eviction may happen anywhere, even in the middle of a command delivering to it. Every
  // connection reports through client_memory_changed (ConnectionHost).
  void evict_clients();
  // The limit in bytes: maxmemory-clients, or its percentage of maxmemory (none without a
  // maxmemory), never below 128 KiB so that a bad setting cannot cut everyone off; 0 = off.
  size_t client_eviction_limit() const;
  // What every open connection held when it last reported.
  size_t client_memory() const { return client_memory_; }

  // Connections holding a command back for the pause (Connection::held_by_pause).
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


  uint64_t next_client_id() { return ++last_client_id_; }

  // Start-up, after listen() (clients get -LOADING meanwhile): loads the AOF when appendonly
  // is yes and opens it for appending. Returns "" or the fatal report.
  std::string load_append_only_file();
  // Between chunks of a start-up load: records progress for INFO and answers the clients.
  void serve_while_loading(int64_t loaded_bytes, int64_t total_bytes);
  const LoadingState& loading() const { return loading_; }
  bool shutting_down() const { return shutting_down_; }

 private:
  class Listener;
  // Opens a listening socket for every `bind` address on `port` into `out`.
  std::string open_tcp_listeners(std::vector<std::unique_ptr<Listener>>& out);
  // CONFIG SET port/bind: replaces the TCP listeners, keeping the old ones on failure.
  std::string reopen_tcp_listeners();
  // Registers every command family and service (services.cc: the one list).
  void install_services();
  void register_config();
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
  ClientLimits client_limits_;
  ServerState state_;
  Dispatcher dispatcher_;
  std::unique_ptr<ScriptEngine> scripting_;
  std::unique_ptr<RdbService> rdb_;
  std::unique_ptr<AofService> aof_;
  std::unique_ptr<Diagnostics> diagnostics_;
  // The services in the order their cron and before-sleep work runs.
  std::vector<Service*> services_;
  InfoSections info_sections_;
  ConfigRegistry config_;
  InertDirectives inert_directives_;  // Redis directives known here but not acted on
  EventLoop loop_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::map<uint64_t, std::unique_ptr<Connection>> connections_;
  std::vector<Connection*> pending_writes_;
  std::vector<uint64_t> closed_connections_;
  uint64_t clients_cron_cursor_ = 0;  // the id clients_cron() visited last
  size_t client_memory_ = 0;
  NetworkStats network_stats_;
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
  LoadingState loading_;
};

}  // namespace keywarden
