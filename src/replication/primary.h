// The primary side of replication: the replicas connected to this server, the backlog, full
// and partial resynchronization (SYNC, PSYNC), the stream fed from the propagation path, the
// handshake's REPLCONF, WAIT and min-replicas-to-write, as Redis 7.0 does them.
//
// A replica goes through Redis's states: wait_bgsave (its full sync waits for a fork child,
// then for the image), send_bulk (a disk image being streamed from the file), online (it gets
// the stream as it is produced). From the fork on, the stream it must apply after the image
// is kept for it (pending_) and sent once the image is out, so nothing is lost in between.
//
// Full syncs never stall the command thread: a fork child writes the image, either to the RDB
// file (repl-diskless-sync no, or a replica without `capa eof`), which the parent then sends
// in chunks as the replica's socket drains, or into a pipe (diskless) that the parent reads
// from the event loop and forwards with Redis's EOF-mark framing, reading no faster than the
// slowest replica takes it. Only one child runs at a time (persistence/fork_child.h): a sync
// that finds another child waits for it to end.
//
// The replication sink (the propagation path's) is registered only while a backlog exists,
// from the first replica until repl-backlog-ttl seconds after the last one left, so a server
// that never had replicas encodes nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace keywarden {

class CommandContext;
class InfoText;
class ReplicaChannel;
class ReplicationBacklog;
class ReplicationHost;
class ReplicationService;
struct ServiceSetup;

// One connected replica as ROLE and INFO show it.
struct ReplicaSummary {
  std::string ip;
  int64_t port = 0;        // its listening port (REPLCONF listening-port)
  std::string state;       // wait_bgsave, send_bulk, online
  int64_t offset = 0;      // the last offset it acknowledged
  int64_t lag_seconds = 0; // since its last ACK
};

// INFO stats' replication counters.
struct ReplicationStats {
  uint64_t sync_full = 0;
  uint64_t sync_partial_ok = 0;
  uint64_t sync_partial_err = 0;
  uint64_t net_repl_output_bytes = 0;  // stream and images sent to replicas
};

class PrimarySide {
 public:
  explicit PrimarySide(ReplicationService& service);
  ~PrimarySide();

  void install(ServiceSetup& setup);
  void cron(int64_t now_ms);
  void before_sleep();
  // INFO replication's connected_slaves and slaveN lines (min_slaves_good_slaves included).
  void write_replicas_info(InfoText& info);
  // INFO replication's repl_backlog_* lines.
  void write_backlog_info(InfoText& info);
  ReplicationStats& stats() { return stats_; }
  // Bytes the backlog holds allocated (INFO mem_replication_backlog), 0 without one.
  int64_t backlog_memory() const;

  // ---- what the replica side (chained replication) and the service call ----
  // Every byte of the replication stream passes here once: on a primary, the propagation
  // path's commands encoded; on a replica, the bytes it applied from its own primary, as
  // received. They go into the backlog and to every replica, and advance ids().offset.
  void append_stream(std::string_view bytes);
  // A new history starts at ids().offset (this replica just loaded a full sync): the backlog
  // restarts empty.
  void restart_history();
  // Closes every replica's connection (they reconnect and PSYNC): a replica changing primary
  // tells its own replicas so, as Redis's disconnectSlaves().
  void disconnect_replicas();
  // The replicas connected now, for ROLE and INFO.
  std::vector<ReplicaSummary> replicas() const;
  // Creates the backlog, starting after ids().offset, unless one exists: a replica that
  // continued its history by +CONTINUE after a restart has none yet.
  void create_backlog();
  // Listens to this server's own writes while it has a backlog and is a primary; a replica
  // passes its primary's stream on as received instead (append_stream), so applying that
  // stream must not be encoded a second time. Called when the role changes.
  void update_sink();
  // For the repl-* AUX fields of a save on a primary: true while a backlog exists, with the
  // database the stream last selected (Redis's rdbPopulateSaveInfo).
  bool save_info(int* stream_db) const;

  // ---- the server's and the commands' ----
  // The connection of replica `client_id` closed (the host calls this before destroying it).
  void replica_closed(uint64_t client_id);
  // Replicas whose last acknowledged offset is at least `offset` (WAIT).
  int64_t acknowledged(int64_t offset) const;
  // A client blocked in WAIT (client_id): it is run again as ACKs arrive, and replicas are
  // asked for an ACK before the loop sleeps.
  void wait_started(uint64_t client_id);

  // Command handlers (registered by install()).
  void sync_command(CommandContext& ctx);
  void replconf_command(CommandContext& ctx);
  void wait_command(CommandContext& ctx);

  // The stream's encoding of one propagated command (SELECT first when its db differs from
  // the last one sent); the propagation sink's work.
  void feed_command(int db, std::span<const std::string> args);

 private:
  struct Replica;
  class StreamSink;
  class PipeReader;

  Replica* find(uint64_t client_id);
  // An image's transfer made progress and is throttled on what the replicas' connections
  // hold: come back right after this iteration's flush instead of sleeping. The flush may
  // empty those buffers and then nothing would wake the loop (no socket stays writable-
  // watched once its output is gone); when it cannot, no progress is made next time and the
  // loop waits for the socket as usual, so this never spins.
  void wake_soon();
  ReplicationHost* host();
  void free_backlog();
  bool try_partial_resync(CommandContext& ctx, Replica& replica);
  void start_full_sync_if_due(int64_t now_ms);
  bool start_child(bool to_socket);
  void setup_full_resync(Replica& replica, int64_t offset);
  void child_done(bool success);
  void read_pipe();
  void close_pipe();
  void send_file_chunks();
  void put_online(Replica& replica);
  void start_stream(Replica& replica);
  void drop(Replica& replica, const std::string& why);
  void send_to(Replica& replica, std::string_view bytes);
  // Holds stream bytes for a replica that cannot take them yet, within its output limit.
  void keep_pending(Replica& replica, std::string_view bytes);
  void refresh_good_replicas(int64_t now_ms);
  void remove_closed();

  ReplicationService& service_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::unique_ptr<ReplicationBacklog> backlog_;
  std::unique_ptr<StreamSink> sink_;
  bool sink_listening_ = false;
  std::unique_ptr<PipeReader> pipe_;
  ReplicationStats stats_;
  // The database the stream selected last (-1: the next command selects again).
  int stream_db_ = -1;
  // What the current fork child is for: none, the RDB file (disk), or the pipe (diskless).
  enum class ChildTarget { kNone, kDisk, kSocket } child_target_ = ChildTarget::kNone;
  int64_t no_replicas_since_ms_ = 0;  // for repl-backlog-ttl
  int64_t last_ping_ms_ = 0;
  int64_t last_second_ms_ = 0;        // the once-a-second work
  // Clients blocked in WAIT; an ACK since the last before-sleep retries them.
  std::vector<uint64_t> waiting_clients_;
  bool acks_changed_ = false;
  bool get_ack_pending_ = false;
};

}  // namespace keywarden
