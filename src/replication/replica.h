// The replica side of replication: this server's link to its primary (REPLICAOF), as Redis 7.0
// runs it, driven by the event loop and never blocking the command thread.
//
// The link is a state machine (Redis's repl_state): connect (waiting for the cron to try),
// connecting (non-blocking connect in flight), the handshake (PING, AUTH, REPLCONF
// listening-port / ip-address / capa, PSYNC, each reply read as it arrives), transfer (a full
// synchronization's RDB payload, `$<len>` or EOF-marked, written to a temp file or kept in
// memory for diskless load) and connected (the stream applied through the dispatcher as the
// primary's client, REPLCONF ACK sent back every second and on GETACK).
//
// Offsets: ids().offset is the applied offset. Every complete command of the stream is
// handed to PrimarySide::append_stream once applied, which advances it; a MULTI block counts
// only once its EXEC (or DISCARD) is applied, so that a link cut inside a transaction resumes
// from before it (the primary resends it whole), as Redis counts c->reploff.
//
// Partial resynchronization: the replica may PSYNC with ids().replid and ids().offset + 1 when
// it has a history to continue (`resumable_`): after a link that was up broke, after REPLICAOF
// turned a primary into a replica (its own history), or after a restart that loaded the
// repl-* AUX fields of its RDB file. A full sync discards it until it succeeds.
//
// Full sync: the received image replaces the dataset (old keys and function libraries
// flushed, lazily under replica-lazy-flush) and is loaded while clients get -LOADING, as at
// start-up. With repl-diskless-load disabled it goes through a temp file in `dir`
// (temp-<unixtime>.<pid>.rdb) renamed to dbfilename before loading, as Redis does; with swapdb
// or on-empty-db (when the dataset is empty) it is kept in memory and loaded from there once
// received whole. keywarden's loader takes a whole image, so diskless load holds the image in
// memory while it arrives (Redis parses the socket as it reads); and swapdb keeps serving the
// old data during the transfer but, unlike Redis, cannot restore it if the load then fails.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/event_loop.h"
#include "common/transport.h"
#include "resp/request_parser.h"

namespace keywarden {

class InfoText;
class ReplicationService;
struct ClientSession;
struct ServiceSetup;

class ReplicaSide final : public EventHandler {
 public:
  // Redis's repl_state, as ROLE names them (the handshake states show as "handshake").
  enum class LinkState : uint8_t {
    kNone,           // not a replica
    kConnect,        // must connect (the cron tries once a second)
    kConnecting,     // non-blocking connect in flight
    kReceivePing,    // handshake: waiting for each reply in turn
    kReceiveAuth,
    kReceivePort,
    kReceiveIp,
    kReceiveCapa,
    kReceivePsync,
    kTransfer,       // receiving a full sync's RDB payload
    kConnected,      // applying the stream
  };

  explicit ReplicaSide(ReplicationService& service);
  ~ReplicaSide() override;
  ReplicaSide(const ReplicaSide&) = delete;
  ReplicaSide& operator=(const ReplicaSide&) = delete;

  // REPLICAOF, SLAVEOF and ROLE.
  void install(ServiceSetup& setup);
  // Once a second of `now_ms`: connects, times out a stuck link, sends REPLCONF ACK.
  void cron(int64_t now_ms);
  void before_sleep();
  // After start-up loading, with replicaof set: continues the history the RDB file recorded
  // (repl-* AUX fields) if any, and connects.
  void start();
  // INFO replication's master_* and slave_* lines, written while a replica.
  void write_info(InfoText& info);

  // REPLICAOF host port: follows that primary (from a primary or another primary).
  void follow(const std::string& host, int64_t port);
  // REPLICAOF NO ONE: becomes a primary, continuing the history as the second one (PSYNC2).
  void promote();
  // CLIENT KILL TYPE master: closes the link to the primary (it reconnects from the cron,
  // offering a partial resynchronization). False when there was no link up.
  bool kill_link();

  LinkState state() const { return state_; }
  // ROLE's word for the state: connect, connecting, handshake, sync, connected.
  std::string_view state_name() const;
  bool link_up() const { return state_ == LinkState::kConnected; }
  // The repl-* AUX fields a save records (rdbPopulateSaveInfo): the primary's stream
  // database while linked or resumable. False when the replica has no history to record.
  bool save_info(int* stream_db) const;

  void on_events(uint32_t events) override;

 private:
  // Opens the non-blocking connection to the primary.
  void connect_to_primary();
  // Closes the socket and forgets the handshake or transfer in progress. When the link was
  // up its state is kept to resume from (Redis's replicationCacheMaster).
  void close_link(bool keep_history);
  // A failure during the handshake or the transfer: logged by the caller; back to kConnect.
  void fail();

  void on_writable();
  void on_readable();
  // Handshake replies, one line each.
  void handle_line(std::string_view line);
  void handle_psync_reply(std::string_view line);
  void send_handshake_commands();
  void send_psync();
  void begin_transfer(std::string_view replid, int64_t offset);
  // Consumes what the transfer needs from in_; true when the payload is complete.
  bool receive_payload();
  void finish_full_sync();
  // Link up on the stream: the session that applies it, in database `db`.
  void link_established(int db);
  void apply_stream();
  void send_ack();
  void send(std::string_view bytes);
  void flush_output();
  // Takes one line (without its \r\n) from in_; false when none is complete yet.
  bool take_line(std::string* line);
  void remove_transfer_file();
  int64_t now_s() const;

  ReplicationService& service_;
  LinkState state_ = LinkState::kNone;
  int fd_ = -1;
  // The link's stream: plain, or TLS with tls-replication (made when the connect completes).
  std::unique_ptr<Transport> transport_;
  bool watching_writable_ = false;
  std::string in_;         // bytes read and not yet consumed
  size_t in_pos_ = 0;      // first unconsumed byte of in_
  std::string out_;        // bytes to write to the primary
  bool ip_address_sent_ = false;

  // A history to offer PSYNC (see the header comment), and its stream database.
  bool resumable_ = false;
  int stream_db_ = 0;

  // The transfer in progress.
  std::string transfer_replid_;
  int64_t transfer_offset_ = 0;
  bool transfer_header_read_ = false;
  bool transfer_eof_mark_ = false;
  std::string eof_mark_;
  std::string last_bytes_;       // the last 40 bytes received (EOF-marked payloads)
  int64_t transfer_size_ = -1;   // -1 before the header, 0 for an EOF-marked payload
  int64_t transfer_read_ = 0;
  bool transfer_to_disk_ = true;
  int transfer_fd_ = -1;
  std::string transfer_path_;
  std::string transfer_image_;   // diskless load
  int64_t transfer_last_io_s_ = 0;
  bool loading_ = false;         // a full sync is being loaded (re-entered from the loop)
  // Commands of the stream are running: closing the link waits until they return.
  bool applying_ = false;
  bool close_requested_ = false;
  bool close_keeps_history_ = true;

  // The link while up.
  std::unique_ptr<ClientSession> session_;
  RequestParser parser_;
  size_t applied_upto_ = 0;      // in_ bytes before this one have been handed over
  int64_t last_interaction_s_ = 0;
  int64_t down_since_s_ = 0;     // 0: never up since it became a replica
  int64_t last_cron_s_ = 0;
};

}  // namespace keywarden
