// What the command layer must know of the server's place in replication, kept current by the
// replication service (replication/replication_service.h): whether it is a replica, whether its
// link to the primary is up, and, on a primary, how many replicas are good enough for
// min-replicas-to-write. The dispatcher refuses commands by it (-NOREPLICAS, -READONLY,
// -MASTERDOWN); lookups hide expired keys instead of deleting them while `replica` is set (the
// keyspace's expiry is held: only the primary's DEL removes a key).
#pragma once

#include <cstdint>

namespace keywarden {

struct ReplicationRole {
  // replicaof is set: the server follows a primary (linked or not).
  bool replica = false;
  // The link with the primary is up and synchronized (INFO master_link_status:up).
  bool link_up = false;
  bool read_only = true;          // replica-read-only
  bool serve_stale_data = true;   // replica-serve-stale-data
  bool ignore_maxmemory = true;   // replica-ignore-maxmemory: a replica does not evict
  // min-replicas-to-write / min-replicas-max-lag, and the replicas whose last ACK is no older
  // than the lag (counted by the primary side once a second).
  int64_t min_replicas_to_write = 0;
  int64_t min_replicas_max_lag = 10;
  int64_t good_replicas = 0;
  // The replication offset (ReplicationIds::offset), mirrored by the replication service so
  // that the dispatcher can note each client's write offset (ClientSession::write_offset).
  int64_t offset = 0;

  // Whether a write is refused with -NOREPLICAS (Redis's checkGoodReplicasStatus, negated).
  bool too_few_replicas() const {
    return !replica && min_replicas_max_lag != 0 && min_replicas_to_write != 0 &&
           good_replicas < min_replicas_to_write;
  }
};

}  // namespace keywarden
