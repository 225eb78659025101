#include "replication/replication_service.h"

#include <functional>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

#include "commands/config_registry.h"
#include "commands/info_text.h"
#include "common/ascii.h"
#include "common/log.h"
#include "common/number.h"
#include "replication/primary.h"
#include "persistence/rdb_service.h"
#include "replication/replica.h"
#include "resp/split_arguments.h"

namespace keywarden {

std::string random_replication_id() {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::random_device device;
  std::mt19937_64 generator((uint64_t{device()} << 32) ^ device());
  std::string id(40, '0');
  for (char& c : id) c = kDigits[generator() & 15];
  return id;
}

ReplicationService::ReplicationService(ServerState& state, Dispatcher& dispatcher,
                                       EventLoop& loop, RdbService& rdb)
    : state_(state), dispatcher_(dispatcher), loop_(loop), rdb_(rdb) {
  state_.services().provide<ReplicationService>(this);
  primary_ = std::make_unique<PrimarySide>(*this);
  replica_ = std::make_unique<ReplicaSide>(*this);
  settings_changed();
  // Every save records where this server stands in replication (Redis's rdbPopulateSaveInfo):
  // a replica linked or with a history to resume; a primary while it has a backlog.
  rdb_.set_replication_info([this]() -> std::optional<RdbReplicationInfo> {
    int stream_db = 0;
    const bool known =
        is_replica() ? replica_->save_info(&stream_db) : primary_->save_info(&stream_db);
    if (!known) return std::nullopt;
    return RdbReplicationInfo{stream_db, ids_.replid, ids_.offset};
  });
}

ReplicationService::~ReplicationService() = default;

void ReplicationService::install(ServiceSetup& setup) {
  config_ = &setup.config;
  register_config(setup.config);
  primary_->install(setup);
  replica_->install(setup);
  failover_.install(setup.commands);
  setup.info.add("replication", 10, [this](InfoText& info) { write_info(info); });
}

void ReplicationService::cron(int64_t now_ms) {
  failover_.update(now_ms);
  replica_->cron(now_ms);
  primary_->cron(now_ms);
}

void ReplicationService::before_sleep() {
  // Replicas' ACKs read in this batch may have caught one up with the stream.
  failover_.update(state_.clock().wall_ms());
  replica_->before_sleep();
  primary_->before_sleep();
}

void ReplicationService::start() {
  if (!settings_.primary_host.empty()) replica_->start();
}

void ReplicationService::settings_changed() {
  ReplicationRole& role = state_.replication();
  role.replica = !settings_.primary_host.empty();
  role.read_only = settings_.read_only;
  role.serve_stale_data = settings_.serve_stale_data;
  role.ignore_maxmemory = settings_.ignore_maxmemory;
  if (!role.replica) role.link_up = false;
  // A replica never deletes a key by expiry: it hides it until its primary's DEL arrives.
  state_.keyspace().hold_expiry(Keyspace::kHoldForReplica, role.replica);
  primary_->update_sink();
  set_log_role(role.replica ? 'S' : 'M');
  role.min_replicas_to_write = settings_.min_replicas_to_write;
  role.min_replicas_max_lag = settings_.min_replicas_max_lag;
}

int64_t ReplicationService::listening_port() const {
  // Over TLS the primary reaches its replicas on their tls-port (Redis announces it).
  if (tls_client_context_ && tls_port_ != 0) return tls_port_;
  if (listening_port_ >= 0) return listening_port_;
  if (config_ != nullptr) {
    if (const ConfigDirective* port = config_->find("port")) {
      int64_t value;
      if (parse_int64(port->get(), &value)) return value;
    }
  }
  return 6379;
}

std::string ReplicationService::bind_source_addr() const {
  if (config_ == nullptr) return "";
  const ConfigDirective* directive = config_->find("bind-source-addr");
  return directive != nullptr && directive->get ? directive->get() : "";
}

void ReplicationService::write_info(InfoText& info) {
  info.field("role", is_replica() ? "slave" : "master");
  if (is_replica()) replica_->write_info(info);
  primary_->write_replicas_info(info);
  info.field("master_failover_state", failover_.state_name());
  info.field("master_replid", ids_.replid);
  info.field("master_replid2", ids_.replid2);
  info.field("master_repl_offset", ids_.offset);
  info.field("second_repl_offset", ids_.second_offset);
  primary_->write_backlog_info(info);
}

namespace {

// replicaof/slaveof: "<host> <port>", or "no one" for a primary. Settable from the config file
// only (REPLICAOF changes it at run time); CONFIG REWRITE writes it back.
ConfigDirective replica_of_directive(ReplicationSettings& settings, std::function<void()> changed) {
  return {"replicaof", {}, kConfigImmutable | kConfigMultiArg,
          [&settings] {
            if (settings.primary_host.empty()) return std::string();
            return settings.primary_host + " " + std::to_string(settings.primary_port);
          },
          [&settings, changed](std::string_view value, bool) -> std::string {
            std::vector<std::string> words;
            if (!split_arguments(value, words) || words.size() != 2) {
              return "wrong number of arguments";
            }
            if (equals_ignore_case(words[0], "no") && equals_ignore_case(words[1], "one")) {
              settings.primary_host.clear();
              settings.primary_port = 0;
              changed();
              return "";
            }
            int64_t port;
            if (!parse_int64(words[1], &port) || port < 0 || port > 65535) {
              return "Invalid master port";
            }
            settings.primary_host = words[0];
            settings.primary_port = port;
            changed();
            return "";
          }};
}

}  // namespace

void ReplicationService::register_config(ConfigRegistry& c) {
  constexpr int64_t kIntMax = INT32_MAX;
  constexpr int64_t kLongMax = INT64_MAX;
  auto changed = [this] { settings_changed(); };
  ReplicationSettings& s = settings_;
  c.add(replica_of_directive(s, changed));
  c.add_alias("replicaof", "slaveof");
  c.add_string("masterauth", &s.masterauth, kConfigSensitive);
  c.add_string("masteruser", &s.masteruser, kConfigSensitive);
  c.add_string("replica-announce-ip", &s.announce_ip);
  c.add_alias("replica-announce-ip", "slave-announce-ip");
  c.add_integer("replica-announce-port", &s.announce_port, 0, 65535);
  c.add_alias("replica-announce-port", "slave-announce-port");
  c.add_bool("replica-announced", &s.announced);
  c.add_integer("replica-priority", &s.priority, 0, kIntMax);
  c.add_alias("replica-priority", "slave-priority");
  c.add_bool("replica-read-only", &s.read_only, 0, changed);
  c.add_alias("replica-read-only", "slave-read-only");
  c.add_bool("replica-serve-stale-data", &s.serve_stale_data, 0, changed);
  c.add_alias("replica-serve-stale-data", "slave-serve-stale-data");
  c.add_enum("repl-diskless-load", &s.diskless_load,
             {{"disabled", kDisklessLoadDisabled},
              {"on-empty-db", kDisklessLoadOnEmptyDb},
              {"swapdb", kDisklessLoadSwapDb}});
  c.add_bool("replica-ignore-disk-write-errors", &s.ignore_disk_write_errors);
  c.add_bool("replica-ignore-maxmemory", &s.ignore_maxmemory, 0, changed);
  c.add_alias("replica-ignore-maxmemory", "slave-ignore-maxmemory");

  c.add_integer("min-replicas-to-write", &s.min_replicas_to_write, 0, kIntMax, 0, changed);
  c.add_alias("min-replicas-to-write", "min-slaves-to-write");
  c.add_integer("min-replicas-max-lag", &s.min_replicas_max_lag, 0, kIntMax, 0, changed);
  c.add_alias("min-replicas-max-lag", "min-slaves-max-lag");
  c.add_memory("repl-backlog-size", &s.backlog_size, 1, kLongMax);
  c.add_integer("repl-backlog-ttl", &s.backlog_ttl, 0, kLongMax);
  c.add_bool("repl-disable-tcp-nodelay", &s.disable_tcp_nodelay);
  c.add_bool("repl-diskless-sync", &s.diskless_sync);
  c.add_integer("repl-diskless-sync-delay", &s.diskless_sync_delay, 0, kIntMax);
  c.add_integer("repl-diskless-sync-max-replicas", &s.diskless_sync_max_replicas, 0, kIntMax);
  c.add_integer("repl-ping-replica-period", &s.ping_replica_period, 1, kIntMax);
  c.add_alias("repl-ping-replica-period", "repl-ping-slave-period");
  c.add_integer("repl-timeout", &s.timeout, 1, kIntMax);
}

}  // namespace keywarden
