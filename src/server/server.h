// The server process: configuration, listening sockets, the event loop, the cron, and the
// wiring of the services (services.cc); the connections themselves belong to the client
// registry (client_registry.h), which accepts what the listeners hand it. Commands that concern the process rather
// than the data (CONFIG, INFO, CLIENT, SHUTDOWN, DEBUG, MONITOR, SLOWLOG, LATENCY) live in this
// layer's own families and reach the Server through ServerHost.
#pragma once

#include <cstdint>
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
#include "server/client_registry.h"
#include "server/connection.h"
#include "server/diagnostics.h"
#include "common/event_loop.h"
#include "common/transport.h"
#include "server/oom_score.h"
#include "persistence/rdb_service.h"
#include "replication/replication_service.h"

namespace keywarden {

class ScriptEngine;

struct NetworkSettings {
  int64_t port = 6379;
  std::string bind = "127.0.0.1 -::1";
  std::string unixsocket;
  int64_t unixsocketperm = 0;
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
  // io-threads (the command thread included) and io-threads-do-reads: threads that do only
  // socket syscalls (ClientRegistry::start_io_threads).
  int64_t io_threads = 1;
  bool io_threads_do_reads = false;
  // io-uring: reads and sends of many connections batched into one io_uring system call
  // (ClientRegistry::start_io_uring); it takes the place of the I/O threads.
  bool io_uring = false;
};

// The instantaneous_* rates of INFO stats: per-second rates over the last 16 cron samples of
// the command count and of the client registry's traffic (CONFIG RESETSTAT clears them, with
// the registry's counters, by assigning {}).
struct NetworkStats {
  uint64_t ops_samples[16] = {};
  uint64_t input_samples[16] = {};
  uint64_t output_samples[16] = {};
  int ops_sample_index = 0;
  uint64_t last_ops_count = 0;
  uint64_t last_input_bytes = 0;
  uint64_t last_output_bytes = 0;
  int64_t last_ops_sample_us = 0;
};

// The progress of a start-up load, for INFO persistence (whether one runs is the command
// layer's ServerState::loading(), which the -LOADING refusal reads).
struct LoadingState {
  int64_t start_sec = 0;
  int64_t total_bytes = 0;
  int64_t loaded_bytes = 0;
  int64_t start_us = 0;
};

class Server final {
 public:
  Server();
  ~Server();

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

  ServerState& state() { return state_; }
  Dispatcher& dispatcher() { return dispatcher_; }
  EventLoop& loop() { return loop_; }
  ClientRegistry& clients() { return *clients_; }

  ScriptEngine& scripting() { return *scripting_; }
  // Called by a script running past busy-reply-threshold: answers other clients (-BUSY,
  // SCRIPT KILL, SHUTDOWN NOSAVE) without running the cron.
  void process_while_busy();
  ConfigRegistry& config() { return config_; }
  const Clock& clock() const { return clock_; }
  NetworkSettings& network() { return network_; }
  ServerSettings& settings() { return settings_; }
  NetworkStats& network_stats() { return network_stats_; }
  const std::string& config_file() const { return config_file_; }
  int64_t start_time_ms() const { return start_time_ms_; }
  int64_t actual_port() const { return actual_port_; }
  // tls-* (server/tls_config.cc).
  const TlsSettings& tls_settings() const { return tls_; }
  int64_t tls_port() const { return tls_port_; }
  // The context of connections this process opens (tls-replication), null while TLS is off.
  const TlsContextPtr& tls_client_context() const { return tls_client_context_; }

  // Live bytes held from the allocator (storage/memory_accounting.h): a few loads, cheap
  // enough to check before every command.
  size_t used_memory() const;
  size_t peak_memory() const { return peak_memory_; }
  // used_memory() when the server started listening (INFO used_memory_startup).
  size_t startup_memory() const { return startup_memory_; }

  // Random per start, 40 hex digits: INFO run_id.
  const std::string& run_id() const { return run_id_; }
  ReplicationService& replication() { return *replication_; }
  // DEBUG PAUSE-CRON: while set, the cron does nothing (Redis's pause_cron).
  void set_cron_paused(bool paused) { cron_paused_ = paused; }

  // Start-up, after listen() (clients get -LOADING meanwhile): loads the AOF when appendonly
  // is yes and opens it for appending. Returns "" or the fatal report.
  std::string load_append_only_file();
  // Between chunks of a start-up load: records progress for INFO and answers the clients.
  void serve_while_loading(int64_t loaded_bytes, int64_t total_bytes);
  const LoadingState& loading() const { return loading_; }
  bool is_loading() const { return state_.loading(); }
  // INFO persistence's loading_* progress lines, while a start-up load runs.
  void write_loading_progress(InfoText& info) const;
  bool shutting_down() const { return shutting_down_; }

 private:
  class Listener;
  // Opens a listening socket for every `bind` address on `port` (the TLS one with `tls`) into
  // `out`.
  std::string open_tcp_listeners(std::vector<std::unique_ptr<Listener>>& out, bool tls = false);
  // CONFIG SET port/bind/tls-port: replaces the TCP listeners (plain or TLS), keeping the old
  // ones on failure.
  std::string reopen_tcp_listeners(bool tls = false);
  // The tls-* directives (server/tls_config.cc).
  void register_tls_config();
  // Builds the TLS contexts from the tls-* settings; "" or the reason (logged).
  std::string configure_tls();
  bool tls_wanted() const { return tls_port_ != 0 || tls_.replication || tls_.cluster; }
  // Registers every command family and service (services.cc: the one list).
  void install_services();
  void register_config();
  void accept_client(int listen_fd, bool unix_socket, bool tls);
  void before_sleep();
  void cron();
  // rename-command, oom-score-adj and oom-score-adj-values.
  void register_process_config();
  // Starts (a fresh LoadingState) or ends a start-up load.
  void set_loading(bool loading);
  void apply_hz();

  SystemClock clock_;
  ServerSettings settings_;
  NetworkSettings network_;
  ServerState state_;
  Dispatcher dispatcher_;
  std::unique_ptr<ScriptEngine> scripting_;
  std::unique_ptr<RdbService> rdb_;
  std::unique_ptr<AofService> aof_;
  std::unique_ptr<Diagnostics> diagnostics_;
  std::unique_ptr<ReplicationService> replication_;
  // The services in the order their cron and before-sleep work runs.
  std::vector<Service*> services_;
  InfoSections info_sections_;
  ConfigRegistry config_;
  InertDirectives inert_directives_;  // Redis directives known here but not acted on
  EventLoop loop_;
  // After the loop and the state it refers to, so that it goes (with every connection) first.
  std::unique_ptr<ClientRegistry> clients_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  NetworkStats network_stats_;
  std::string config_file_;
  int64_t start_time_ms_ = 0;
  int64_t actual_port_ = 0;
  TlsSettings tls_;
  int64_t tls_port_ = 0;
  TlsContextPtr tls_server_context_;
  TlsContextPtr tls_client_context_;
  bool shutting_down_ = false;
  bool config_declares_users_ = false;  // a `user` directive was given (excludes aclfile)
  size_t peak_memory_ = 0;
  size_t startup_memory_ = 0;
  bool jemalloc_bg_thread_ = true;  // CONFIG jemalloc-bg-thread
  std::string run_id_;
  int64_t cron_loops_ = 0;
  bool cron_paused_ = false;
  LoadingState loading_;
};

}  // namespace keywarden
