// The replication directives of Redis 7.0, both sides' (the service registers them; CONFIG
// GET/SET and the config file reach them there).
#pragma once

#include <cstdint>
#include <string>

namespace keywarden {

// repl-diskless-load, numbered as its choices.
enum DisklessLoad : int { kDisklessLoadDisabled = 0, kDisklessLoadOnEmptyDb = 1, kDisklessLoadSwapDb = 2 };

struct ReplicationSettings {
  // ---- replica side ----
  // replicaof <host> <port>: empty host when the server is a primary.
  std::string primary_host;
  int64_t primary_port = 0;
  std::string masterauth;
  std::string masteruser;
  std::string announce_ip;        // replica-announce-ip
  int64_t announce_port = 0;      // replica-announce-port
  bool announced = true;          // replica-announced
  int64_t priority = 100;         // replica-priority
  bool read_only = true;          // replica-read-only
  bool serve_stale_data = true;   // replica-serve-stale-data
  int diskless_load = kDisklessLoadDisabled;  // a DisklessLoad
  bool ignore_disk_write_errors = false;      // replica-ignore-disk-write-errors
  bool ignore_maxmemory = true;               // replica-ignore-maxmemory

  // ---- primary side ----
  int64_t min_replicas_to_write = 0;
  int64_t min_replicas_max_lag = 10;
  int64_t backlog_size = 1024 * 1024;  // repl-backlog-size
  int64_t backlog_ttl = 3600;          // repl-backlog-ttl, seconds without replicas
  bool disable_tcp_nodelay = false;    // repl-disable-tcp-nodelay
  bool diskless_sync = true;           // repl-diskless-sync
  int64_t diskless_sync_delay = 5;     // repl-diskless-sync-delay, seconds
  int64_t diskless_sync_max_replicas = 0;
  int64_t ping_replica_period = 10;    // repl-ping-replica-period, seconds
  int64_t timeout = 60;                // repl-timeout, seconds
};

}  // namespace keywarden
