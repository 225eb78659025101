#include "replication/replica.h"

#include "commands/info_text.h"
#include "replication/replication_service.h"

namespace keywarden {

ReplicaSide::ReplicaSide(ReplicationService& service) : service_(service) {}
ReplicaSide::~ReplicaSide() = default;

void ReplicaSide::install(ServiceSetup&) {}
void ReplicaSide::cron(int64_t) {}
void ReplicaSide::before_sleep() {}
void ReplicaSide::start() {}

void ReplicaSide::write_info(InfoText& info) {
  const ReplicationSettings& settings = service_.settings();
  info.field("master_host", settings.primary_host);
  info.field("master_port", settings.primary_port);
  info.field("master_link_status", "down");
}

}  // namespace keywarden
