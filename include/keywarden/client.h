// keywarden::Client: a thread-safe handle on one server (or on a Redis Cluster, when
// ClientOptions::cluster names its nodes: each command then goes to its key's node). Commands borrow a connection from a
// small pool, so any number of threads may share one Client; a broken connection is dropped
// and reopened (with backoff) by a later command. Pipeline batches commands into one round
// trip; transaction() wraps a batch in MULTI/EXEC; eval_sha() runs a Script by its SHA-1 and
// loads it on the server when the server does not know it yet.
#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "keywarden/errors.h"
#include "keywarden/options.h"
#include "keywarden/reply.h"

namespace keywarden {

namespace detail {

// A command argument: anything that reads as a string, or a number (sent as its decimal
// text). bool is left out on purpose: Redis has no boolean arguments.
template <typename T>
concept CommandArgument =
    std::convertible_to<const T&, std::string_view> ||
    ((std::integral<T> || std::floating_point<T>) && !std::same_as<T, bool>);

// Shortest text that reads back as the same double ("inf"/"-inf" as Redis spells them).
std::string format_double_argument(double value);

template <typename T>
void append_argument(std::vector<std::string>& out, const T& value) {
  if constexpr (std::convertible_to<const T&, std::string_view>) {
    out.emplace_back(std::string_view(value));
  } else if constexpr (std::floating_point<T>) {
    out.push_back(format_double_argument(static_cast<double>(value)));
  } else if constexpr (std::is_signed_v<T>) {
    out.push_back(std::to_string(static_cast<long long>(value)));
  } else {
    out.push_back(std::to_string(static_cast<unsigned long long>(value)));
  }
}

template <typename... Args>
std::vector<std::string> to_arguments(const Args&... args) {
  std::vector<std::string> out;
  out.reserve(sizeof...(Args));
  (append_argument(out, args), ...);
  return out;
}

class ConnectionPool;
class ClusterRouter;
class SentinelWatch;
class LockService;

}  // namespace detail

class Client;
class Lock;
class SimpleLock;
class FairLock;
class FencedLock;
class ReadWriteLock;
class MultiLock;
class Semaphore;
class PermitExpirableSemaphore;
class CountDownLatch;

// Commands collected locally and sent in one write; exec() reads every reply. Error replies
// stay in the result as error Replies: one failed command does not hide the others' results.
class Pipeline {
 public:
  Pipeline& add(std::initializer_list<std::string_view> args);
  Pipeline& add(const std::vector<std::string>& args);
  template <detail::CommandArgument... Args>
    requires(sizeof...(Args) > 0)
  Pipeline& add(const Args&... args) {
    return add(detail::to_arguments(args...));
  }

  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }

  // Sends the commands and returns their replies in order; the pipeline is empty afterwards.
  // Throws TransportError / TimeoutError / ProtocolError for the batch as a whole.
  std::vector<Reply> exec();

 private:
  friend class Client;
  explicit Pipeline(Client& client) : client_(&client) {}

  Client* client_;
  std::string encoded_;
  size_t count_ = 0;
};

// A Lua script known by its SHA-1 (computed locally), for Client::eval_sha.
class Script {
 public:
  explicit Script(std::string source);
  const std::string& source() const { return source_; }
  const std::string& sha() const { return sha_; }

 private:
  std::string source_;
  std::string sha_;
};

class Client {
 public:
  // Connects lazily: the first command opens the first connection, so a Client can be made
  // while its server is still down. Throws Error for options it cannot use (resp not 2 or 3).
  explicit Client(ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Runs one command and returns its reply; an error reply throws ServerError. Through Sentinel
  // with SentinelOptions::ReadFrom::kReplicaPreferred, the read-only commands of its list go
  // to a replica (command_on_primary does not). Not for
  // commands that put the connection in subscribed mode (SUBSCRIBE, PSUBSCRIBE...) or MONITOR;
  // out-of-band RESP3 pushes arriving on a command connection are discarded.
  Reply command(std::initializer_list<std::string_view> args);
  Reply command(const std::vector<std::string>& args);
  template <detail::CommandArgument... Args>
    requires(sizeof...(Args) > 0)
  Reply command(const Args&... args) {
    return command(detail::to_arguments(args...));
  }

  // command() on the primary even when SentinelOptions::read_from would send it to a replica
  // (a read that must see this client's own writes).
  Reply command_on_primary(const std::vector<std::string>& args);
  template <detail::CommandArgument... Args>
    requires(sizeof...(Args) > 0)
  Reply command_on_primary(const Args&... args) {
    return command_on_primary(detail::to_arguments(args...));
  }

  Pipeline pipeline() { return Pipeline(*this); }

  // MULTI, the commands `body` adds, EXEC, in one round trip on one connection; returns EXEC's
  // replies (an error of one command inside stays an error Reply). Throws ServerError when
  // the server refuses the transaction (EXECABORT: a command was rejected while queueing).
  std::vector<Reply> transaction(const std::function<void(Pipeline&)>& body);

  // EVALSHA script.sha() numkeys keys... args...; on NOSCRIPT, SCRIPT LOAD the source and
  // retry once. An error reply throws ServerError.
  Reply eval_sha(const Script& script, const std::vector<std::string>& keys = {},
                 const std::vector<std::string>& args = {});

  const ClientOptions& options() const { return options_; }

  // Handles on the distributed locks and synchronizers named `name`, with Redisson's
  // semantics and key layout (see keywarden/lock.h and the headers of each kind). Handles
  // must not outlive the Client.
  Lock get_lock(std::string name);
  // A non-reentrant single-key lock with an explicit lease (keywarden/simple_lock.h).
  SimpleLock get_simple_lock(std::string name);
  FairLock get_fair_lock(std::string name);
  FencedLock get_fenced_lock(std::string name);
  ReadWriteLock get_read_write_lock(std::string name);
  // All-or-nothing over the reentrant locks `names` of this server.
  MultiLock get_multi_lock(const std::vector<std::string>& names);
  Semaphore get_semaphore(std::string name);
  PermitExpirableSemaphore get_permit_expirable_semaphore(std::string name);
  CountDownLatch get_count_down_latch(std::string name);

 private:
  friend class Pipeline;
  friend class Semaphore;
  friend class PermitExpirableSemaphore;
  friend class CountDownLatch;
  friend class SimpleLock;
  friend class detail::LockService;
  // Whether the server has Redis 8.4's conditional writes (DELEX, SET … IFEQ): asked once
  // (COMMAND INFO DELEX); forget_conditional_writes() after an "unknown command" from a server
  // reached later makes every caller use the scripts from then on.
  bool has_conditional_writes();
  void forget_conditional_writes() { conditional_writes_.store(kAbsent); }
  // The locks' shared state, made on first use.
  std::shared_ptr<detail::LockService> lock_service();
  // Sends `count` encoded commands on one borrowed connection and returns their replies; on a
  // replica's connection with `on_replica` and a replica pool.
  std::vector<Reply> round_trip(const std::string& encoded, size_t count, bool on_replica = false);
  // One command, on a replica when `may_use_replica` and it is read-only; throws error replies.
  Reply run_command(const std::string& encoded, std::string_view name, bool may_use_replica);
  // eval_sha, then `WAIT replicas timeout` in the same round trip on the same connection (WAIT
  // counts the replicas that acknowledged what its own connection wrote): the script's reply
  // and that count. The round trip lasts up to `timeout` longer than the script.
  std::pair<Reply, int64_t> eval_sha_and_wait(const Script& script,
                                              const std::vector<std::string>& keys,
                                              const std::vector<std::string>& args, int replicas,
                                              std::chrono::milliseconds timeout);

  // An error reply as the exception command() and eval_sha() throw: ClusterError for the
  // codes of a Redis Cluster (CROSSSLOT, MOVED, ASK, TRYAGAIN, CLUSTERDOWN), else ServerError.
  [[noreturn]] void throw_error_reply(const Reply& reply, std::string_view command) const;

  // Through Sentinel: the epoch of the sentinels' +switch-master announcements that every
  // connection of this client follows (null otherwise).
  const std::atomic<uint64_t>* sentinel_epoch() const;

  ClientOptions options_;
  // Through Sentinel: follows +switch-master (declared before the pool, which uses its epoch).
  std::unique_ptr<detail::SentinelWatch> sentinel_watch_;
  // One of the two: the pool of the one server, or the router over a Redis Cluster's nodes.
  std::unique_ptr<detail::ConnectionPool> pool_;
  std::unique_ptr<detail::ClusterRouter> cluster_;
  // Through Sentinel with ReadFrom::kReplicaPreferred: connections to replicas, for reads.
  std::unique_ptr<detail::ConnectionPool> replica_pool_;
  static constexpr int kUnknown = -1, kAbsent = 0, kPresent = 1;
  std::atomic<int> conditional_writes_{kUnknown};
  // The locks' shared state (client id, subscriber, watchdog), made by the first get_lock();
  // declared last so its watchdog stops before the pool goes.
  std::once_flag lock_service_once_;
  std::shared_ptr<detail::LockService> lock_service_;
};

}  // namespace keywarden
