// MIGRATE's outgoing connections: one cached connection per "host:port" target, with blocking
// I/O bounded by the command's timeout.
//
// MIGRATE runs synchronously on the command thread, as in Redis 7.0 (syncWrite/syncReadLine):
// the server answers nobody else while it talks to the target. What bounds the stall is the
// timeout: a connect waits at most that long for the socket to become writable, every write
// call at most that long in all, and every byte of a reply line at most that long (Redis reads
// replies a byte at a time with the timeout per read; we read what the socket has, with the
// same bound per wait). A connection is kept for the next MIGRATE to the same target, with the
// database it last selected, and closed by the cron after 10 seconds unused (Redis's
// MIGRATE_SOCKET_CACHE_TTL); at most 64 are kept, a random one making room for a new one.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace keywarden {

// How a blocking operation ended.
enum class SyncStatus { kOk, kTimeout, kError };

class MigrateConnection {
 public:
  explicit MigrateConnection(int fd) : fd_(fd) {}
  ~MigrateConnection();
  MigrateConnection(const MigrateConnection&) = delete;
  MigrateConnection& operator=(const MigrateConnection&) = delete;

  // Writes all of `data` within `timeout_ms`.
  SyncStatus write_all(std::string_view data, int64_t timeout_ms);
  // Reads one reply line (without CRLF) into *line, waiting at most `timeout_ms` for each
  // arrival of bytes.
  SyncStatus read_line(std::string* line, int64_t timeout_ms);

  int64_t last_db = -1;  // the database the target has selected for us; -1: unknown
  int64_t last_use_s = 0;

 private:
  int fd_;
  std::string buffered_;  // bytes read past the last line
};

class MigrateConnections {
 public:
  static constexpr size_t kMaxCached = 64;
  static constexpr int64_t kIdleSeconds = 10;

  // The cached connection to host:port, or a new one (connected within timeout_ms); null
  // when the address does not resolve or the socket cannot be created or started.
  MigrateConnection* get(std::string_view host, std::string_view port, int64_t timeout_ms,
                         int64_t now_s);
  void close(std::string_view host, std::string_view port);
  // From the cron: closes connections unused for more than kIdleSeconds.
  void close_idle(int64_t now_s);
  size_t size() const { return cached_.size(); }

 private:
  std::map<std::string, std::unique_ptr<MigrateConnection>, std::less<>> cached_;
};

}  // namespace keywarden
