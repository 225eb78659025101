// Replication as a service (commands/service.h): the Redis replication protocol (PSYNC2) on
// both sides, so that stock redis-server replicas and primaries, redis-sentinel and
// Sentinel-aware clients work with keywarden unchanged.
//
// The service owns what both sides share: the replication directives, the replication IDs and
// offset (replication_ids.h), the role the command layer reads (commands/replication_role.h),
// and INFO replication. The two sides are their own classes:
// - PrimarySide (primary.h): the replicas connected to this server, the backlog, full and
//   partial resynchronization, the stream fed from the propagation path, WAIT and
//   min-replicas-to-write;
// - ReplicaSide (replica.h): the link to this server's primary (REPLICAOF), the handshake, the
//   RDB load, applying the stream through the dispatcher as the primary's client, and the
//   ACKs back.
// A replica is a primary to its own replicas too (chained replication): what it applies from
// its primary is handed to its PrimarySide as the primary sent it, byte for byte.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "commands/service.h"
#include "commands/server_state.h"
#include "common/transport.h"
#include "persistence/rdb_file.h"
#include "replication/failover.h"
#include "replication/replication_ids.h"
#include "replication/replication_settings.h"

namespace keywarden {

class ConfigRegistry;
class Dispatcher;
class EventLoop;
class InfoText;
class PrimarySide;
class RdbService;
class ReplicaSide;

class ReplicationService final : public Service {
 public:
  ReplicationService(ServerState& state, Dispatcher& dispatcher, EventLoop& loop,
                     RdbService& rdb);
  ~ReplicationService() override;
  ReplicationService(const ReplicationService&) = delete;
  ReplicationService& operator=(const ReplicationService&) = delete;

  void install(ServiceSetup& setup) override;
  void cron(int64_t now_ms) override;
  void before_sleep() override;

  // After start-up loading: connects to the primary named by the replicaof directive, if any.
  void start();

  ReplicationSettings& settings() { return settings_; }
  ReplicationIds& ids() { return ids_; }
  const ReplicationIds& ids() const { return ids_; }
  ReplicationRole& role() { return state_.replication(); }
  bool is_replica() const { return state_.replication().replica; }
  PrimarySide& primary() { return *primary_; }
  ReplicaSide& replica() { return *replica_; }
  Failover& failover() { return failover_; }
  ServerState& state() { return state_; }
  Dispatcher& dispatcher() { return dispatcher_; }
  EventLoop& loop() { return loop_; }
  RdbService& rdb() { return rdb_; }

  // Keeps the command layer's copy of the settings it checks (read-only, stale data,
  // min-replicas) current; called when a directive changes.
  void settings_changed();
  // INFO replication, as Redis 7.0 writes it.
  void write_info(InfoText& info);

  // ---- what the server layer lends the replica side (replication may not include it) ----
  // The port this server really listens on (REPLCONF listening-port, unless
  // replica-announce-port is set). Until set, the port directive's value is used.
  void set_listening_port(int64_t port) { listening_port_ = port; }
  int64_t listening_port() const;
  // tls-replication: the context the replica side connects to its primary with (null: plain
  // TCP), and the tls-port a replica announces instead of its port then.
  void set_tls_client_context(TlsContextPtr context) { tls_client_context_ = std::move(context); }
  const TlsContextPtr& tls_client_context() const { return tls_client_context_; }
  void set_tls_port(int64_t port) { tls_port_ = port; }
  // bind-source-addr, read from the config registry (ServerSettings owns it).
  std::string bind_source_addr() const;
  // How a full sync is loaded as the start-up load is: the loading flag with its INFO
  // bookkeeping (Server::set_loading) and the load hooks that answer clients meanwhile
  // (progress → Server::serve_while_loading, loading-process-events-interval-bytes,
  // key-load-delay). Without them only ServerState's loading flag is set.
  struct LoadingSupport {
    std::function<void(bool loading)> set_loading;
    std::function<RdbLoadHooks()> hooks;
  };
  void set_loading_support(LoadingSupport support) { loading_support_ = std::move(support); }
  const LoadingSupport& loading_support() const { return loading_support_; }
  // Called after the replica applied commands from its primary, so that clients blocked on
  // keys the primary filled are served (ClientRegistry::serve_blocked_clients).
  void set_commands_applied_hook(std::function<void()> hook) {
    commands_applied_hook_ = std::move(hook);
  }
  void commands_applied() {
    if (commands_applied_hook_) commands_applied_hook_();
  }

 private:
  void register_config(ConfigRegistry& config);

  ServerState& state_;
  Dispatcher& dispatcher_;
  EventLoop& loop_;
  RdbService& rdb_;
  ReplicationSettings settings_;
  ReplicationIds ids_;
  ConfigRegistry* config_ = nullptr;
  int64_t listening_port_ = -1;
  TlsContextPtr tls_client_context_;
  int64_t tls_port_ = 0;
  LoadingSupport loading_support_;
  std::function<void()> commands_applied_hook_;
  std::unique_ptr<PrimarySide> primary_;
  std::unique_ptr<ReplicaSide> replica_;
  Failover failover_{*this};
};

}  // namespace keywarden
