// Client eviction (maxmemory-clients): the server's running total of what connections hold,
// and the closing of the biggest ones once that total reaches the limit. See server.h.
#include <algorithm>
#include <string>

#include "common/log.h"
#include "server/connection.h"
#include "server/server.h"

namespace keywarden {

namespace {
// Redis's floor, so that a tiny setting (or a tiny maxmemory percentage) cannot evict every
// client as soon as it connects.
constexpr size_t kMinClientEvictionLimit = 128 * 1024;
}  // namespace

size_t Server::client_eviction_limit() const {
  const int64_t setting = settings_.maxmemory_clients;
  size_t limit = 0;
  if (setting > 0) {
    limit = static_cast<size_t>(setting);
  } else if (setting < 0) {
    const int64_t maxmemory = state_.eviction().settings().maxmemory;
    if (maxmemory == 0) return 0;
    limit = static_cast<size_t>(static_cast<long double>(maxmemory) * -setting / 100);
  } else {
    return 0;
  }
  return std::max(limit, kMinClientEvictionLimit);
}

void Server::client_memory_changed(Connection& connection) {
  // Closed or already evicted connections hold nothing that counts any more.
  if (connection.closed() || connection.close_asap()) return;
  const size_t now = connection.memory_usage();
  client_memory_ = client_memory_ - connection.reported_memory + now;
  connection.reported_memory = now;
  const size_t limit = client_eviction_limit();
  if (limit != 0 && client_memory_ >= limit) evict_clients();
}

void Server::evict_clients() {
  const size_t limit = client_eviction_limit();
  if (limit == 0) return;
  while (client_memory_ >= limit) {
    // Biggest first, so that as few clients as possible go. A linear walk per eviction: the
    // limit is opt-in and evictions are rare, so no size-ordered structure is kept meanwhile.
    Connection* victim = nullptr;
    for (const auto& [id, connection] : connections_) {
      if (connection->closed() || connection->close_asap() || connection->session().no_evict) {
        continue;
      }
      if (victim == nullptr || connection->reported_memory > victim->reported_memory) {
        victim = connection.get();
      }
    }
    if (victim == nullptr) return;
    log_message(LogLevel::kVerbose,
                "Evicting client: " + client_info_line(*victim, clock_.wall_ms()));
    client_memory_ -= victim->reported_memory;
    victim->reported_memory = 0;
    victim->evict();
    ++network_stats_.evicted_clients;
  }
}

}  // namespace keywarden
