// MIGRATE's cached outgoing connections (migrate_socket.h).
#include "persistence/migrate_socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <iterator>
#include <random>

namespace keywarden {
namespace {

int64_t monotonic_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Waits until `fd` has `events`, at most `timeout_ms` (at least 10 ms, Redis's resolution).
bool wait_for(int fd, short events, int64_t timeout_ms) {
  pollfd entry{fd, events, 0};
  const int wait = static_cast<int>(std::max<int64_t>(timeout_ms, 10));
  for (;;) {
    const int ready = ::poll(&entry, 1, wait);
    if (ready < 0 && errno == EINTR) continue;
    return ready > 0;
  }
}

// Starts a non-blocking connect to the first address of host:port that accepts one, as
// Redis's anetTcpNonBlockConnect; -1 when none does.
int start_connect(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* address = found; address != nullptr; address = address->ai_next) {
    fd = ::socket(address->ai_family, address->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                  address->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, address->ai_addr, address->ai_addrlen) == 0 || errno == EINPROGRESS) break;
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(found);
  return fd;
}

std::string target_name(std::string_view host, std::string_view port) {
  std::string name(host);
  name += ':';
  name += port;
  return name;
}

}  // namespace

MigrateConnection::~MigrateConnection() { ::close(fd_); }

SyncStatus MigrateConnection::write_all(std::string_view data, int64_t timeout_ms) {
  const int64_t start = monotonic_ms();
  for (;;) {
    const ssize_t written = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (written < 0 && errno != EAGAIN && errno != EINTR) return SyncStatus::kError;
    if (written > 0) data.remove_prefix(static_cast<size_t>(written));
    if (data.empty()) return SyncStatus::kOk;
    const int64_t elapsed = monotonic_ms() - start;
    if (elapsed >= timeout_ms) return SyncStatus::kTimeout;
    wait_for(fd_, POLLOUT, timeout_ms - elapsed);
    if (monotonic_ms() - start >= timeout_ms) return SyncStatus::kTimeout;
  }
}

SyncStatus MigrateConnection::read_line(std::string* line, int64_t timeout_ms) {
  for (;;) {
    const size_t end = buffered_.find('\n');
    if (end != std::string::npos) {
      line->assign(buffered_, 0, end);
      if (!line->empty() && line->back() == '\r') line->pop_back();
      buffered_.erase(0, end + 1);
      return SyncStatus::kOk;
    }
    if (!wait_for(fd_, POLLIN, timeout_ms)) return SyncStatus::kTimeout;
    char chunk[4096];
    const ssize_t count = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (count < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (count <= 0) return SyncStatus::kError;
    buffered_.append(chunk, static_cast<size_t>(count));
  }
}

MigrateConnection* MigrateConnections::get(std::string_view host, std::string_view port,
                                           int64_t timeout_ms, int64_t now_s) {
  const std::string name = target_name(host, port);
  if (auto it = cached_.find(name); it != cached_.end()) {
    it->second->last_use_s = now_s;
    return it->second.get();
  }
  if (cached_.size() >= kMaxCached) {
    static std::mt19937 rng(std::random_device{}());
    cached_.erase(std::next(cached_.begin(), static_cast<long>(rng() % cached_.size())));
  }
  // The port is read as atoi reads it ("abc" is 0), as Redis does.
  const int fd = start_connect(std::string(host), std::atoi(std::string(port).c_str()));
  if (fd < 0) return nullptr;
  // As in Redis, a connect still pending after the timeout is kept: the first write then
  // times out, or fails once the connect does.
  wait_for(fd, POLLOUT, timeout_ms);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  auto connection = std::make_unique<MigrateConnection>(fd);
  connection->last_use_s = now_s;
  MigrateConnection* result = connection.get();
  cached_.emplace(name, std::move(connection));
  return result;
}

void MigrateConnections::close(std::string_view host, std::string_view port) {
  if (auto it = cached_.find(target_name(host, port)); it != cached_.end()) cached_.erase(it);
}

void MigrateConnections::close_idle(int64_t now_s) {
  std::erase_if(cached_, [&](const auto& item) { return now_s - item.second->last_use_s > kIdleSeconds; });
}

}  // namespace keywarden
