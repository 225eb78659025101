// The primary side of replication: the replicas connected to this server.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace keywarden {

class InfoText;
class ReplicationService;
struct ServiceSetup;

// One connected replica as ROLE and INFO show it.
struct ReplicaSummary {
  std::string ip;
  int64_t port = 0;        // its listening port (REPLCONF listening-port)
  std::string state;       // wait_bgsave, send_bulk, online
  int64_t offset = 0;      // the last offset it acknowledged
  int64_t lag_seconds = 0; // since its last ACK
};

class PrimarySide {
 public:
  explicit PrimarySide(ReplicationService& service);
  ~PrimarySide();

  void install(ServiceSetup& setup);
  void cron(int64_t now_ms);
  void before_sleep();
  // INFO replication's connected_slaves and slaveN lines.
  void write_replicas_info(InfoText& info);
  // INFO replication's repl_backlog_* lines.
  void write_backlog_info(InfoText& info);

  // ---- what the replica side (chained replication) and the service call ----
  // Every byte of the replication stream passes here once: on a primary, the propagation
  // path's commands encoded; on a replica, the bytes it applied from its own primary, as
  // received. They go into the backlog and to every replica, and advance ids().offset.
  void append_stream(std::string_view bytes);
  // A new history starts at ids().offset (this replica just loaded a full sync): the backlog
  // restarts empty.
  void restart_history();
  // Closes every replica's connection (they reconnect and PSYNC): a replica changing primary
  // tells its own replicas so, as Redis's disconnectSlaves().
  void disconnect_replicas();
  // The replicas connected now, for ROLE and INFO.
  std::vector<ReplicaSummary> replicas() const;

 private:
  ReplicationService& service_;
};

}  // namespace keywarden
