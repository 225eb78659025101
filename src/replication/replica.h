// The replica side of replication: this server's link to its primary.
#pragma once

#include <cstdint>

namespace keywarden {

class InfoText;
class ReplicationService;
struct ServiceSetup;

class ReplicaSide {
 public:
  explicit ReplicaSide(ReplicationService& service);
  ~ReplicaSide();

  void install(ServiceSetup& setup);
  void cron(int64_t now_ms);
  void before_sleep();
  // Connects to the primary the settings name (start-up, REPLICAOF).
  void start();
  // INFO replication's master_* and slave_* lines, written while a replica.
  void write_info(InfoText& info);

 private:
  ReplicationService& service_;
};

}  // namespace keywarden
