// The client registry (client_registry.h): connections, their life cycle, client eviction,
// the clients' directives, INFO clients and the CLIENT command.
#include "server/client_registry.h"

#include <openssl/ssl.h>

#include "replication/primary.h"
#include "replication/replication_service.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "commands/config_registry.h"
#include "commands/info_text.h"
#include "commands/server_state.h"
#include "common/ascii.h"
#include "common/log.h"
#include "common/number.h"
#include "persistence/aof_service.h"
#include "resp/split_arguments.h"
#include "scripting/script_engine.h"
#include "server/diagnostics.h"
#include "server/server_families.h"

namespace keywarden {
namespace {

constexpr std::string_view kProtectedModeReply =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from the "
    "loopback interface. If you want to connect from external computers to Redis you may adopt "
    "one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG "
    "SET protected-mode no' from the loopback interface by connecting to Redis from the same "
    "host the server is running, however MAKE SURE Redis is not publicly accessible from "
    "internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively "
    "you can just disable the protected mode by editing the Redis configuration file, and "
    "setting the protected mode option to 'no', and then restarting the server. 3) If you "
    "started the server manually just for testing, restart it with the '--protected-mode no' "
    "option. 4) Setup a an authentication password for the default user. NOTE: You only need to "
    "do one of the above things in order for the server to start accepting connections from "
    "the outside.\r\n";

// Redis's floor, so that a tiny setting (or a tiny maxmemory percentage) cannot evict every
// client as soon as it connects.
constexpr size_t kMinClientEvictionLimit = 128 * 1024;

// Operations per io_uring system call: an epoll batch brings at most 1024 connections.
constexpr unsigned kUringEntries = 256;

std::string format_address(const sockaddr_storage& address) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (address.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  if (address.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  return "";
}

bool is_loopback(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (address.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
    if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) return true;
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) return in6->sin6_addr.s6_addr[12] == 127;
  }
  return false;
}

}  // namespace

ClientRegistry::ClientRegistry(ServerState& state, Dispatcher& dispatcher, EventLoop& loop,
                               const int& hz)
    : state_(state), dispatcher_(dispatcher), loop_(loop), hz_(hz) {
  state_.services().provide<ClientRegistry>(this);
  // Tracking messages go to live connections only.
  state_.tracking().set_client_finder([this](uint64_t id) -> ClientSession* {
    Connection* found = connection(id);
    return found != nullptr && !found->closed() ? &found->session() : nullptr;
  });
}

ClientRegistry::~ClientRegistry() {
  drop_all();
  if (state_.services().find<ClientRegistry>() == this) {
    state_.services().provide<ClientRegistry>(nullptr);
  }
}

void ClientRegistry::install_acl_hooks() {
  AclStore& acl = state_.acl();
  acl.client_info = [this](const ClientSession& session, const Command* running) {
    Connection* client = connection(session.id);
    return client == nullptr ? std::string()
                             : client_info_line(*client, state_.clock().wall_ms(), running);
  };
  // A deleted user's clients go: at once, or the caller once its reply is out. Until then
  // they are the default user, unauthenticated, so nothing more runs as the deleted user.
  acl.user_removed = [this](const AclUser& user) {
    for (const auto& [id, client] : connections_) {
      ClientSession& session = client->session();
      if (client->closed() || session.user.get() != &user) continue;
      session.user = state_.acl().default_user();
      session.authenticated = false;
      if (client->executing()) {
        session.close_after_reply = true;
      } else {
        client->close();
      }
    }
  };
  // Narrowed channel rules: the user's subscribers whose subscriptions the new rules no longer
  // allow are disconnected, as Redis's ACLKillPubsubClientsIfNeeded does.
  acl.channels_narrowed = [this](const AclUser& user, const AclUser& updated) {
    std::vector<std::string> allowed;
    for (const AclSelector& selector : updated.selectors) {
      if (selector.all_channels) return;
      allowed.insert(allowed.end(), selector.channels.begin(), selector.channels.end());
    }
    bool superset = true;
    for (const AclSelector& selector : user.selectors) {
      for (const std::string& channel : selector.channels) {
        superset = superset && std::find(allowed.begin(), allowed.end(), channel) != allowed.end();
      }
    }
    if (superset) return;
    AclUser survivor;
    survivor.selectors.emplace_back();
    survivor.selectors.front().channels = std::move(allowed);
    for (const auto& [id, client] : connections_) {
      if (client->closed() || client->session().user.get() != &user ||
          !client->session().subscribed()) {
        continue;
      }
      const Subscriber& subscriptions = *client;
      bool kill = false;
      for (const std::string& pattern : subscriptions.patterns()) {
        kill = kill || !AclStore::channel_allowed(survivor, pattern, true);
      }
      for (const std::string& channel : subscriptions.channels()) {
        kill = kill || !AclStore::channel_allowed(survivor, channel, false);
      }
      for (const std::string& channel : subscriptions.shard_channels()) {
        kill = kill || !AclStore::channel_allowed(survivor, channel, false);
      }
      if (kill) client->close();
    }
  };
}

void ClientRegistry::install(ServiceSetup& setup) {
  aof_ = state_.services().find<AofService>();
  diagnostics_ = state_.services().find<Diagnostics>();
  scripting_ = state_.services().find<ScriptEngine>();
  replication_ = state_.services().find<ReplicationService>();
  state_.services().provide<ReplicationHost>(this);
  register_client_commands(setup.commands);
  register_config(setup.config);
  install_acl_hooks();
  setup.info.add("clients", 0, [this](InfoText& info) {
    size_t connected = 0, max_input = 0, max_output = 0;
    for (const auto& [id, connection] : connections_) {
      if (connection->closed()) continue;
      ++connected;
      max_input = std::max(max_input, connection->query_buffer_capacity());
      max_output = std::max(max_output, connection->output_memory());
    }
    info.field("connected_clients", connected);
    info.field("cluster_connections", 0);
    info.field("maxclients", settings_.maxclients);
    // Redis tracks these peaks over the last seconds; keywarden reports the current largest.
    info.field("client_recent_max_input_buffer", max_input);
    info.field("client_recent_max_output_buffer", max_output);
    const BlockingRegistry& blocking = state_.blocking();
    // Clients held by CLIENT PAUSE count as blocked, as in Redis 7.0 (tooling waits on it).
    info.field("blocked_clients",
               blocking.blocked_count() + static_cast<uint64_t>(clients_held_by_pause_));
    info.field("tracking_clients", state_.tracking().clients());
    info.field("clients_in_timeout_table", blocking.timed_count());
  });
}

void ClientRegistry::register_config(ConfigRegistry& c) {
  constexpr int64_t kMax = INT64_MAX;
  c.add_integer("maxclients", &settings_.maxclients, 1, kMax);
  c.add_integer("timeout", &settings_.timeout, 0, INT32_MAX);
  c.add_integer("tcp-keepalive", &settings_.tcp_keepalive, 0, INT32_MAX);
  c.add_integer("tracking-table-max-keys", &settings_.tracking_table_max_keys, 0, kMax);
  c.add_memory("client-query-buffer-limit", &limits_.query_buffer_limit, 1024 * 1024, kMax);
  c.add({"maxmemory-clients", {}, 0,
         [this] {
           const int64_t value = settings_.maxmemory_clients;
           return value < 0 ? std::to_string(-value) + "%" : std::to_string(value);
         },
         [this](std::string_view value, bool) -> std::string {
           constexpr const char* kMalformed = "argument must be a memory or percent value";
           int64_t number;
           if (value.ends_with('%')) {
             if (!parse_int64(value.substr(0, value.size() - 1), &number) || number < 0) {
               return kMalformed;
             }
             if (number > 100) return "percentage argument must be less or equal to 100";
             settings_.maxmemory_clients = -number;
           } else {
             if (!parse_memory(value, &number)) return kMalformed;
             settings_.maxmemory_clients = number;
           }
           return "";
         }});
  c.add({"client-output-buffer-limit", {}, kConfigMultiArg,
         [this] {
           static constexpr std::string_view kNames[] = {"normal", "slave", "pubsub"};
           std::string text;
           for (int i = 0; i < 3; ++i) {
             const OutputBufferLimit& limit = limits_.output[i];
             if (!text.empty()) text += ' ';
             text += kNames[i];
             text += ' ' + std::to_string(limit.hard) + ' ' + std::to_string(limit.soft) + ' ' +
                     std::to_string(limit.soft_seconds);
           }
           return text;
         },
         [this](std::string_view value, bool) -> std::string {
           // Classes named in the value change; the others keep their limits. All or nothing.
           std::vector<std::string> words;
           if (!split_arguments(value, words) || words.size() % 4 != 0) {
             return "Wrong number of arguments in buffer limit configuration.";
           }
           OutputBufferLimit limits[3];
           std::copy(std::begin(limits_.output), std::end(limits_.output), limits);
           for (size_t i = 0; i < words.size(); i += 4) {
             int index;
             const std::string& name = words[i];
             if (equals_ignore_case(name, "normal")) {
               index = kOutputClassNormal;
             } else if (equals_ignore_case(name, "slave") || equals_ignore_case(name, "replica")) {
               index = kOutputClassReplica;
             } else if (equals_ignore_case(name, "pubsub")) {
               index = kOutputClassPubSub;
             } else {
               return "Invalid client class specified in buffer limit configuration.";
             }
             OutputBufferLimit limit;
             if (!parse_memory(words[i + 1], &limit.hard) ||
                 !parse_memory(words[i + 2], &limit.soft) ||
                 !parse_int64(words[i + 3], &limit.soft_seconds) || limit.hard < 0 ||
                 limit.soft < 0 || limit.soft_seconds < 0) {
               return "Error in hard, soft or soft_seconds setting in buffer limit "
                      "configuration.";
             }
             limits[index] = limit;
           }
           std::copy(std::begin(limits), std::end(limits), limits_.output);
           return "";
         }});
}

void ClientRegistry::accept(int fd, const sockaddr_storage& address, std::string_view unix_path,
                            bool protected_mode, const TlsContextPtr* tls, int auth_clients) {
  ++stats_.total_connections_received;
  const bool unix_socket = !unix_path.empty();
  std::string peer, local;
  if (unix_socket) {
    peer = std::string(unix_path) + ":0";
    local = std::string(unix_path) + ":0";
  } else {
    peer = format_address(address);
    sockaddr_storage mine{};
    socklen_t mine_length = sizeof(mine);
    getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &mine_length);
    local = format_address(mine);
    int yes = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    if (settings_.tcp_keepalive > 0) {
      setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &yes, sizeof(yes));
      int idle = static_cast<int>(settings_.tcp_keepalive);
      setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    }
  }
  if (static_cast<int64_t>(connections_.size()) >= settings_.maxclients) {
    static constexpr std::string_view kReply = "-ERR max number of clients reached\r\n";
    if (tls == nullptr) {
      [[maybe_unused]] ssize_t ignored = ::send(fd, kReply.data(), kReply.size(), MSG_NOSIGNAL);
    }
    ++stats_.rejected_connections;
    close(fd);
    return;
  }
  if (!unix_socket && protected_mode && state_.acl().default_user()->nopass() &&
      !is_loopback(address)) {
    if (tls == nullptr) {
      [[maybe_unused]] ssize_t ignored =
          ::send(fd, kProtectedModeReply.data(), kProtectedModeReply.size(), MSG_NOSIGNAL);
    }
    ++stats_.rejected_connections;
    close(fd);
    return;
  }
  if (tls != nullptr && !*tls) {  // TLS is not configured (cannot happen with a tls-port)
    ++stats_.rejected_connections;
    close(fd);
    return;
  }
  uint64_t id = ++last_client_id_;
  auto connection = std::make_unique<Connection>(*this, fd, id, peer, local, unix_socket);
  if (tls != nullptr) {
    const int verify_mode = auth_clients == TlsSettings::kNo         ? SSL_VERIFY_NONE
                            : auth_clients == TlsSettings::kOptional ? SSL_VERIFY_PEER
                                                                     : -1;  // the context's
    if (std::string problem = connection->start_tls(*tls, verify_mode); !problem.empty()) {
      log_message(LogLevel::kWarning, "Error accepting a client connection: " + problem);
      connection->close();
      connections_.emplace(id, std::move(connection));  // reaped with the other closed ones
      return;
    }
  }
  connections_.emplace(id, std::move(connection));
}

Connection* ClientRegistry::connection(uint64_t id) {
  auto it = connections_.find(id);
  return it == connections_.end() ? nullptr : it->second.get();
}

bool ClientRegistry::script_running_for(const ClientSession& session) const {
  return scripting_ != nullptr && scripting_->running_caller() == &session;
}

void ClientRegistry::before_replies() {
  if (aof_ != nullptr) aof_->sync_before_replies();
}

void ClientRegistry::command_ran(Connection& connection, std::span<const std::string_view> args,
                                 const Command& command, int64_t duration_us) {
  if (diagnostics_ != nullptr) diagnostics_->after_command(connection, args, command, duration_us);
}

void ClientRegistry::queue_write(Connection* connection) {
  if (connection->pending_write) return;
  connection->pending_write = true;
  pending_writes_.push_back(connection);
}

void ClientRegistry::connection_closed(Connection* connection) {
  closed_connections_.push_back(connection->id());
  state_.tracking().disable(connection->session());
  // A closed connection's bound locks are free at once; their waiters are served after the
  // command that closed it, or before the loop sleeps. Not when the server drops every
  // connection on its way out: the locks' leases stay what the AOF and the replicas know.
  if (!dropping_all_) {
    release_bound_locks(dispatcher_, connection->session(), state_.clock().wall_ms());
  }
  client_memory_ -= connection->reported_memory;
  connection->reported_memory = 0;
  if (connection->monitor() && diagnostics_ != nullptr) {
    diagnostics_->remove_monitor(connection->id());
  }
  if (connection->held_by_pause()) --clients_held_by_pause_;
  if (connection->session().replica && replication_ != nullptr) {
    replication_->primary().replica_closed(connection->id());
  }
}

ReplicaChannel* ClientRegistry::replica_channel(uint64_t client_id) {
  Connection* found = connection(client_id);
  return found != nullptr && !found->closed() ? found : nullptr;
}

void ClientRegistry::retry_blocked_client(uint64_t client_id) {
  Connection* found = connection(client_id);
  if (found != nullptr && !found->closed() && found->session().blocked.blocked()) {
    found->retry_blocked();
  }
}

void ClientRegistry::end_blocked_clients(std::string_view error) {
  for (auto& [id, connection] : connections_) {
    if (!connection->closed() && connection->session().blocked.blocked()) {
      connection->end_blocked(error);
    }
  }
}

void ClientRegistry::serve_blocked_clients() {
  dispatcher_.serve_ready_keys([this](ClientSession& waiter) {
    if (Connection* blocked = connection(waiter.id)) blocked->retry_blocked();
  });
}

void ClientRegistry::resume_later(Connection* connection) {
  resume_ids_.push_back(connection->id());
}

void ClientRegistry::before_sleep() {
  const Clock& clock = state_.clock();
  // Clients held by CLIENT PAUSE run here, never inside the command that ended the pause.
  ClientPause& pause = state_.client_pause();
  pause.end_if_due(clock.wall_ms());
  if (pause.take_ended()) {
    // Expiry was held by the pause: keys that fell due meanwhile go before the held clients
    // run, as Redis's fast expire cycle runs before it reprocesses unblocked clients.
    state_.keyspace().active_expire_slice();
    state_.propagator().flush();
    for (auto& [id, connection] : connections_) connection->resume();
  }
  // CLIENT TRACKING's BCAST batches of this turn, and its table's limit.
  if (state_.tracking().active()) {
    state_.tracking().before_sleep(settings_.tracking_table_max_keys);
  }
  // Locks whose lease ended while native waiters queue: their waiters run again now, at the
  // deadline; the head finds the key expired (lazily, as any lookup) and takes the lock.
  // Not while CLIENT PAUSE holds writes (and expiry): the leases stay watched, and their
  // waiters run once it ends.
  if (state_.locks().earliest_lease_ms() != 0 && !pause.active()) {
    for (const LockTable::Name& name : state_.locks().take_ended_leases(clock.wall_ms())) {
      state_.blocking().signal(name.first, name.second);
    }
  }
  // Locks freed outside a command (active expiry, eviction in the cron, a bound holder's
  // connection closed) go to their first waiter now, in the same loop turn.
  if (state_.blocking().has_ready()) serve_blocked_clients();
  // Blocked clients whose deadline passed get their timeout reply; served and timed-out
  // clients then run what they sent meanwhile (which may serve or block others in turn).
  for (ClientSession* waiter : state_.blocking().timed_out(clock.wall_ms())) {
    if (Connection* blocked = connection(waiter->id)) blocked->end_blocked();
  }
  while (!resume_ids_.empty()) {
    std::vector<uint64_t> ids;
    ids.swap(resume_ids_);
    for (uint64_t id : ids) {
      if (Connection* resumed = connection(id)) resumed->resume();
    }
  }
}

void ClientRegistry::send_replies() {
  // A lowered maxmemory-clients (or maxmemory under a percentage) takes effect here.
  evict_clients();
  if (io_threads_ != nullptr || uring_ != nullptr) flush_batched();
  flush_pending_writes();
  reap_closed();
  int64_t deadline_ms = state_.blocking().earliest_deadline_ms();
  if (const int64_t lease_ms = state_.locks().earliest_lease_ms();
      lease_ms != 0 && !state_.client_pause().active() &&
      (deadline_ms == 0 || lease_ms < deadline_ms)) {
    deadline_ms = lease_ms;
  }
  if (deadline_ms != 0) {
    const ClockReading now = state_.clock().read();
    loop_.wake_by(now.monotonic_us + std::max<int64_t>(0, deadline_ms + 1 - now.wall_ms) * 1000);
  }
}

void ClientRegistry::flush_pending_writes() {
  // Flushing may close connections, which must not be destroyed while the list is walked.
  for (size_t i = 0; i < pending_writes_.size(); ++i) {
    Connection* connection = pending_writes_[i];
    connection->pending_write = false;
    connection->flush();
  }
  pending_writes_.clear();
}

void ClientRegistry::start_io_threads(int threads) {
  if (threads > 1) io_threads_ = std::make_unique<IoThreads>(threads);
}

bool ClientRegistry::start_io_uring() {
  std::string reason;
  uring_ = UringBatch::create(kUringEntries, &reason);
  if (uring_ == nullptr) {
    log_message(LogLevel::kWarning,
                "io-uring: cannot set up a ring (" + reason + "), using plain system calls");
    return false;
  }
  log_message(LogLevel::kNotice, "io_uring batches enabled (ring setup: " +
                                     describe_uring_flags(uring_->setup_flags()) + ")");
  return true;
}

size_t ClientRegistry::batch_threshold() const {
  // Redis's threshold for its threads: below two connections per thread the hand-over costs
  // more than it saves. A ring costs one system call, as one plain call does: two suffice.
  if (uring_ != nullptr) return 2;
  return 2 * static_cast<size_t>(io_threads_->threads());
}

void ClientRegistry::flush_batched() {
  size_t eligible = 0;
  for (Connection* connection : pending_writes_) {
    if (connection->writable_off_thread()) ++eligible;
  }
  const bool batched = eligible >= batch_threshold();
  io_threads_active_ = batched && uring_ == nullptr;
  if (!batched) return;
  // Bookkeeping before the round, on this thread. A connection taken for the round keeps its
  // pending_write mark until the round is over, so that nothing queues it a second time.
  io_batch_.clear();
  for (size_t i = 0; i < pending_writes_.size(); ++i) {
    Connection* connection = pending_writes_[i];
    if (!connection->writable_off_thread()) {
      io_remaining_.push_back(connection);
    } else if (connection->begin_flush()) {
      io_batch_.push_back(connection);
    } else {
      connection->pending_write = false;
    }
  }
  if (uring_ != nullptr) {
    auto prepare = [this](size_t index, UringBatch::Operation& operation) {
      const std::string_view output = io_batch_[index]->unsent_output();
      operation = {UringBatch::Kind::kSend, io_batch_[index]->fd(),
                   const_cast<char*>(output.data()), output.size()};
    };
    auto complete = [this](size_t index, int result) { io_batch_[index]->write_done(result); };
    uring_->for_each(io_batch_.size(), prepare, complete);
    stats_.io_uring_writes_processed += io_batch_.size();
  } else {
    auto write = [this](size_t index) { io_batch_[index]->write_output(); };
    io_threads_->for_each(io_batch_.size(), write);
    stats_.io_threaded_writes_processed += io_batch_.size();
  }
  // What end_flush() queues (a close reaching another client) joins the serial flush after.
  pending_writes_.swap(io_remaining_);
  io_remaining_.clear();
  for (Connection* connection : io_batch_) {
    connection->pending_write = false;
    connection->end_flush();
  }
  io_batch_.clear();
}

void ClientRegistry::read_batch(std::span<const ReadyEvent> batch) {
  if (io_threads_ == nullptr && uring_ == nullptr) return;
  io_batch_.clear();
  for (const ReadyEvent& event : batch) {
    if ((event.events & EventLoop::kReadable) == 0) continue;
    Connection* connection = dynamic_cast<Connection*>(event.handler);
    if (connection != nullptr && connection->readable_off_thread()) {
      io_batch_.push_back(connection);
    }
  }
  if (io_batch_.size() < batch_threshold()) {
    io_batch_.clear();
    return;
  }
  for (Connection* connection : io_batch_) connection->prepare_read();
  if (uring_ != nullptr) {
    auto prepare = [this](size_t index, UringBatch::Operation& operation) {
      const std::span<char> space = io_batch_[index]->read_space();
      operation = {UringBatch::Kind::kRecv, io_batch_[index]->fd(), space.data(), space.size()};
    };
    auto complete = [this](size_t index, int result) { io_batch_[index]->read_done(result); };
    uring_->for_each(io_batch_.size(), prepare, complete);
    stats_.io_uring_reads_processed += io_batch_.size();
  } else {
    auto read = [this](size_t index) { io_batch_[index]->read_input(); };
    io_threads_->for_each(io_batch_.size(), read);
    stats_.io_threaded_reads_processed += io_batch_.size();
  }
  for (Connection* connection : io_batch_) connection->finish_read();
  io_batch_.clear();
}

void ClientRegistry::reap_closed() {
  for (uint64_t id : closed_connections_) connections_.erase(id);
  closed_connections_.clear();
}

void ClientRegistry::flush_all() {
  for (auto& [id, connection] : connections_) connection->flush();
}

void ClientRegistry::drop_all() {
  dropping_all_ = true;
  connections_.clear();
  dropping_all_ = false;
}

void ClientRegistry::cron(int64_t now_ms) {
  close_idle_clients(now_ms);
  clients_cron(now_ms);
  check_output_limits();
}

void ClientRegistry::close_idle_clients(int64_t now_ms) {
  if (settings_.timeout <= 0) return;
  for (auto& [id, connection] : connections_) {
    // Replicas are watched by repl-timeout instead, as in Redis.
    if (connection->closed() || connection->monitor() || connection->session().replica) continue;
    if (now_ms - connection->last_interaction_ms() > settings_.timeout * 1000) connection->close();
  }
}

void ClientRegistry::clients_cron(int64_t now_ms) {
  // As Redis's clientsCron: a slice of the clients per tick (at least 5), so that every client
  // is visited about once a second and ten thousand clients never make one tick long.
  if (connections_.empty()) return;
  const size_t count = connections_.size();
  const size_t slice = std::min(count, std::max<size_t>(5, count / std::max(hz_, 1)));
  auto next = connections_.upper_bound(clients_cron_cursor_);
  for (size_t i = 0; i < slice; ++i) {
    if (next == connections_.end()) next = connections_.begin();
    clients_cron_cursor_ = next->first;
    Connection& connection = *next->second;
    ++next;
    connection.resize_buffers(now_ms);
  }
}

void ClientRegistry::check_output_limits() {
  for (auto& [id, connection] : connections_) {
    if (!connection->closed() && connection->output_memory() > 0) {
      connection->enforce_output_limit(/*from_cron=*/true);
    }
  }
}

size_t ClientRegistry::client_eviction_limit() const {
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

void ClientRegistry::client_memory_changed(Connection& connection) {
  // Closed or already evicted connections hold nothing that counts any more.
  if (connection.closed() || connection.close_asap()) return;
  const size_t now = connection.memory_usage();
  client_memory_ = client_memory_ - connection.reported_memory + now;
  connection.reported_memory = now;
  const size_t limit = client_eviction_limit();
  if (limit != 0 && client_memory_ >= limit) evict_clients();
}

void ClientRegistry::evict_clients() {
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
                "Evicting client: " + client_info_line(*victim, state_.clock().wall_ms()));
    client_memory_ -= victim->reported_memory;
    victim->reported_memory = 0;
    victim->evict();
    ++stats_.evicted_clients;
  }
}

}  // namespace keywarden
