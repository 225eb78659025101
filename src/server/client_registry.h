// The client registry as a service: every open connection by id, and everything that concerns
// the set of them rather than one — accepting a socket into a connection (maxclients, protected
// mode), the replies waiting to be flushed, the connections closed and not yet destroyed, the
// clients to resume (unblocked, or held by a pause that ended), client eviction
// (maxmemory-clients), the idle timeout and the per-client cron work. It owns the directives
// maxclients, timeout, tcp-keepalive, maxmemory-clients, client-query-buffer-limit and
// client-output-buffer-limit, the CLIENT command and INFO's Clients section.
//
// It is the host of every connection (ConnectionHost): the parts of that interface that are
// not its own (the AOF written before replies, the diagnostics after each command, whether a
// script runs) it forwards to the services that own them.
//
// Invariants: a connection is destroyed only between event batches (reap_closed), never while
// a list of this registry or the event loop may still point to it; client_memory() is the sum
// of what the open connections last reported.
#pragma once

#include "common/transport.h"

#include <sys/socket.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include "commands/service.h"
#include "server/connection.h"
#include "replication/replica_channel.h"
#include "server/connection_host.h"
#include "server/io_threads.h"
#include "server/io_uring_batch.h"

namespace keywarden {

class AofService;
class Diagnostics;
class ReplicationService;
class ScriptEngine;

struct ClientSettings {
  int64_t maxclients = 10000;
  int64_t timeout = 0;  // seconds idle before a client is closed; 0 = never
  int64_t tcp_keepalive = 300;
  // maxmemory-clients: a byte count, or minus a percentage of maxmemory ("10%" is -10); 0 off.
  int64_t maxmemory_clients = 0;
  // Keys CLIENT TRACKING remembers at most (0: no limit); over it, random ones are forgotten
  // and their readers told.
  int64_t tracking_table_max_keys = 1000000;
};

// The registry's counters for INFO stats (CONFIG RESETSTAT clears them by assigning {}): the
// connections' traffic and what became of the sockets accepted.
struct ClientStats : TrafficStats {
  uint64_t total_connections_received = 0;
  uint64_t rejected_connections = 0;
  uint64_t evicted_clients = 0;  // closed by client eviction (maxmemory-clients)
  // Connections whose read or write an I/O-thread round handled (the command thread's share
  // included), as Redis 7.0 counts them.
  uint64_t io_threaded_reads_processed = 0;
  uint64_t io_threaded_writes_processed = 0;
  // Reads and sends the io_uring engine made (io-uring yes).
  uint64_t io_uring_reads_processed = 0;
  uint64_t io_uring_writes_processed = 0;
};

class ClientRegistry final : public Service, public ConnectionHost, public ReplicationHost {
 public:
  // `hz` is the server's, read at each cron (it sizes the slice of clients visited per tick).
  ClientRegistry(ServerState& state, Dispatcher& dispatcher, EventLoop& loop, const int& hz);
  ~ClientRegistry() override;

  // The directives, INFO clients and the CLIENT command.
  void install(ServiceSetup& setup) override;
  // What the ACL store needs of connections: CLIENT LIST lines for its log, and closing the
  // clients of a deleted user or of one whose channels were narrowed.
  void install_acl_hooks();
  // The idle timeout, then a slice of the clients' buffer resizing, then the output soft limits.
  void cron(int64_t now_ms) override;
  // Runs the clients that may run again: those held by a pause that ended, blocked clients
  // whose deadline passed, and those unblocked or resumed since (which may unblock others).
  void before_sleep() override;
  // The second half of the server's before-sleep, after the AOF is written: client eviction,
  // the replies, the destruction of closed connections, and a wake-up for the next blocked
  // client's deadline. Kept apart from before_sleep() because the server must write the AOF in
  // between (nothing is acknowledged that the file does not hold).
  void send_replies();

  // A socket a listener accepted: counted, given its TCP options, then refused (maxclients,
  // protected mode) or made a connection. `unix_path` is the unix socket's path, empty for a
  // TCP socket; `protected_mode` is the protected-mode directive. A socket of the tls-port
  // comes with the server's `tls` context and tls-auth-clients (TlsSettings::AuthClients);
  // its refusals are not written (the client expects a TLS handshake, not plain text).
  void accept(int fd, const sockaddr_storage& address, std::string_view unix_path,
              bool protected_mode, const TlsContextPtr* tls = nullptr, int auth_clients = 1);
  // Sends what connections queued for writing.
  void flush_pending_writes();
  // io-threads N (N > 1): starts the N-1 workers (server/io_threads.h, docs/architecture.md).
  void start_io_threads(int threads);
  // io-uring yes: the batch engine (server/io_uring_batch.h) makes the reads of an event
  // batch and the sends of the flush before sleeping, one system call per list, in place of
  // the I/O threads. False (and a log line) when no ring can be made: the server goes on with
  // plain syscalls.
  bool start_io_uring();
  bool io_uring_active() const { return uring_ != nullptr; }
  // Whether the last flush before sleeping used the I/O threads (INFO io_threads_active).
  bool io_threads_active() const { return io_threads_active_; }
  // io-threads-do-reads: the read syscalls of the batch's readable connections, split over
  // the I/O threads; their events are then handled in the batch's order on the command thread
  // (parse and execute). Parsing stays on the command thread because a connection's parse
  // depends on what its previous commands did (AUTH changes the bulk-length limit the parser
  // enforces, a CLIENT PAUSE or a blocking command stops the parse-ahead, an inline command's
  // arguments live in the parser only until its next parse) and because it looks commands up
  // in the shared command table.
  void read_batch(std::span<const ReadyEvent> batch);
  // Destroys the connections closed since the last call.
  void reap_closed();
  // At shutdown: every connection sends what it has pending.
  void flush_all();
  // Destroys every connection (server teardown).
  void drop_all();

  const std::map<uint64_t, std::unique_ptr<Connection>>& connections() const {
    return connections_;
  }
  Connection* connection(uint64_t id);
  ClientSettings& settings() { return settings_; }
  ClientStats& stats() { return stats_; }

  // Client eviction (maxmemory-clients), as Redis 7.0 does it: every connection reports what it
  // holds whenever that may have changed (after reading, after its commands ran, after a flush,
  // after a pub/sub delivery), the registry keeps the total, and once the total reaches the
  // limit the connections holding the most are evicted until it is under again. CLIENT
  // NO-EVICT exempts a connection (its memory still counts in the total). An evicted connection
  // is closed without a reply at its next flush, like one over its output buffer limit, so the
  // eviction may happen anywhere, even in the middle of a command delivering to it.
  void evict_clients();
  // The limit in bytes: maxmemory-clients, or its percentage of maxmemory (none without a
  // maxmemory), never below 128 KiB so that a bad setting cannot cut everyone off; 0 = off.
  size_t client_eviction_limit() const;
  // What every open connection held when it last reported.
  size_t client_memory() const { return client_memory_; }
  // Connections holding a command back for the pause (Connection::held_by_pause).
  int64_t clients_held_by_pause() const { return clients_held_by_pause_; }

  // ConnectionHost (connection_host.h).
  ServerState& state() override { return state_; }
  Dispatcher& dispatcher() override { return dispatcher_; }
  EventLoop& loop() override { return loop_; }
  const ClientLimits& client_limits() const override { return limits_; }
  TrafficStats& traffic() override { return stats_; }
  bool script_running_for(const ClientSession& session) const override;
  void queue_write(Connection* connection) override;
  void before_replies() override;
  void command_ran(Connection& connection, std::span<const std::string_view> args,
                   const Command& command, int64_t duration_us) override;
  void serve_blocked_clients() override;
  void client_memory_changed(Connection& connection) override;
  void resume_later(Connection* connection) override;
  void pause_hold_changed(int delta) override { clients_held_by_pause_ += delta; }
  void connection_closed(Connection* connection) override;

  // ReplicationHost (replication/replica_channel.h).
  ReplicaChannel* replica_channel(uint64_t client_id) override;
  void retry_blocked_client(uint64_t client_id) override;
  void end_blocked_clients(std::string_view error) override;

 private:
  void close_idle_clients(int64_t now_ms);
  // Per-client cron work (buffer resizing), for a slice of the clients at a time.
  void clients_cron(int64_t now_ms);
  // Clients over their output soft limit for too long are closed even when nothing more is
  // sent to them (Redis's clientsCron check).
  void check_output_limits();
  void register_config(ConfigRegistry& config);
  // The pending writes' syscalls split over the I/O threads, when at least twice as many
  // connections as threads have plain output, or made by the io_uring engine, when at least
  // two have; the rest stay in pending_writes_.
  void flush_batched();
  // The smallest list worth a batch: below it the plain syscalls are made one by one.
  size_t batch_threshold() const;

  ServerState& state_;
  Dispatcher& dispatcher_;
  EventLoop& loop_;
  const int& hz_;
  // The services a connection reports to, found at install() once they all exist.
  AofService* aof_ = nullptr;
  Diagnostics* diagnostics_ = nullptr;
  ScriptEngine* scripting_ = nullptr;
  ReplicationService* replication_ = nullptr;
  ClientSettings settings_;
  ClientLimits limits_;
  ClientStats stats_;
  std::map<uint64_t, std::unique_ptr<Connection>> connections_;
  std::vector<Connection*> pending_writes_;
  std::unique_ptr<IoThreads> io_threads_;  // null with io-threads 1
  bool io_threads_active_ = false;
  std::unique_ptr<UringBatch> uring_;  // null unless io-uring yes
  std::vector<Connection*> io_batch_;  // the connections of the running I/O-thread round
  std::vector<Connection*> io_remaining_;  // what a write round leaves to the serial flush
  std::vector<uint64_t> closed_connections_;
  bool dropping_all_ = false;  // drop_all() runs: closing connections release no locks
  std::vector<uint64_t> resume_ids_;  // unblocked clients to run at the next before_sleep
  uint64_t last_client_id_ = 0;
  uint64_t clients_cron_cursor_ = 0;  // the id clients_cron() visited last
  size_t client_memory_ = 0;
  int64_t clients_held_by_pause_ = 0;
};

}  // namespace keywarden
