#include "replication/primary.h"

#include "commands/info_text.h"
#include "replication/replication_service.h"

namespace keywarden {

PrimarySide::PrimarySide(ReplicationService& service) : service_(service) {}
PrimarySide::~PrimarySide() = default;

void PrimarySide::install(ServiceSetup&) {}
void PrimarySide::cron(int64_t) {}
void PrimarySide::before_sleep() {}

void PrimarySide::write_replicas_info(InfoText& info) { info.field("connected_slaves", 0); }

void PrimarySide::write_backlog_info(InfoText& info) {
  info.field("repl_backlog_active", 0);
  info.field("repl_backlog_size", service_.settings().backlog_size);
  info.field("repl_backlog_first_byte_offset", 0);
  info.field("repl_backlog_histlen", 0);
}

}  // namespace keywarden

namespace keywarden {

void PrimarySide::append_stream(std::string_view bytes) {
  service_.ids().offset += static_cast<int64_t>(bytes.size());
}
void PrimarySide::restart_history() {}
void PrimarySide::disconnect_replicas() {}
std::vector<ReplicaSummary> PrimarySide::replicas() const { return {}; }

}  // namespace keywarden
