// The primary side of replication: the replicas connected to this server.
#pragma once

#include <cstdint>

namespace keywarden {

class InfoText;
class ReplicationService;
struct ServiceSetup;

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

 private:
  ReplicationService& service_;
};

}  // namespace keywarden
