#include "replication/replica.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

#include "commands/client_session.h"
#include "commands/command_table.h"
#include "commands/context.h"
#include "commands/dispatcher.h"
#include "commands/function_store.h"
#include "commands/info_text.h"
#include "common/ascii.h"
#include "common/log.h"
#include "common/number.h"
#include "persistence/aof_service.h"
#include "persistence/rdb_service.h"
#include "replication/primary.h"
#include "replication/replica_channel.h"
#include "replication/replication_service.h"
#include "resp/command_encoding.h"
#include "resp/reply_writer.h"

namespace keywarden {

namespace {

constexpr size_t kReadChunk = 64 * 1024;
// A handshake reply or bulk header longer than this is not Redis talking.
constexpr size_t kMaxLineLength = 64 * 1024;
constexpr size_t kRunIdSize = 40;

void log_notice(std::string_view text) { log_message(LogLevel::kNotice, text); }
void log_warning(std::string_view text) { log_message(LogLevel::kWarning, text); }

// One command in RESP, as the replica sends its own (REPLCONF ACK, PSYNC…).
std::string encode_command(std::initializer_list<std::string_view> args) {
  std::string out;
  append_resp_command(out, args);
  return out;
}

}  // namespace

ReplicaSide::ReplicaSide(ReplicationService& service)
    : service_(service), parser_(ParserLimits{ParserLimits::kUnlimitedBulk}) {}

ReplicaSide::~ReplicaSide() {
  close_link(false);
}

int64_t ReplicaSide::now_s() const { return service_.state().clock().wall_ms() / 1000; }

// ---- commands ----

namespace {

ReplicationService& service_of(CommandContext& ctx) { return ctx.service<ReplicationService>(); }

// REPLICAOF host port | NO ONE (replicaofCommand).
void replicaof_command(CommandContext& ctx) {
  ReplicationService& service = service_of(ctx);
  ReplicaSide& replica = service.replica();
  // A primary's stream cannot change where the replica applying it is linked (keywarden's
  // own rule: the link's buffers are in use while its commands run).
  if (ctx.session.primary_link) {
    ctx.error("ERR REPLICAOF is not accepted from the master link");
    return;
  }
  if (service.failover().active()) {
    ctx.error("ERR REPLICAOF not allowed while failing over.");
    return;
  }
  if (equals_ignore_case(ctx.args[1], "no") && equals_ignore_case(ctx.args[2], "one")) {
    if (service.is_replica()) {
      replica.promote();
      log_notice("MASTER MODE enabled (user request from 'id=" + std::to_string(ctx.session.id) +
                 "')");
    }
    ctx.reply.simple_string("OK");
    return;
  }
  // A replica of this server would be flushed with the rest by the new primary's sync.
  if (ctx.session.replica) {
    ctx.error("ERR Command is not valid when client is a replica.");
    return;
  }
  int64_t port;
  if (!parse_int64(ctx.args[2], &port) || port < 0 || port > 65535) {
    ctx.error("ERR Invalid master port");
    return;
  }
  const ReplicationSettings& settings = service.settings();
  if (service.is_replica() && equals_ignore_case(settings.primary_host, ctx.args[1]) &&
      settings.primary_port == port) {
    log_notice(
        "REPLICAOF would result into synchronization with the master we are already connected "
        "with. No operation performed.");
    ctx.reply.simple_string("OK Already connected to specified master");
    return;
  }
  replica.follow(std::string(ctx.args[1]), port);
  log_notice("REPLICAOF " + settings.primary_host + ":" + std::to_string(port) +
             " enabled (user request from 'id=" + std::to_string(ctx.session.id) + "')");
  ctx.reply.simple_string("OK");
}

// ROLE: ["master", offset, [[ip, port, offset]…]] or ["slave", host, port, state, offset].
void role_command(CommandContext& ctx) {
  ReplicationService& service = service_of(ctx);
  ReplyWriter& reply = ctx.reply;
  if (!service.is_replica()) {
    std::vector<ReplicaSummary> online;
    for (ReplicaSummary& replica : service.primary().replicas()) {
      if (replica.state == "online") online.push_back(std::move(replica));
    }
    reply.array_header(3);
    reply.bulk("master");
    reply.integer(service.ids().offset);
    reply.array_header(online.size());
    for (const ReplicaSummary& replica : online) {
      reply.array_header(3);
      reply.bulk(replica.ip);
      reply.bulk(std::to_string(replica.port));
      reply.bulk(std::to_string(replica.offset));
    }
    return;
  }
  const ReplicaSide& replica = service.replica();
  reply.array_header(5);
  reply.bulk("slave");
  reply.bulk(service.settings().primary_host);
  reply.integer(service.settings().primary_port);
  reply.bulk(replica.state_name());
  reply.integer(replica.link_up() ? service.ids().offset : -1);
}

constexpr uint32_t kReplicaofFlags = kAdmin | kNoScript | kStale | kNoAsyncLoading;

constexpr CommandSpec kReplicaCommands[] = {
    {"replicaof", 3, kReplicaofFlags, 0, 0, 0, kAclAdmin | kAclDangerous, replicaof_command,
     "server", "5.0.0", "Make the server a replica of another instance, or promote it as master.",
     "O(1)"},
    {"slaveof", 3, kReplicaofFlags, 0, 0, 0, kAclAdmin | kAclDangerous, replicaof_command,
     "server", "1.0.0", "Make the server a replica of another instance, or promote it as master.",
     "O(1)"},
    {"role", 1, kNoScript | kLoading | kStale | kFast, 0, 0, 0, kAclAdmin | kAclDangerous,
     role_command, "server", "2.8.12",
     "Return the role of the instance in the context of replication", "O(1)"},
};

}  // namespace

void ReplicaSide::install(ServiceSetup& setup) { setup.commands.add(kReplicaCommands); }

std::string_view ReplicaSide::state_name() const {
  switch (state_) {
    case LinkState::kNone: return "none";
    case LinkState::kConnect: return "connect";
    case LinkState::kConnecting: return "connecting";
    case LinkState::kTransfer: return "sync";
    case LinkState::kConnected: return "connected";
    default: return "handshake";
  }
}

// ---- role changes ----

void ReplicaSide::start() {
  // The RDB file loaded at start-up recorded where this replica stood: continue from there.
  const RdbLoadStats& loaded = service_.rdb().last_load();
  if (loaded.replication &&
      loaded.replication->stream_db < service_.state().keyspace().database_count()) {
    ReplicationIds& ids = service_.ids();
    ids.replid = loaded.replication->replid;
    ids.offset = loaded.replication->offset;
    resumable_ = true;
    stream_db_ = loaded.replication->stream_db;
    log_notice("Before turning into a replica, using my own master parameters to synthesize a "
               "cached master: I may be able to synchronize with the new master with just a "
               "partial transfer.");
  }
  state_ = LinkState::kConnect;
  connect_to_primary();
}

void ReplicaSide::follow(const std::string& host, int64_t port) {
  const bool was_primary = !service_.is_replica();
  // Clients blocked here (BLPOP, WAIT…) wait for writes that can no longer come from them.
  if (ReplicationHost* clients = service_.state().services().find<ReplicationHost>()) {
    clients->end_blocked_clients(
        "UNBLOCKED force unblock from blocking operation, instance state changed (master -> "
        "replica?)");
  }
  // The link to the former primary, if up, is kept as the history to offer the new one: a
  // promoted sibling continues it (PSYNC2).
  close_link(true);
  ReplicationSettings& settings = service_.settings();
  settings.primary_host = host;
  settings.primary_port = port;
  service_.settings_changed();
  if (was_primary) {
    // This server's own history is what it offers its new primary.
    resumable_ = true;
    stream_db_ = 0;
    down_since_s_ = 0;
    log_notice("Before turning into a replica, using my own master parameters to synthesize a "
               "cached master: I may be able to synchronize with the new master with just a "
               "partial transfer.");
  }
  state_ = LinkState::kConnect;
  log_notice("Connecting to MASTER " + host + ":" + std::to_string(port));
  connect_to_primary();
}

void ReplicaSide::promote() {
  close_link(false);
  resumable_ = false;
  ReplicationSettings& settings = service_.settings();
  settings.primary_host.clear();
  settings.primary_port = 0;
  // Former siblings may continue this history from the new replication ID (PSYNC2).
  service_.ids().shift();
  log_notice("Setting secondary replication ID to " + service_.ids().replid2 +
             ", valid up to offset: " + std::to_string(service_.ids().second_offset) +
             ". New replication ID is " + service_.ids().replid);
  service_.primary().disconnect_replicas();
  state_ = LinkState::kNone;
  down_since_s_ = 0;
  service_.settings_changed();
}

bool ReplicaSide::kill_link() {
  if (state_ != LinkState::kConnected) return false;
  log_notice("Connection with master lost.");
  close_link(true);
  return true;
}

bool ReplicaSide::save_info(int* stream_db) const {
  if (state_ == LinkState::kConnected && session_ != nullptr) {
    *stream_db = session_->db;
    return true;
  }
  if (resumable_) {
    *stream_db = stream_db_;
    return true;
  }
  return false;
}

// ---- the connection ----

void ReplicaSide::connect_to_primary() {
  const ReplicationSettings& settings = service_.settings();
  if (settings.primary_host.empty() || fd_ >= 0) return;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(settings.primary_port);
  if (int status = ::getaddrinfo(settings.primary_host.c_str(), port.c_str(), &hints, &found);
      status != 0) {
    log_warning(std::string("Unable to connect to MASTER: ") + gai_strerror(status));
    return;
  }
  const std::string source = service_.bind_source_addr();
  std::string error = "no address";
  for (addrinfo* address = found; address != nullptr && fd_ < 0; address = address->ai_next) {
    int fd = ::socket(address->ai_family, address->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                      address->ai_protocol);
    if (fd < 0) {
      error = std::strerror(errno);
      continue;
    }
    if (!source.empty()) {
      addrinfo source_hints{};
      source_hints.ai_family = address->ai_family;
      source_hints.ai_socktype = SOCK_STREAM;
      source_hints.ai_flags = AI_PASSIVE;
      addrinfo* bound = nullptr;
      bool ok = ::getaddrinfo(source.c_str(), nullptr, &source_hints, &bound) == 0;
      if (ok) ok = ::bind(fd, bound->ai_addr, bound->ai_addrlen) == 0;
      if (!ok) error = std::strerror(errno);
      if (bound != nullptr) ::freeaddrinfo(bound);
      if (!ok) {
        ::close(fd);
        continue;
      }
    }
    if (::connect(fd, address->ai_addr, address->ai_addrlen) == 0 || errno == EINPROGRESS) {
      fd_ = fd;
      break;
    }
    error = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (fd_ < 0) {
    log_warning("Unable to connect to MASTER: " + error);
    return;
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::setsockopt(fd_, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  state_ = LinkState::kConnecting;
  transfer_last_io_s_ = now_s();
  in_.clear();
  in_pos_ = 0;
  out_.clear();
  watching_writable_ = true;
  service_.loop().watch(fd_, EventLoop::kReadable | EventLoop::kWritable, this);
  log_notice("MASTER <-> REPLICA sync started");
}

void ReplicaSide::close_link(bool keep_history) {
  if (applying_) {
    // The stream's buffer and session are in use: closed once the command returns.
    close_requested_ = true;
    close_keeps_history_ = close_keeps_history_ && keep_history;
    return;
  }
  const bool was_up = state_ == LinkState::kConnected;
  if (fd_ >= 0) {
    service_.loop().unwatch(fd_);
    if (transport_) transport_->shutdown();
    transport_.reset();
    ::close(fd_);
    fd_ = -1;
  }
  watching_writable_ = false;
  remove_transfer_file();
  transfer_image_.clear();
  transfer_image_.shrink_to_fit();
  in_.clear();
  in_.shrink_to_fit();
  in_pos_ = 0;
  applied_upto_ = 0;
  out_.clear();
  parser_.reset();
  if (was_up) {
    if (keep_history) {
      // What the link applied is the history to resume; a MULTI cut in half is dropped (its
      // bytes were never counted, so the primary sends it again whole).
      resumable_ = true;
      if (session_ != nullptr) {
        stream_db_ = session_->db;
        session_->transaction.discard();
      }
      log_notice("Caching the disconnected master state.");
    }
    down_since_s_ = now_s();
  }
  session_.reset();
  service_.role().link_up = false;
  if (state_ != LinkState::kNone) state_ = LinkState::kConnect;
}

void ReplicaSide::fail() {
  close_link(false);
}

void ReplicaSide::remove_transfer_file() {
  if (transfer_fd_ >= 0) {
    ::close(transfer_fd_);
    transfer_fd_ = -1;
  }
  if (!transfer_path_.empty()) {
    ::unlink(transfer_path_.c_str());
    transfer_path_.clear();
  }
}

void ReplicaSide::send(std::string_view bytes) {
  out_.append(bytes);
  flush_output();
}

void ReplicaSide::flush_output() {
  while (!out_.empty() && fd_ >= 0) {
    ssize_t written = transport_->write(out_.data(), out_.size());
    if (written > 0) {
      out_.erase(0, static_cast<size_t>(written));
      continue;
    }
    if (written == Transport::kAgain) break;
    log_warning("Error writing to MASTER: " + transport_->error());
    if (state_ == LinkState::kConnected) log_notice("Connection with master lost.");
    close_link(true);
    return;
  }
  if (fd_ < 0 || state_ == LinkState::kConnecting) return;
  // A TLS read that must write first (a handshake step) waits for writability too.
  // A TLS write that needs the peer's bytes first waits for readability instead.
  const bool want_writable = (!out_.empty() && !transport_->write_wants_read()) ||
                             transport_->read_wants_write();
  if (want_writable != watching_writable_) {
    watching_writable_ = want_writable;
    service_.loop().update(
        fd_, EventLoop::kReadable | (want_writable ? EventLoop::kWritable : 0u), this);
  }
}

void ReplicaSide::on_events(uint32_t events) {
  // Loading a full sync lets the loop answer clients; the link waits until it is over.
  if (loading_ || fd_ < 0) return;
  const bool read_waits_for_write = transport_ && transport_->read_wants_write();
  if ((events & EventLoop::kWritable) || (transport_ && transport_->write_wants_read())) {
    if (state_ == LinkState::kConnecting) {
      on_writable();
    } else {
      flush_output();
    }
  }
  if (fd_ >= 0 && state_ != LinkState::kConnecting &&
      ((events & EventLoop::kReadable) ||
       (read_waits_for_write && (events & EventLoop::kWritable)))) {
    on_readable();
  }
}

void ReplicaSide::on_writable() {
  int error = 0;
  socklen_t length = sizeof error;
  if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
  if (error != 0) {
    log_warning(std::string("Error condition on socket for SYNC: ") + std::strerror(error));
    fail();
    return;
  }
  transport_ = std::make_unique<Transport>(fd_);
  if (const TlsContextPtr& tls = service_.tls_client_context()) {
    // tls-replication: the handshake runs as the PING goes out and its answer comes back.
    if (std::string problem = transport_->start_tls(tls, /*accepting=*/false); !problem.empty()) {
      log_warning("Error condition on socket for SYNC: " + problem);
      fail();
      return;
    }
  }
  log_notice("Non blocking connect for SYNC fired the event.");
  state_ = LinkState::kReceivePing;
  transfer_last_io_s_ = now_s();
  watching_writable_ = false;
  service_.loop().update(fd_, EventLoop::kReadable, this);
  send("PING\r\n");
}

void ReplicaSide::on_readable() {
  // Bounded per event so that a fast primary cannot starve the other clients.
  for (int reads = 0; reads < 16 && fd_ >= 0; ++reads) {
    // Bytes before keep_from are consumed and, on a live link, handed over too.
    const size_t keep_from =
        state_ == LinkState::kConnected ? std::min(applied_upto_, in_pos_) : in_pos_;
    if (keep_from > 0 && keep_from >= in_.size() / 2) {
      in_.erase(0, keep_from);
      in_pos_ -= keep_from;
      applied_upto_ = applied_upto_ > keep_from ? applied_upto_ - keep_from : 0;
    }
    const size_t old_size = in_.size();
    in_.resize(old_size + kReadChunk);
    ssize_t got = transport_->read(in_.data() + old_size, kReadChunk);
    if (got > 0) {
      in_.resize(old_size + static_cast<size_t>(got));
      // Decrypted bytes OpenSSL holds are not in the socket for the loop to report.
      while (size_t pending = transport_->pending()) {
        const size_t at = in_.size();
        in_.resize(at + pending);
        const ssize_t more = transport_->read(in_.data() + at, pending);
        in_.resize(at + static_cast<size_t>(std::max<ssize_t>(more, 0)));
        if (more <= 0) break;
      }
    } else {
      in_.resize(old_size);
      if (got == Transport::kAgain) {
        if (transport_->read_wants_write() || transport_->write_wants_read()) flush_output();
        return;
      }
      if (state_ == LinkState::kConnected) {
        log_notice("Connection with master lost.");
        close_link(true);
      } else if (state_ == LinkState::kTransfer) {
        log_warning("I/O error trying to sync with MASTER: connection lost");
        fail();
      } else {
        log_warning("Master closed the connection during the handshake");
        fail();
      }
      return;
    }
    transfer_last_io_s_ = now_s();
    last_interaction_s_ = transfer_last_io_s_;
    // Handshake replies, then possibly a payload and the stream in the same bytes.
    while (fd_ >= 0 && state_ != LinkState::kTransfer && state_ != LinkState::kConnected) {
      std::string line;
      if (!take_line(&line)) break;
      handle_line(line);
    }
    if (fd_ >= 0 && state_ == LinkState::kTransfer && receive_payload()) finish_full_sync();
    if (fd_ >= 0 && state_ == LinkState::kConnected) apply_stream();
  }
}

bool ReplicaSide::take_line(std::string* line) {
  const size_t end = in_.find('\n', in_pos_);
  if (end == std::string::npos) {
    if (in_.size() - in_pos_ > kMaxLineLength) {
      log_warning("Protocol error from MASTER: reply line too long");
      fail();
    }
    return false;
  }
  size_t stop = end;
  if (stop > in_pos_ && in_[stop - 1] == '\r') --stop;
  line->assign(in_, in_pos_, stop - in_pos_);
  in_pos_ = end + 1;
  return true;
}

// ---- the handshake ----

void ReplicaSide::handle_line(std::string_view line) {
  switch (state_) {
    case LinkState::kReceivePing:
      // -NOAUTH and -NOPERM mean the primary is alive and wants AUTH, which comes next.
      if (!line.empty() && line[0] == '-' && !line.starts_with("-NOAUTH") &&
          !line.starts_with("-NOPERM") && !line.starts_with("-ERR operation not permitted")) {
        log_warning("Error reply to PING from master: '" + std::string(line) + "'");
        fail();
        return;
      }
      log_notice("Master replied to PING, replication can continue...");
      send_handshake_commands();
      return;
    case LinkState::kReceiveAuth:
      if (!line.empty() && line[0] == '-') {
        log_warning("Unable to AUTH to MASTER: " + std::string(line));
        fail();
        return;
      }
      state_ = LinkState::kReceivePort;
      return;
    case LinkState::kReceivePort:
      if (!line.empty() && line[0] == '-') {
        log_notice("(Non critical) Master does not understand REPLCONF listening-port: " +
                   std::string(line));
      }
      state_ = ip_address_sent_ ? LinkState::kReceiveIp : LinkState::kReceiveCapa;
      return;
    case LinkState::kReceiveIp:
      if (!line.empty() && line[0] == '-') {
        log_notice("(Non critical) Master does not understand REPLCONF ip-address: " +
                   std::string(line));
      }
      state_ = LinkState::kReceiveCapa;
      return;
    case LinkState::kReceiveCapa:
      if (!line.empty() && line[0] == '-') {
        log_notice("(Non critical) Master does not understand REPLCONF capa: " +
                   std::string(line));
      }
      send_psync();
      return;
    case LinkState::kReceivePsync:
      handle_psync_reply(line);
      return;
    default:
      return;
  }
}

void ReplicaSide::send_handshake_commands() {
  const ReplicationSettings& settings = service_.settings();
  std::string commands;
  if (!settings.masterauth.empty()) {
    commands += settings.masteruser.empty()
                    ? encode_command({"AUTH", settings.masterauth})
                    : encode_command({"AUTH", settings.masteruser, settings.masterauth});
    state_ = LinkState::kReceiveAuth;
  } else {
    state_ = LinkState::kReceivePort;
  }
  const int64_t port =
      settings.announce_port != 0 ? settings.announce_port : service_.listening_port();
  commands += encode_command({"REPLCONF", "listening-port", std::to_string(port)});
  ip_address_sent_ = !settings.announce_ip.empty();
  if (ip_address_sent_) {
    commands += encode_command({"REPLCONF", "ip-address", settings.announce_ip});
  }
  commands += encode_command({"REPLCONF", "capa", "eof", "capa", "psync2"});
  send(commands);
}

void ReplicaSide::send_psync() {
  state_ = LinkState::kReceivePsync;
  const ReplicationIds& ids = service_.ids();
  if (resumable_) {
    const std::string offset = std::to_string(ids.offset + 1);
    log_notice("Trying a partial resynchronization (request " + ids.replid + ":" + offset + ").");
    if (service_.failover().in_progress()) {
      send(encode_command({"PSYNC", ids.replid, offset, "FAILOVER"}));
    } else {
      send(encode_command({"PSYNC", ids.replid, offset}));
    }
  } else {
    log_notice("Partial resynchronization not possible (no cached master)");
    if (service_.failover().in_progress()) {
      send(encode_command({"PSYNC", "?", "-1", "FAILOVER"}));
    } else {
      send(encode_command({"PSYNC", "?", "-1"}));
    }
  }
}

void ReplicaSide::handle_psync_reply(std::string_view line) {
  // The primary may send newlines to keep the link alive before it replies.
  if (line.empty()) return;
  // A FAILOVER's PSYNC to its target: any answer but a resynchronization rolls it back.
  if (service_.failover().in_progress()) {
    const bool accepted = line.starts_with("+FULLRESYNC") || line.starts_with("+CONTINUE");
    service_.failover().psync_answered(accepted);
    if (!accepted) return;
  }
  if (line.starts_with("+FULLRESYNC")) {
    // "+FULLRESYNC <replid> <offset>"
    std::string_view rest = line.substr(11);
    int64_t offset = -1;
    const bool well_formed = rest.size() > kRunIdSize + 2 && rest[0] == ' ' &&
                             rest[kRunIdSize + 1] == ' ' &&
                             parse_int64(rest.substr(kRunIdSize + 2), &offset) && offset >= 0;
    if (!well_formed) {
      log_warning("Master replied with wrong +FULLRESYNC syntax.");
      fail();
      return;
    }
    const std::string_view replid = rest.substr(1, kRunIdSize);
    log_notice("Full resync from master: " + std::string(replid) + ":" + std::to_string(offset));
    // The history offered is not the primary's: it is gone whatever happens next.
    resumable_ = false;
    begin_transfer(replid, offset);
    return;
  }
  if (line.starts_with("+CONTINUE")) {
    if (!resumable_) {
      log_warning("Master accepted a partial resynchronization this replica did not offer");
      fail();
      return;
    }
    std::string_view new_id = line.substr(9);
    while (!new_id.empty() && new_id.front() == ' ') new_id.remove_prefix(1);
    while (!new_id.empty() && (new_id.back() == ' ' || new_id.back() == '\r')) {
      new_id.remove_suffix(1);
    }
    log_notice("Successful partial resynchronization with master.");
    ReplicationIds& ids = service_.ids();
    if (new_id.size() == kRunIdSize && new_id != ids.replid) {
      // The primary's history changed (it was promoted): ours continues as the second one.
      ids.replid2 = ids.replid;
      ids.second_offset = ids.offset + 1;
      ids.replid = new_id;
      log_notice("Master replication ID changed to " + ids.replid);
      service_.primary().disconnect_replicas();
    }
    log_notice("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
    service_.primary().create_backlog();
    resumable_ = false;
    link_established(stream_db_);
    return;
  }
  if (line.starts_with("-NOMASTERLINK") || line.starts_with("-LOADING")) {
    log_notice("Master is currently unable to PSYNC but should be in the future: " +
               std::string(line));
    fail();
    return;
  }
  log_warning("Unexpected reply to PSYNC from master: " + std::string(line));
  fail();
}

// ---- the full synchronization ----

void ReplicaSide::begin_transfer(std::string_view replid, int64_t offset) {
  const ReplicationSettings& settings = service_.settings();
  state_ = LinkState::kTransfer;
  transfer_replid_ = replid;
  transfer_offset_ = offset;
  transfer_header_read_ = false;
  transfer_eof_mark_ = false;
  transfer_size_ = -1;
  transfer_read_ = 0;
  last_bytes_.clear();
  transfer_image_.clear();
  transfer_to_disk_ =
      !(settings.diskless_load == kDisklessLoadSwapDb ||
        (settings.diskless_load == kDisklessLoadOnEmptyDb &&
         service_.state().keyspace().total_keys() == 0));
  transfer_last_io_s_ = now_s();
  if (transfer_to_disk_) {
    // In `dir` (the server's working directory), as Redis names it.
    transfer_path_ = "temp-" + std::to_string(std::time(nullptr)) + "." +
                     std::to_string(::getpid()) + ".rdb";
    transfer_fd_ = ::open(transfer_path_.c_str(), O_CREAT | O_WRONLY | O_EXCL | O_CLOEXEC, 0644);
    if (transfer_fd_ < 0) {
      log_warning("Opening the temp file needed for MASTER <-> REPLICA synchronization: " +
                  std::string(std::strerror(errno)));
      transfer_path_.clear();
      fail();
    }
  }
}

bool ReplicaSide::receive_payload() {
  if (!transfer_header_read_) {
    std::string line;
    while (true) {
      if (!take_line(&line)) return false;
      // Newlines keep the link alive while the primary prepares the payload.
      if (!line.empty()) break;
    }
    if (line[0] == '-') {
      log_warning("MASTER aborted replication with an error: " + line.substr(1));
      fail();
      return false;
    }
    if (line[0] != '$') {
      log_warning("Bad protocol from MASTER, the first byte is not '$' (we received '" + line +
                  "'), are you sure the host and port are right?");
      fail();
      return false;
    }
    const char* target = transfer_to_disk_ ? "to disk" : "to parser";
    if (line.starts_with("$EOF:") && line.size() >= 5 + kRunIdSize) {
      transfer_eof_mark_ = true;
      eof_mark_ = line.substr(5, kRunIdSize);
      transfer_size_ = 0;
      log_notice(std::string("MASTER <-> REPLICA sync: receiving streamed RDB from master with "
                             "EOF ") + target);
    } else {
      int64_t size;
      if (!parse_int64(std::string_view(line).substr(1), &size) || size < 0) {
        log_warning("Bad protocol from MASTER, invalid bulk length '" + line + "'");
        fail();
        return false;
      }
      transfer_size_ = size;
      log_notice("MASTER <-> REPLICA sync: receiving " + std::to_string(size) +
                 " bytes from master " + target);
    }
    transfer_header_read_ = true;
  }
  // The payload bytes available now: all of them with an EOF mark (the primary sends nothing
  // after it until this replica ACKs), at most what is left of a `$<len>` payload (the stream
  // may follow at once).
  size_t available = in_.size() - in_pos_;
  if (!transfer_eof_mark_) {
    available = static_cast<size_t>(
        std::min<int64_t>(static_cast<int64_t>(available), transfer_size_ - transfer_read_));
  }
  std::string_view chunk(in_.data() + in_pos_, available);
  if (!chunk.empty()) {
    if (transfer_to_disk_) {
      std::string_view left = chunk;
      while (!left.empty()) {
        ssize_t written = ::write(transfer_fd_, left.data(), left.size());
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) {
          log_warning("Write error or short write writing to the DB dump file needed for "
                      "MASTER <-> REPLICA synchronization: " +
                      std::string(std::strerror(errno)));
          fail();
          return false;
        }
        left.remove_prefix(static_cast<size_t>(written));
      }
    } else {
      transfer_image_.append(chunk);
    }
    transfer_read_ += static_cast<int64_t>(chunk.size());
    if (transfer_eof_mark_) {
      last_bytes_.append(chunk);
      if (last_bytes_.size() > kRunIdSize) last_bytes_.erase(0, last_bytes_.size() - kRunIdSize);
    }
    in_pos_ += chunk.size();
  }
  if (transfer_eof_mark_) {
    if (last_bytes_ != eof_mark_) return false;
    // The mark is not part of the image.
    transfer_read_ -= static_cast<int64_t>(kRunIdSize);
    if (transfer_to_disk_) {
      if (::ftruncate(transfer_fd_, transfer_read_) != 0) {
        log_warning("Error truncating the RDB file received from the master for SYNC: " +
                    std::string(std::strerror(errno)));
        fail();
        return false;
      }
    } else {
      transfer_image_.resize(static_cast<size_t>(transfer_read_));
    }
    return true;
  }
  return transfer_read_ == transfer_size_;
}

void ReplicaSide::finish_full_sync() {
  ServerState& state = service_.state();
  RdbService& rdb = service_.rdb();
  const std::string dbfilename = rdb.settings().dbfilename;
  if (transfer_to_disk_) {
    if (::fsync(transfer_fd_) != 0) {
      log_warning("Failed trying to sync the temp DB to disk in MASTER <-> REPLICA "
                  "synchronization: " + std::string(std::strerror(errno)));
      fail();
      return;
    }
    ::close(transfer_fd_);
    transfer_fd_ = -1;
    if (::rename(transfer_path_.c_str(), dbfilename.c_str()) != 0) {
      log_warning("Failed trying to rename the temp DB into " + dbfilename +
                  " in MASTER <-> REPLICA synchronization: " + std::strerror(errno));
      fail();
      return;
    }
    transfer_path_.clear();
  }
  // A new history: this server's own replicas must sync again.
  service_.primary().disconnect_replicas();

  // An AOF holds the old dataset: it stops while the image replaces it and starts again
  // afterwards, which rewrites it from the new data (Redis's restartAOFAfterSYNC), so that a
  // crash meanwhile leaves the old, consistent files.
  AofService* aof = state.services().find<AofService>();
  const bool restart_aof = aof != nullptr && aof->settings().appendonly;
  if (restart_aof) aof->stop();

  log_notice("MASTER <-> REPLICA sync: Flushing old data");
  Keyspace& keyspace = state.keyspace();
  const bool lazy = keyspace.lazy_free().settings().replica_lazy_flush;
  const int64_t now_ms = state.clock().wall_ms();
  for (int i = 0; i < keyspace.database_count(); ++i) {
    state.watches().touch_all_in_db(keyspace.db(i), nullptr, now_ms);
    keyspace.db(i).clear(lazy);
  }
  if (FunctionStore* functions = state.services().find<FunctionStore>()) {
    functions->clear_libraries();
  }

  log_notice("MASTER <-> REPLICA sync: Loading DB in memory");
  loading_ = true;
  const ReplicationService::LoadingSupport& support = service_.loading_support();
  if (support.set_loading) {
    support.set_loading(true);
  } else {
    state.set_loading(true);
  }
  const RdbLoadHooks hooks = support.hooks ? support.hooks() : RdbLoadHooks{};
  std::string error = transfer_to_disk_ ? rdb.load_file_from_primary(dbfilename, hooks)
                                        : rdb.load_from_primary(transfer_image_, hooks);
  if (support.set_loading) {
    support.set_loading(false);
  } else {
    state.set_loading(false);
  }
  loading_ = false;
  transfer_image_.clear();
  transfer_image_.shrink_to_fit();
  if (restart_aof) {
    if (std::string problem = aof->start(); !problem.empty()) {
      log_warning("Failed enabling the AOF after successful master synchronization: " + problem);
    }
  }
  if (fd_ < 0) return;  // the link went away meanwhile (REPLICAOF from a client while loading)
  if (!error.empty()) {
    log_warning("Failed trying to load the MASTER synchronization DB from " +
                std::string(transfer_to_disk_ ? "disk" : "socket") + ", check server logs.");
    log_warning(error);
    fail();
    return;
  }
  log_notice("MASTER <-> REPLICA sync: Finished with success");

  ReplicationIds& ids = service_.ids();
  ids.replid = transfer_replid_;
  ids.offset = transfer_offset_;
  ids.replid2 = std::string(kRunIdSize, '0');
  ids.second_offset = -1;
  service_.primary().restart_history();
  const RdbLoadStats& loaded = rdb.last_load();
  const int db = loaded.replication && loaded.replication->stream_db < keyspace.database_count()
                     ? loaded.replication->stream_db
                     : 0;
  link_established(db);
  // The first ACK puts this replica online on a primary that sent a diskless payload.
  send_ack();
}

// ---- the stream ----

void ReplicaSide::link_established(int db) {
  state_ = LinkState::kConnected;
  down_since_s_ = 0;
  last_interaction_s_ = now_s();
  session_ = std::make_unique<ClientSession>();
  session_->id = 0;
  session_->db = db;
  session_->authenticated = true;
  session_->must_obey = true;
  session_->primary_link = true;
  session_->is_local = true;
  session_->name = "";
  parser_.reset();
  applied_upto_ = in_pos_;
  service_.role().link_up = true;
}

void ReplicaSide::apply_stream() {
  ServerState& state = service_.state();
  Dispatcher& dispatcher = service_.dispatcher();
  Keyspace& keyspace = state.keyspace();
  std::string scratch;
  ReplyWriter discard(&scratch);
  bool applied_any = false;
  applying_ = true;
  close_requested_ = false;
  close_keeps_history_ = true;
  while (!close_requested_ && state_ == LinkState::kConnected && in_pos_ < in_.size()) {
    const ParseStatus status = parser_.parse(in_.data() + in_pos_, in_.size() - in_pos_);
    if (status == ParseStatus::kError) {
      log_warning("Protocol error from MASTER (" + std::string(parser_.error()) +
                  "): closing the link");
      // The stream can no longer be trusted: no partial resync from it.
      close_requested_ = true;
      close_keeps_history_ = false;
      break;
    }
    if (status == ParseStatus::kNeedMore) {
      in_pos_ += parser_.consumed();
      break;
    }
    std::span<const std::string_view> args = parser_.args();
    if (args.size() >= 2 && equals_ignore_case(args[0], "replconf") &&
        equals_ignore_case(args[1], "getack")) {
      // Answered with what was applied before it, as Redis does.
      send_ack();
    } else {
      // The primary's commands see keys whose deadline passed until its DEL arrives.
      keyspace.set_expired_visible(true);
      dispatcher.execute(*session_, args, discard);
      keyspace.set_expired_visible(false);
      if (!scratch.empty() && scratch[0] == '-') {
        log_warning("== CRITICAL == This replica is sending an error to its master: '" +
                    scratch.substr(1, scratch.find('\r') - 1) +
                    "' after processing the command '" + std::string(args[0]) + "'");
      }
      scratch.clear();
      applied_any = true;
    }
    in_pos_ += parser_.consumed();
    if (!session_->transaction.in_multi()) {
      const std::string_view applied(in_.data() + applied_upto_, in_pos_ - applied_upto_);
      applied_upto_ = in_pos_;
      service_.primary().append_stream(applied);
    }
  }
  applying_ = false;
  if (close_requested_) {
    close_requested_ = false;
    if (!close_keeps_history_) {
      close_link(false);
      resumable_ = false;
    } else {
      log_notice("Connection with master lost.");
      close_link(true);
    }
  }
  if (applied_any) service_.commands_applied();
}

void ReplicaSide::send_ack() {
  if (state_ != LinkState::kConnected) return;
  send(encode_command({"REPLCONF", "ACK", std::to_string(service_.ids().offset)}));
}

// ---- cron and INFO ----

void ReplicaSide::before_sleep() {}

void ReplicaSide::cron(int64_t now_ms) {
  const int64_t now = now_ms / 1000;
  if (now == last_cron_s_) return;
  last_cron_s_ = now;
  if (!service_.is_replica()) return;
  const int64_t timeout = service_.settings().timeout;
  switch (state_) {
    case LinkState::kNone:
      return;
    case LinkState::kConnect:
      log_notice("Connecting to MASTER " + service_.settings().primary_host + ":" +
                 std::to_string(service_.settings().primary_port));
      connect_to_primary();
      return;
    case LinkState::kTransfer:
      if (now - transfer_last_io_s_ > timeout) {
        log_warning("Timeout receiving bulk data from MASTER... If the problem persists try to "
                    "set the 'repl-timeout' parameter in redis.conf to a larger value.");
        fail();
      }
      return;
    case LinkState::kConnected:
      if (now - last_interaction_s_ > timeout) {
        log_warning("MASTER timeout: no data nor PING received...");
        close_link(true);
        return;
      }
      send_ack();
      return;
    default:  // connecting and the handshake
      if (now - transfer_last_io_s_ > timeout) {
        log_warning("Timeout connecting to the MASTER...");
        fail();
      }
      return;
  }
}

void ReplicaSide::write_info(InfoText& info) {
  const ReplicationSettings& settings = service_.settings();
  const int64_t now = now_s();
  const bool has_history = link_up() || resumable_;
  const int64_t applied = has_history ? service_.ids().offset : 1;
  // Read: what arrived, applied or not (a partial command, a MULTI not yet ended).
  const int64_t read = applied + (link_up() ? static_cast<int64_t>(in_.size() - applied_upto_) : 0);
  info.field("master_host", settings.primary_host);
  info.field("master_port", settings.primary_port);
  info.field("master_link_status", link_up() ? "up" : "down");
  info.field("master_last_io_seconds_ago", link_up() ? now - last_interaction_s_ : -1);
  info.field("master_sync_in_progress", state_ == LinkState::kTransfer ? 1 : 0);
  info.field("slave_read_repl_offset", read);
  info.field("slave_repl_offset", applied);
  if (state_ == LinkState::kTransfer) {
    const int64_t size = transfer_size_;
    const double percent =
        size != 0 ? static_cast<double>(transfer_read_) / static_cast<double>(size) * 100 : 0;
    info.field("master_sync_total_bytes", size);
    info.field("master_sync_read_bytes", transfer_read_);
    info.field("master_sync_left_bytes", size - transfer_read_);
    info.fixed2("master_sync_perc", percent);
    info.field("master_sync_last_io_seconds_ago", now - transfer_last_io_s_);
  }
  if (!link_up()) {
    info.field("master_link_down_since_seconds", down_since_s_ != 0 ? now - down_since_s_ : -1);
  }
  info.field("slave_priority", settings.priority);
  info.field("slave_read_only", settings.read_only ? 1 : 0);
  info.field("replica_announced", settings.announced ? 1 : 0);
}

}  // namespace keywarden
