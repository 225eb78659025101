#include "replication/primary.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "commands/command_table.h"
#include "commands/context.h"
#include "commands/errors.h"
#include "commands/info_text.h"
#include "commands/propagation.h"
#include "common/ascii.h"
#include "common/event_loop.h"
#include "common/log.h"
#include "common/number.h"
#include "persistence/fork_child.h"
#include "persistence/rdb_file.h"
#include "persistence/rdb_service.h"
#include "replication/backlog.h"
#include "replication/replica.h"
#include "replication/replica_channel.h"
#include "replication/replication_service.h"
#include "resp/command_encoding.h"

namespace keywarden {
namespace {

// Redis never lets the backlog be smaller than this, whatever repl-backlog-size says.
constexpr int64_t kMinBacklogBytes = 16 * 1024;
// A disk image is read and queued for a replica in chunks of this size, as long as less than
// kFileQueueBytes wait in its output.
constexpr size_t kFileChunkBytes = 256 * 1024;
constexpr size_t kFileQueueBytes = 1024 * 1024;
// The diskless pipe is read while every replica of the transfer has less than this queued.
constexpr size_t kPipeQueueBytes = 4 * 1024 * 1024;
constexpr size_t kPipeReadBytes = 64 * 1024;
// The mark that ends a diskless image: 40 random characters (Redis's RDB_EOF_MARK_SIZE), drawn
// like the replication IDs.
std::string random_eof_mark() { return random_replication_id(); }

}  // namespace

enum class ReplicaState { kWaitBgsaveStart, kWaitBgsaveEnd, kSendBulk, kOnline };

struct PrimarySide::Replica {
  uint64_t client_id = 0;
  ReplicaChannel* channel = nullptr;
  ReplicaState state = ReplicaState::kWaitBgsaveStart;
  std::string announced_ip;     // REPLCONF ip-address
  std::string name;             // "ip:port" for the log, fixed at SYNC/PSYNC
  int64_t listening_port = 0;   // REPLCONF listening-port
  bool capa_eof = false;
  bool capa_psync2 = false;
  bool rdb_only = false;
  bool old_sync = false;        // SYNC: no +FULLRESYNC line
  bool is_replica = false;      // SYNC/PSYNC seen (before: a client in its handshake)
  bool socket_target = false;   // its image comes through the pipe
  // Online after a diskless image: the stream waits for its first ACK (it has loaded the
  // image), because a replica finds the EOF mark only at the end of what it read.
  bool stream_on_ack = false;
  int64_t ack_offset = 0;
  int64_t ack_time_ms = 0;
  int64_t waiting_since_ms = 0;  // entered wait_bgsave_start
  // The stream since the fork of its image, sent after the image.
  std::string pending;
  int file_fd = -1;
  int64_t file_size = 0;
  int64_t file_sent = 0;

  ~Replica() {
    if (file_fd >= 0) ::close(file_fd);
  }
  std::string_view state_name() const {
    switch (state) {
      case ReplicaState::kWaitBgsaveStart:
      case ReplicaState::kWaitBgsaveEnd:
        return "wait_bgsave";
      case ReplicaState::kSendBulk:
        return "send_bulk";
      case ReplicaState::kOnline:
        return "online";
    }
    return "online";
  }
};

// The propagation path's sink while a backlog exists.
class PrimarySide::StreamSink final : public PropagationSink {
 public:
  explicit StreamSink(PrimarySide& primary) : primary_(primary) {}
  void write_batch(std::span<const PropagatedCommand> batch) override {
    for (const PropagatedCommand& command : batch) primary_.feed_command(command.db, command.args);
  }

 private:
  PrimarySide& primary_;
};

// The read end of the diskless child's pipe, watched by the event loop. One object for the
// server's life: a long script lets the loop run nested batches (EventLoop::poll_once), so an
// event for the pipe may still be queued after the pipe was closed; it then finds fd() < 0.
class PrimarySide::PipeReader final : public EventHandler {
 public:
  explicit PipeReader(PrimarySide& primary) : primary_(primary) {}
  ~PipeReader() override { close(); }
  void on_events(uint32_t) override {
    if (fd_ >= 0) primary_.read_pipe();
  }
  void open(int fd) { fd_ = fd; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    watched = false;
  }
  int fd() const { return fd_; }
  bool is_open() const { return fd_ >= 0; }
  bool watched = false;

 private:
  PrimarySide& primary_;
  int fd_ = -1;
};

PrimarySide::PrimarySide(ReplicationService& service)
    : service_(service), pipe_(std::make_unique<PipeReader>(*this)) {}

PrimarySide::~PrimarySide() {
  if (sink_listening_) service_.state().propagator().remove_sink(sink_.get());
  close_pipe();
}

ReplicationHost* PrimarySide::host() {
  return service_.state().services().find<ReplicationHost>();
}

PrimarySide::Replica* PrimarySide::find(uint64_t client_id) {
  for (auto& replica : replicas_) {
    if (replica->client_id == client_id) return replica.get();
  }
  return nullptr;
}

// ---- the stream ---------------------------------------------------------------------------

void PrimarySide::create_backlog() {
  if (backlog_) return;
  const int64_t size = std::max(service_.settings().backlog_size, kMinBacklogBytes);
  backlog_ = std::make_unique<ReplicationBacklog>(size, service_.ids().offset + 1);
  sink_ = std::make_unique<StreamSink>(*this);
  update_sink();
  stream_db_ = -1;
}

void PrimarySide::update_sink() {
  const bool listen = backlog_ != nullptr && !service_.is_replica();
  if (listen == sink_listening_) return;
  if (listen) {
    service_.state().propagator().add_sink(sink_.get());
  } else {
    service_.state().propagator().remove_sink(sink_.get());
  }
  sink_listening_ = listen;
}

void PrimarySide::free_backlog() {
  if (!backlog_) return;
  backlog_.reset();
  update_sink();
  sink_.reset();
}

void PrimarySide::feed_command(int db, std::span<const std::string> args) {
  if (!backlog_) return;
  std::string encoded;
  if (db != stream_db_) {
    const std::string index = std::to_string(db);
    append_resp_command(encoded, {"SELECT", index});
    stream_db_ = db;
  }
  append_resp_command(encoded, args);
  append_stream(encoded);
}

void PrimarySide::append_stream(std::string_view bytes) {
  service_.ids().offset += static_cast<int64_t>(bytes.size());
  service_.role().offset = service_.ids().offset;
  if (backlog_) backlog_->append(bytes);
  for (auto& replica : replicas_) {
    switch (replica->state) {
      case ReplicaState::kWaitBgsaveStart:
        break;  // its image is not forked yet: it will hold these bytes
      case ReplicaState::kWaitBgsaveEnd:
      case ReplicaState::kSendBulk:
        keep_pending(*replica, bytes);
        break;
      case ReplicaState::kOnline:
        if (replica->stream_on_ack) {
          keep_pending(*replica, bytes);
        } else if (!replica->rdb_only) {
          send_to(*replica, bytes);
        }
        break;
    }
  }
}

void PrimarySide::restart_history() {
  if (backlog_) {
    backlog_->reset(service_.ids().offset + 1);
  } else {
    create_backlog();
  }
  service_.role().offset = service_.ids().offset;
  stream_db_ = -1;
}

void PrimarySide::disconnect_replicas() {
  for (auto& replica : replicas_) {
    if (replica->is_replica && replica->channel != nullptr) replica->channel->channel_close_async();
  }
}

void PrimarySide::keep_pending(Replica& replica, std::string_view bytes) {
  if (replica.channel == nullptr) return;
  const int64_t limit = replica.channel->channel_output_hard_limit();
  const size_t held = replica.pending.size() + bytes.size();
  if (limit > 0 && static_cast<int64_t>(held) >= limit) {
    // Its stream would pass the output limit before it even gets it: it resyncs later.
    log_message(LogLevel::kWarning,
                "Replica " + replica.name + " scheduled to be closed ASAP for overcoming of output buffer limits.");
    replica.channel->channel_close_async();
    replica.channel = nullptr;  // nothing more goes to it; replica_closed() forgets it
    std::string().swap(replica.pending);
    return;
  }
  replica.pending.append(bytes);
}

void PrimarySide::send_to(Replica& replica, std::string_view bytes) {
  if (replica.channel == nullptr || bytes.empty()) return;
  replica.channel->channel_send(bytes);
  stats_.net_repl_output_bytes += bytes.size();
}

std::vector<ReplicaSummary> PrimarySide::replicas() const {
  std::vector<ReplicaSummary> out;
  const int64_t now_ms = service_.state().clock().wall_ms();
  for (const auto& replica : replicas_) {
    if (!replica->is_replica || replica->channel == nullptr) continue;
    ReplicaSummary summary;
    summary.ip = replica->announced_ip.empty() ? replica->channel->channel_peer_ip()
                                               : replica->announced_ip;
    summary.port = replica->listening_port;
    summary.state = std::string(replica->state_name());
    summary.offset = replica->ack_offset;
    summary.lag_seconds = (now_ms - replica->ack_time_ms) / 1000;
    out.push_back(std::move(summary));
  }
  return out;
}

void PrimarySide::replica_closed(uint64_t client_id) {
  for (auto it = replicas_.begin(); it != replicas_.end(); ++it) {
    if ((*it)->client_id != client_id) continue;
    if ((*it)->is_replica) {
      log_message(LogLevel::kNotice, "Connection with replica " + (*it)->name + " lost.");
    }
    replicas_.erase(it);
    break;
  }
  refresh_good_replicas(service_.state().clock().wall_ms());
}

void PrimarySide::drop(Replica& replica, const std::string& why) {
  if (!why.empty()) log_message(LogLevel::kWarning, why);
  if (replica.channel != nullptr) replica.channel->channel_close_async();
}

// ---- REPLCONF -----------------------------------------------------------------------------

void PrimarySide::replconf_command(CommandContext& ctx) {
  if (ctx.args.size() % 2 == 0) return ctx.error(errors::kSyntax);
  const uint64_t id = ctx.session.id;
  Replica* replica = find(id);
  auto conf = [&]() -> Replica& {
    if (replica == nullptr) {
      auto created = std::make_unique<Replica>();
      created->client_id = id;
      replica = created.get();
      replicas_.push_back(std::move(created));
    }
    return *replica;
  };
  for (size_t j = 1; j < ctx.args.size(); j += 2) {
    std::string_view option = ctx.args[j];
    std::string_view value = ctx.args[j + 1];
    if (equals_ignore_case(option, "listening-port")) {
      int64_t port;
      if (!parse_int64(value, &port)) return ctx.error(errors::kNotInteger);
      conf().listening_port = port;
    } else if (equals_ignore_case(option, "ip-address")) {
      if (value.size() >= 256) {
        return ctx.error("ERR REPLCONF ip-address provided by replica instance is too long: " +
                         std::to_string(value.size()) + " bytes");
      }
      conf().announced_ip.assign(value);
    } else if (equals_ignore_case(option, "capa")) {
      if (equals_ignore_case(value, "eof")) conf().capa_eof = true;
      if (equals_ignore_case(value, "psync2")) conf().capa_psync2 = true;
    } else if (equals_ignore_case(option, "ack")) {
      // Only from a replica; no reply either way (the replica reads none).
      if (!ctx.session.replica || replica == nullptr) return;
      int64_t offset;
      if (!parse_int64(value, &offset)) return;
      if (offset > replica->ack_offset) replica->ack_offset = offset;
      replica->ack_time_ms = ctx.now_ms;
      if (replica->stream_on_ack && replica->state == ReplicaState::kOnline) {
        start_stream(*replica);
      }
      acks_changed_ = true;
      return;
    } else if (equals_ignore_case(option, "getack")) {
      // Asked of a replica by its primary: the replica side answers on its link.
      return;
    } else if (equals_ignore_case(option, "rdb-only")) {
      int64_t flag;
      if (!parse_int64(value, &flag)) return ctx.error(errors::kNotInteger);
      if (flag < 0 || flag > 1) {
        return ctx.error("ERR value is out of range, value must between 0 and 1");
      }
      conf().rdb_only = flag == 1;
    } else if (equals_ignore_case(option, "rdb-filter-only")) {
      // Only "functions" exists (an image without keys' filters); keywarden sends everything.
      std::string_view rest = value;
      while (!rest.empty()) {
        const size_t space = rest.find(' ');
        std::string_view word = rest.substr(0, space);
        rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
        if (word.empty()) continue;
        if (!equals_ignore_case(word, "functions")) {
          return ctx.error("ERR Unsupported rdb-filter-only option: " + std::string(word));
        }
      }
    } else {
      return ctx.error("ERR Unrecognized REPLCONF option: " + std::string(option));
    }
  }
  ctx.reply.simple_string("OK");
}

// ---- SYNC / PSYNC -------------------------------------------------------------------------

bool PrimarySide::try_partial_resync(CommandContext& ctx, Replica& replica) {
  const ReplicationIds& ids = service_.ids();
  std::string_view replid = ctx.args[1];
  int64_t offset = 0;
  parse_int64(ctx.args[2], &offset);  // checked by sync_command
  const std::string& name = replica.name;
  if (replid != ids.replid && (replid != ids.replid2 || offset > ids.second_offset)) {
    if (replid != "?") {
      log_message(LogLevel::kNotice,
                  "Partial resynchronization not accepted: Replication ID mismatch (Replica "
                  "asked for '" + std::string(replid) + "', my replication IDs are '" +
                      ids.replid + "' and '" + ids.replid2 + "')");
    } else {
      log_message(LogLevel::kNotice, "Full resync requested by replica " + name);
    }
    return false;
  }
  if (!backlog_ || !backlog_->can_continue_from(offset)) {
    log_message(LogLevel::kNotice,
                "Unable to partial resync with replica " + name +
                    " for lack of backlog (Replica request was: " + std::to_string(offset) + ").");
    return false;
  }
  ctx.session.replica = true;
  replica.is_replica = true;
  replica.state = ReplicaState::kOnline;
  replica.ack_time_ms = ctx.now_ms;
  std::string reply = replica.capa_psync2 ? "+CONTINUE " + ids.replid + "\r\n" : "+CONTINUE\r\n";
  send_to(replica, reply);
  std::string history;
  backlog_->copy_from(offset, history);
  send_to(replica, history);
  log_message(LogLevel::kNotice,
              "Partial resynchronization request from " + name + " accepted. Sending " +
                  std::to_string(history.size()) + " bytes of backlog starting from offset " +
                  std::to_string(offset) + ".");
  refresh_good_replicas(ctx.now_ms);
  return true;
}

void PrimarySide::sync_command(CommandContext& ctx) {
  if (ctx.session.replica) return;  // already a replica: ignored, as Redis
  const bool psync = equals_ignore_case(ctx.args[0], "psync");
  // PSYNC … FAILOVER: this replica's primary hands over (FAILOVER): it becomes the primary
  // and continues the history the requester offers, which must be its own.
  if (psync && ctx.args.size() > 3 && equals_ignore_case(ctx.args[3], "failover")) {
    log_message(LogLevel::kNotice,
                "Failover request received for replid " + std::string(ctx.args[1]) + ".");
    if (!service_.is_replica()) return ctx.error("ERR PSYNC FAILOVER can't be sent to a master.");
    if (!equals_ignore_case(ctx.args[1], service_.ids().replid)) {
      return ctx.error("ERR PSYNC FAILOVER replid must match my replid.");
    }
    service_.replica().promote();
    log_message(LogLevel::kNotice, "MASTER MODE enabled (failover request from 'id=" +
                                       std::to_string(ctx.session.id) + "')");
  }
  if (service_.failover().active()) {
    return ctx.error("NOMASTERLINK Can't SYNC while failing over");
  }
  if (service_.is_replica() && !service_.role().link_up) {
    return ctx.error("NOMASTERLINK Can't SYNC while not connected with my master");
  }
  ReplicationHost* replication_host = host();
  ReplicaChannel* channel =
      replication_host != nullptr ? replication_host->replica_channel(ctx.session.id) : nullptr;
  if (channel == nullptr) return ctx.error("ERR SYNC is only possible on a client connection");
  if (channel->channel_unsent_bytes() > 0) {
    return ctx.error("ERR SYNC and PSYNC are invalid with pending output");
  }
  Replica* found = find(ctx.session.id);
  if (found == nullptr) {
    auto created = std::make_unique<Replica>();
    created->client_id = ctx.session.id;
    found = created.get();
    replicas_.push_back(std::move(created));
  }
  Replica& replica = *found;
  replica.channel = channel;
  replica.name = channel->channel_peer_ip() + ":" + std::to_string(replica.listening_port);
  log_message(LogLevel::kNotice, "Replica " + replica.name + " asks for synchronization");
  if (psync) {
    int64_t offset;
    if (!parse_int64(ctx.args[2], &offset)) {
      log_message(LogLevel::kWarning,
                  "Replica " + replica.name + " asks for synchronization but with a wrong offset");
      return ctx.error(errors::kNotInteger);
    }
    if (try_partial_resync(ctx, replica)) {
      ++stats_.sync_partial_ok;
      return;
    }
    if (ctx.args[1] != "?") ++stats_.sync_partial_err;
  } else {
    replica.old_sync = true;
  }
  ++stats_.sync_full;
  ctx.session.replica = true;
  replica.is_replica = true;
  replica.state = ReplicaState::kWaitBgsaveStart;
  replica.waiting_since_ms = ctx.now_ms;
  replica.ack_time_ms = ctx.now_ms;
  // The first replica starts a new history (nobody can continue the old one without a
  // backlog), as Redis does when it creates the backlog.
  if (!backlog_) {
    // (A replica keeps the history it shares with its own primary.)
    if (!service_.is_replica()) service_.ids().reset();
    create_backlog();
    log_message(LogLevel::kNotice, "Replication backlog created, my new replication IDs are '" +
                                       service_.ids().replid + "' and '" +
                                       service_.ids().replid2 + "'");
  }
  // A disk image being written for other replicas serves this one too: it starts from the
  // same point, with the stream they accumulated since.
  const bool wants_socket = service_.settings().diskless_sync && replica.capa_eof;
  if (child_target_ == ChildTarget::kDisk && !wants_socket) {
    for (auto& other : replicas_) {
      if (other.get() != &replica && other->state == ReplicaState::kWaitBgsaveEnd &&
          !other->socket_target) {
        replica.pending = other->pending;
        replica.socket_target = false;
        const int64_t offset = service_.ids().offset - static_cast<int64_t>(other->pending.size());
        replica.state = ReplicaState::kWaitBgsaveEnd;
        if (!replica.old_sync) {
          send_to(replica, "+FULLRESYNC " + service_.ids().replid + " " +
                               std::to_string(offset) + "\r\n");
        }
        log_message(LogLevel::kNotice, "Waiting for end of BGSAVE for SYNC");
        return;
      }
    }
  }
  start_full_sync_if_due(ctx.now_ms);
}

void PrimarySide::start_full_sync_if_due(int64_t now_ms) {
  if (ForkChild::active()) return;
  int waiting = 0;
  bool all_eof = true;
  int64_t oldest_ms = now_ms;
  for (auto& replica : replicas_) {
    if (!replica->is_replica || replica->state != ReplicaState::kWaitBgsaveStart) continue;
    ++waiting;
    all_eof = all_eof && replica->capa_eof;
    oldest_ms = std::min(oldest_ms, replica->waiting_since_ms);
  }
  if (waiting == 0) return;
  const ReplicationSettings& settings = service_.settings();
  const bool to_socket = settings.diskless_sync && all_eof;
  if (to_socket && settings.diskless_sync_delay > 0) {
    // Gather replicas arriving together into one transfer: wait the delay, unless enough came.
    const bool enough = settings.diskless_sync_max_replicas > 0 &&
                        waiting >= settings.diskless_sync_max_replicas;
    if (!enough && now_ms - oldest_ms < settings.diskless_sync_delay * 1000) return;
  }
  start_child(to_socket);
}

void PrimarySide::setup_full_resync(Replica& replica, int64_t offset) {
  replica.state = ReplicaState::kWaitBgsaveEnd;
  replica.pending.clear();
  if (!replica.old_sync) {
    send_to(replica, "+FULLRESYNC " + service_.ids().replid + " " + std::to_string(offset) +
                         "\r\n");
  }
}

bool PrimarySide::start_child(bool to_socket) {
  RdbService& rdb = service_.rdb();
  const int64_t offset = service_.ids().offset;
  if (!to_socket) {
    const std::string error = rdb.background_save();
    if (!error.empty()) {
      log_message(LogLevel::kWarning, "BGSAVE for replication failed: " + error);
      for (auto& replica : replicas_) {
        if (replica->is_replica && replica->state == ReplicaState::kWaitBgsaveStart) {
          send_to(*replica, "-ERR BGSAVE failed, replication can't continue\r\n");
          drop(*replica, "");
        }
      }
      return false;
    }
    log_message(LogLevel::kNotice, "Starting BGSAVE for SYNC with target: disk");
  } else {
    int fds[2];
    if (::pipe(fds) != 0) {
      log_message(LogLevel::kWarning, std::string("Can't create the pipe for the diskless "
                                                  "transfer: ") + std::strerror(errno));
      return false;
    }
    const std::string mark = random_eof_mark();
    const RdbSaveOptions options = rdb.save_options(service_.state().clock().wall_ms());
    const Keyspace& keyspace = service_.state().keyspace();
    const int write_fd = fds[1];
    auto started = ForkChild::start(ForkChild::Kind::kRdb, [&keyspace, options, mark, write_fd, fds] {
      ::close(fds[0]);
      auto write_all = [write_fd](std::string_view bytes) {
        while (!bytes.empty()) {
          const ssize_t written = ::write(write_fd, bytes.data(), bytes.size());
          if (written < 0) {
            if (errno == EINTR) continue;
            return false;
          }
          bytes.remove_prefix(static_cast<size_t>(written));
        }
        return true;
      };
      if (!write_all("$EOF:" + mark + "\r\n")) return 1;
      const std::string error = rdb_save_to_fd(write_fd, keyspace, options);
      if (!error.empty()) {
        log_message(LogLevel::kWarning, error);
        return 1;
      }
      if (!write_all(mark)) return 1;
      ::close(write_fd);
      return 0;
    });
    ::close(fds[1]);
    if (!started.ok()) {
      ::close(fds[0]);
      log_message(LogLevel::kWarning, std::string("Can't save in background: fork: ") +
                                          std::strerror(started.error));
      return false;
    }
    rdb.socket_child_started();
    ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    pipe_->open(fds[0]);
    pipe_->watched = service_.loop().watch(fds[0], EventLoop::kReadable, pipe_.get());
    log_message(LogLevel::kNotice, "Starting BGSAVE for SYNC with target: replicas sockets");
  }
  child_target_ = to_socket ? ChildTarget::kSocket : ChildTarget::kDisk;
  for (auto& replica : replicas_) {
    if (replica->is_replica && replica->state == ReplicaState::kWaitBgsaveStart) {
      replica->socket_target = to_socket;
      setup_full_resync(*replica, offset);
    }
  }
  // The stream after the image must select its database again (the image says nothing of
  // which one the stream had selected for the replica).
  stream_db_ = -1;
  return true;
}

// ---- the image ----------------------------------------------------------------------------

void PrimarySide::read_pipe() {
  if (!pipe_->is_open()) return;
  char buffer[kPipeReadBytes];
  bool forwarded = false;
  for (;;) {
    // Backpressure: no faster than the slowest replica of the transfer takes it.
    for (auto& replica : replicas_) {
      if (replica->state == ReplicaState::kWaitBgsaveEnd && replica->socket_target &&
          replica->channel != nullptr && replica->channel->channel_unsent_bytes() > kPipeQueueBytes) {
        if (pipe_->watched) {
          service_.loop().unwatch(pipe_->fd());
          pipe_->watched = false;
        }
        if (forwarded) wake_soon();
        return;
      }
    }
    const ssize_t count = ::read(pipe_->fd(), buffer, sizeof(buffer));
    if (count < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (!pipe_->watched) {
          pipe_->watched = service_.loop().watch(pipe_->fd(), EventLoop::kReadable, pipe_.get());
        }
        return;
      }
    }
    if (count < 0) {
      log_message(LogLevel::kWarning, std::string("Diskless rdb transfer, read error: ") +
                                           std::strerror(errno));
    }
    if (count <= 0) {
      // The child wrote everything (or died: its exit status tells, in child_done()).
      close_pipe();
      for (auto& replica : replicas_) {
        if (replica->state == ReplicaState::kWaitBgsaveEnd && replica->socket_target) {
          put_online(*replica);
        }
      }
      return;
    }
    const std::string_view bytes(buffer, static_cast<size_t>(count));
    for (auto& replica : replicas_) {
      if (replica->state == ReplicaState::kWaitBgsaveEnd && replica->socket_target) {
        send_to(*replica, bytes);
      }
    }
    forwarded = true;
  }
}

void PrimarySide::close_pipe() {
  if (!pipe_->is_open()) return;
  if (pipe_->watched) service_.loop().unwatch(pipe_->fd());
  pipe_->close();
}

void PrimarySide::child_done(bool success) {
  const ChildTarget target = child_target_;
  child_target_ = ChildTarget::kNone;
  if (target == ChildTarget::kSocket) {
    if (!success) {
      close_pipe();
      // The image the replicas got is cut short: they must start again.
      for (auto& replica : replicas_) {
        if (replica->socket_target && replica->state != ReplicaState::kWaitBgsaveStart) {
          drop(*replica, "Diskless rdb transfer failed, closing replica " +
                             std::to_string(replica->client_id));
        }
      }
    }
  } else if (target == ChildTarget::kDisk || target == ChildTarget::kNone) {
    // A disk save ended (ours, or a BGSAVE whose file no replica waited for).
    for (auto& replica : replicas_) {
      if (replica->state != ReplicaState::kWaitBgsaveEnd || replica->socket_target) continue;
      if (!success) {
        send_to(*replica, "-ERR BGSAVE failed, replication can't continue\r\n");
        drop(*replica, "SYNC failed. BGSAVE child returned an error");
        continue;
      }
      const std::string& path = service_.rdb().settings().dbfilename;
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      struct stat info;
      if (fd < 0 || ::fstat(fd, &info) != 0) {
        if (fd >= 0) ::close(fd);
        drop(*replica, "SYNC failed. Can't open/stat DB after BGSAVE: " +
                           std::string(std::strerror(errno)));
        continue;
      }
      replica->file_fd = fd;
      replica->file_size = info.st_size;
      replica->file_sent = 0;
      replica->state = ReplicaState::kSendBulk;
      send_to(*replica, "$" + std::to_string(info.st_size) + "\r\n");
    }
    send_file_chunks();
  }
}

void PrimarySide::wake_soon() { service_.loop().wake_by(monotonic_now_us()); }

void PrimarySide::send_file_chunks() {
  bool queued = false;
  for (auto& replica_pointer : replicas_) {
    Replica& replica = *replica_pointer;
    if (replica.state != ReplicaState::kSendBulk || replica.channel == nullptr) continue;
    std::string chunk;
    while (replica.file_sent < replica.file_size &&
           replica.channel->channel_unsent_bytes() < kFileQueueBytes) {
      const size_t want = static_cast<size_t>(
          std::min<int64_t>(kFileChunkBytes, replica.file_size - replica.file_sent));
      chunk.resize(want);
      const ssize_t count = ::pread(replica.file_fd, chunk.data(), want, replica.file_sent);
      if (count <= 0) {
        if (count < 0 && errno == EINTR) continue;
        drop(replica, "Read error sending DB to replica: " +
                          std::string(count < 0 ? std::strerror(errno) : "premature EOF"));
        replica.state = ReplicaState::kWaitBgsaveEnd;  // sends nothing more
        break;
      }
      chunk.resize(static_cast<size_t>(count));
      send_to(replica, chunk);
      replica.file_sent += count;
      queued = true;
    }
    if (replica.state == ReplicaState::kSendBulk && replica.file_sent >= replica.file_size) {
      ::close(replica.file_fd);
      replica.file_fd = -1;
      put_online(replica);
    }
  }
  if (queued) wake_soon();
}

void PrimarySide::put_online(Replica& replica) {
  replica.state = ReplicaState::kOnline;
  replica.ack_time_ms = service_.state().clock().wall_ms();
  if (replica.socket_target) {
    replica.stream_on_ack = true;
  } else {
    start_stream(replica);
  }
  log_message(LogLevel::kNotice, "Synchronization with replica " + replica.name + " succeeded");
  refresh_good_replicas(replica.ack_time_ms);
}

void PrimarySide::start_stream(Replica& replica) {
  replica.stream_on_ack = false;
  if (!replica.rdb_only) send_to(replica, replica.pending);
  std::string().swap(replica.pending);
}

// ---- WAIT ---------------------------------------------------------------------------------

int64_t PrimarySide::acknowledged(int64_t offset) const {
  int64_t count = 0;
  for (const auto& replica : replicas_) {
    if (replica->state == ReplicaState::kOnline && replica->ack_offset >= offset) ++count;
  }
  return count;
}

void PrimarySide::wait_started(uint64_t client_id) {
  if (std::find(waiting_clients_.begin(), waiting_clients_.end(), client_id) ==
      waiting_clients_.end()) {
    waiting_clients_.push_back(client_id);
  }
  get_ack_pending_ = true;
}

void PrimarySide::wait_command(CommandContext& ctx) {
  if (service_.is_replica()) {
    return ctx.error(
        "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 "
        "if a replica is configured to be writable (which is not the default) writes to "
        "replicas are just local and are not propagated.");
  }
  int64_t wanted;
  if (!parse_int64(ctx.args[1], &wanted)) return ctx.error(errors::kNotInteger);
  int64_t timeout_ms;
  if (!parse_int64(ctx.args[2], &timeout_ms)) {
    return ctx.error("ERR timeout is not an integer or out of range");
  }
  if (timeout_ms < 0) return ctx.error("ERR timeout is negative");
  const int64_t count = acknowledged(ctx.session.write_offset);
  if (count >= wanted || !ctx.may_block() || ctx.timed_out()) {
    std::erase(waiting_clients_, ctx.session.id);
    ctx.reply.integer(count);
    return;
  }
  // A client already blocked keeps its deadline (the block call keeps it blocked).
  // Redis 7.0 takes any timeout; one beyond the end of time waits forever.
  int64_t deadline_ms = 0;
  if (timeout_ms > 0) {
    deadline_ms = timeout_ms > INT64_MAX - ctx.now_ms ? INT64_MAX : ctx.now_ms + timeout_ms;
  }
  ctx.block_until_woken(deadline_ms);
  wait_started(ctx.session.id);
}

// ---- cron ---------------------------------------------------------------------------------

void PrimarySide::refresh_good_replicas(int64_t now_ms) {
  ReplicationRole& role = service_.role();
  int64_t good = 0;
  for (const auto& replica : replicas_) {
    if (replica->state != ReplicaState::kOnline) continue;
    if ((now_ms - replica->ack_time_ms) / 1000 <= role.min_replicas_max_lag) ++good;
  }
  role.good_replicas = good;
}

void PrimarySide::remove_closed() {
  ReplicationHost* replication_host = host();
  if (replication_host == nullptr) return;
  // Handshakes (REPLCONF without SYNC yet) of clients that went away, and WAITs of clients
  // no longer there.
  std::erase_if(replicas_, [replication_host](const std::unique_ptr<Replica>& replica) {
    return !replica->is_replica && replication_host->replica_channel(replica->client_id) == nullptr;
  });
  std::erase_if(waiting_clients_, [replication_host](uint64_t id) {
    return replication_host->replica_channel(id) == nullptr;
  });
}

void PrimarySide::cron(int64_t now_ms) {
  const ReplicationSettings& settings = service_.settings();
  if (backlog_) {
    const int64_t wanted = std::max(settings.backlog_size, kMinBacklogBytes);
    if (wanted != backlog_->capacity()) backlog_->resize(wanted);
  }
  start_full_sync_if_due(now_ms);
  if (now_ms - last_second_ms_ < 1000) return;
  last_second_ms_ = now_ms;

  remove_closed();
  bool any_replica = false;
  for (auto& replica : replicas_) {
    if (!replica->is_replica || replica->channel == nullptr) continue;
    any_replica = true;
    // Replicas waiting for their image get a newline a second, so that their read timeout
    // does not fire (not while the pipe feeds them: the newline would land inside the image).
    if (replica->state == ReplicaState::kWaitBgsaveStart ||
        (replica->state == ReplicaState::kWaitBgsaveEnd && !replica->socket_target)) {
      send_to(*replica, "\n");
    }
    if (replica->state == ReplicaState::kOnline && !replica->old_sync &&
        now_ms - replica->ack_time_ms > settings.timeout * 1000) {
      drop(*replica, "Disconnecting timedout replica (streaming sync): " + replica->name);
    }
  }
  // PING the replicas every repl-ping-replica-period, through the stream, so that they can
  // tell a silent primary from a dead link. Not while a FAILOVER waits for a replica to catch
  // up with the stream: it must stop growing.
  if (any_replica && !service_.is_replica() &&
      !service_.state().client_pause().held_for_failover() &&
      now_ms - last_ping_ms_ >= settings.ping_replica_period * 1000) {
    last_ping_ms_ = now_ms;
    std::string ping;
    append_resp_command(ping, {"PING"});
    append_stream(ping);
  }
  // repl-backlog-ttl: a primary without replicas for that long frees its backlog (and starts
  // a new history, since nobody could continue the old one).
  if (any_replica) {
    no_replicas_since_ms_ = 0;
  } else if (backlog_ && !service_.is_replica()) {
    if (no_replicas_since_ms_ == 0) no_replicas_since_ms_ = now_ms;
    if (settings.backlog_ttl > 0 && now_ms - no_replicas_since_ms_ > settings.backlog_ttl * 1000) {
      free_backlog();
      service_.ids().reset();
      log_message(LogLevel::kNotice,
                  "Replication backlog freed after " + std::to_string(settings.backlog_ttl) +
                      " seconds without connected replicas.");
    }
  }
  refresh_good_replicas(now_ms);
}

void PrimarySide::before_sleep() {
  // A paused pipe resumes once the replicas took their share.
  if (pipe_->is_open() && !pipe_->watched) read_pipe();
  send_file_chunks();
  // Not while clients are paused (the GETACK would grow the stream under a FAILOVER waiting
  // for it to stand still); it goes once the pause ends.
  if (get_ack_pending_ && !service_.state().client_pause().active()) {
    get_ack_pending_ = false;
    bool any_online = false;
    for (auto& replica : replicas_) any_online = any_online || replica->state == ReplicaState::kOnline;
    if (any_online && backlog_) {
      std::string getack;
      append_resp_command(getack, {"REPLCONF", "GETACK", "*"});
      append_stream(getack);
    }
  }
  if (acks_changed_) {
    acks_changed_ = false;
    refresh_good_replicas(service_.state().clock().wall_ms());
    if (ReplicationHost* replication_host = host()) {
      const std::vector<uint64_t> waiting = waiting_clients_;
      for (uint64_t id : waiting) replication_host->retry_blocked_client(id);
    }
  }
}

// ---- INFO ---------------------------------------------------------------------------------

void PrimarySide::write_replicas_info(InfoText& info) {
  const std::vector<ReplicaSummary> list = replicas();
  info.field("connected_slaves", static_cast<int64_t>(list.size()));
  const ReplicationRole& role = service_.role();
  if (role.min_replicas_to_write != 0 && role.min_replicas_max_lag != 0) {
    info.field("min_slaves_good_slaves", role.good_replicas);
  }
  int index = 0;
  for (const ReplicaSummary& replica : list) {
    info.field("slave" + std::to_string(index++),
               "ip=" + replica.ip + ",port=" + std::to_string(replica.port) +
                   ",state=" + replica.state + ",offset=" + std::to_string(replica.offset) +
                   ",lag=" + std::to_string(replica.lag_seconds));
  }
}

int64_t PrimarySide::backlog_memory() const {
  return backlog_ ? static_cast<int64_t>(backlog_->allocated_bytes()) : 0;
}

void PrimarySide::write_backlog_info(InfoText& info) {
  info.field("repl_backlog_active", backlog_ ? 1 : 0);
  info.field("repl_backlog_size", service_.settings().backlog_size);
  info.field("repl_backlog_first_byte_offset", backlog_ ? backlog_->first_offset() : 0);
  info.field("repl_backlog_histlen", backlog_ ? backlog_->history_length() : 0);
}

// ---- registration -------------------------------------------------------------------------

namespace {

void sync_handler(CommandContext& ctx) {
  ctx.service<ReplicationService>().primary().sync_command(ctx);
}
void replconf_handler(CommandContext& ctx) {
  ctx.service<ReplicationService>().primary().replconf_command(ctx);
}
void wait_handler(CommandContext& ctx) {
  ctx.service<ReplicationService>().primary().wait_command(ctx);
}

constexpr CommandSpec kPrimaryCommands[] = {
    {"psync", -3, kAdmin | kNoScript | kNoAsyncLoading | kNoMulti, 0, 0, 0, 0, sync_handler,
     "server", "2.8.0", "Internal command used for replication", ""},
    {"sync", 1, kAdmin | kNoScript | kNoAsyncLoading | kNoMulti, 0, 0, 0, 0, sync_handler,
     "server", "1.0.0", "Internal command used for replication", ""},
    {"replconf", -1, kAdmin | kNoScript | kLoading | kStale | kAllowBusy, 0, 0, 0, 0,
     replconf_handler, "server", "3.0.0",
     "An internal command for configuring the replication stream", "O(1)"},
    {"wait", 3, kNoScript, 0, 0, 0, kAclConnection, wait_handler, "generic", "3.0.0",
     "Wait for the synchronous replication of all the write commands sent in the context of "
     "the current connection",
     "O(1)"},
};

}  // namespace

bool PrimarySide::save_info(int* stream_db) const {
  if (!backlog_) return false;
  *stream_db = stream_db_ < 0 ? 0 : stream_db_;
  return true;
}

void PrimarySide::install(ServiceSetup& setup) {
  setup.commands.add(kPrimaryCommands);
  RdbService& rdb = service_.rdb();
  rdb.set_child_listener([this](const ForkChild::Exit& exit) { child_done(exit.success()); });
}

}  // namespace keywarden
