// One client connection: its socket, query buffer, request parser, reply buffer and the
// command-layer session. Reading parses and executes every complete command the read brought
// (pipelining); replies accumulate in one buffer that the server flushes before the loop
// sleeps, so a pipelined batch leaves in one write.
//
// A connection is closed in place (descriptor closed, unwatched) but destroyed by the server
// between event batches, because the loop may still hold its pointer in the current batch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "commands/client_session.h"
#include "commands/dispatcher.h"
#include "common/string_block.h"
#include "resp/reply_writer.h"
#include "resp/request_parser.h"
#include "replication/replica_channel.h"
#include "server/connection_host.h"
#include "common/event_loop.h"
#include "common/transport.h"

namespace keywarden {


// A byte buffer that grows without zero-filling (unlike std::string::resize) and drops its
// consumed front lazily.
class ByteBuffer {
 public:
  char* data() { return bytes_.get() + start_; }
  size_t size() const { return end_ - start_; }
  bool empty() const { return end_ == start_; }
  size_t capacity() const { return capacity_; }
  // Makes room for at least `extra` bytes after the data; returns where to write them.
  char* prepare(size_t extra);
  void commit(size_t written) { end_ += written; }
  void consume(size_t count);
  // Drops the bytes from the data's offset `size` on (keeps the first `size`).
  void truncate(size_t size) { end_ = start_ + size; }
  // Returns the memory of an unusually large buffer once it is empty.
  void shrink_if_idle(size_t keep);
  // Reallocates to hold max(size(), capacity) bytes (none at all when both are 0), the data
  // moved to the front; does nothing when that would not shrink the buffer.
  void shrink_to(size_t capacity);

 private:
  std::unique_ptr<char[]> bytes_;
  size_t capacity_ = 0;
  size_t start_ = 0;
  size_t end_ = 0;
};

// Pub/sub: a connection is a Subscriber whose messages are appended to its reply buffer and
// flushed before the loop sleeps. Output beyond client-output-buffer-limit (its class's hard
// limit, or the soft one for longer than the soft seconds) closes it asynchronously: it is
// flagged, gets no more output, runs no more commands, and is closed at its next flush. The
// limits are checked as replies are appended (the reply writer watches the buffer for the
// size at which a limit is reached, so a huge reply is cut off as it is produced), after each
// command and delivery, and from the cron, so a soft limit ends a client that stopped reading
// even when nothing more is sent to it.
//
// A replica's connection (SYNC/PSYNC) is also the ReplicaChannel the replication service writes
// the stream to: its replies to the replica's own commands are dropped (a replica reads only
// the stream), and its output limits are the replica class's.
class Connection final : public EventHandler,
                         public Subscriber,
                         public ReplyOverflowHandler,
                         public ReplicaChannel {
 public:
  Connection(ConnectionHost& server, int fd, uint64_t id, std::string peer, std::string local,
             bool unix_socket);
  ~Connection() override;

  void on_events(uint32_t events) override;
  // Speaks TLS from now on (a connection accepted on the tls-port, before any byte moved);
  // `verify_mode` is the SSL_VERIFY_* mode tls-auth-clients asks for. "" or the reason.
  std::string start_tls(const TlsContextPtr& context, int verify_mode);
  bool tls() const { return transport_.tls(); }

  // Writes what the reply buffer holds; false when the connection had to be closed.
  bool flush();
  // flush() in three steps, for the I/O threads (server/io_threads.h): begin_flush() and
  // end_flush() (bookkeeping: AOF first, closing, limits, memory, watched events) run on the
  // command thread, write_output() (the send syscalls only) on any thread while the command
  // thread waits. begin_flush() is false when the connection is (or had to be) closed.
  bool begin_flush();
  void write_output();
  bool end_flush();
  // Whether write_output() may run off the command thread: a plain socket with something to
  // send, not a replica, not MONITOR, not closing.
  bool writable_off_thread() const;
  // io-threads-do-reads: prepare_read() (command thread) reserves room where the next read
  // goes (query buffer, or a big argument's block), read_input() (any thread) does the read
  // syscall into it, finish_read() (command thread) adds what came and leaves the outcome for
  // the next on_events(), which parses and executes as after its own read. Parsing stays on
  // the command thread: see ClientRegistry::read_batch.
  bool readable_off_thread() const;
  void prepare_read();
  void read_input();
  void finish_read();
  // io-uring (server/io_uring_batch.h): the same steps with the syscall made by the batch
  // engine. After prepare_read(), read_space() is where its recv goes and read_done() takes the
  // result (a byte count or -errno) in place of read_input(); between begin_flush() and
  // end_flush(), unsent_output() is what its send sends and write_done() takes the result in
  // place of write_output() (one send: what it leaves waits for writability).
  std::span<char> read_space() const { return {io_read_into_, io_read_want_}; }
  void read_done(ssize_t result);
  std::string_view unsent_output() const;
  void write_done(ssize_t result);
  // Closes now; the server destroys the object later.
  void close();
  bool closed() const { return fd_ < 0; }
  // Running a command now (the caller of the command being executed).
  bool executing() const { return executing_; }
  // Sends what is pending, then closes (protocol errors, QUIT, CLIENT KILL of self).
  void close_after_reply() { session_.close_after_reply = true; }

  // Appends an already-encoded reply (MONITOR lines, errors outside a command).
  void send_raw(std::string_view bytes);

  ClientSession& session() { return session_; }
  const ClientSession& session() const { return session_; }
  uint64_t id() const { return session_.id; }
  int fd() const { return fd_; }
  const std::string& peer() const { return peer_; }
  const std::string& local() const { return local_; }
  bool unix_socket() const { return unix_socket_; }
  int64_t created_ms() const { return created_ms_; }
  int64_t last_interaction_ms() const { return last_interaction_ms_; }
  // The query buffer and, while one is being received, the block a big argument is read into
  // (Redis reads such an argument into its query buffer, so CLIENT LIST counts it there).
  size_t query_buffer_size() const;
  size_t query_buffer_capacity() const;
  // Server cron, about once a second per client (Redis's clientsCronResizeQueryBuffer): gives
  // back query-buffer room the client does not use, all of it once the client has been idle
  // for more than 2 seconds, so that idle clients that once sent a big argument hold nothing
  // for it; and the reply buffer of an idle client with nothing to send.
  void resize_buffers(int64_t now_ms);
  size_t output_size() const { return output_.size() - output_sent_; }
  size_t output_capacity() const { return output_.capacity(); }
  // Bytes the connection holds: itself, its buffers, a queued transaction (CLIENT LIST
  // tot-mem without the arguments of a command running now).
  size_t memory_usage() const;
  // What it last reported to ConnectionHost::client_memory_changed (0 once evicted or closed).
  size_t reported_memory = 0;
  // Client eviction: closed at the next flush, without sending what is left.
  void evict();
  // The most reply bytes waiting at once lately (CLIENT LIST rbp); restarts every 5 seconds.
  size_t output_peak() const { return output_peak_; }
  // EventLoop::kReadable / kWritable bits being watched (CLIENT LIST events=).
  uint32_t watched_events() const { return watched_events_; }
  uint64_t commands_processed() const { return commands_processed_; }
  bool monitor() const { return monitor_; }
  void set_monitor(bool on) { monitor_ = on; }
  // Stops reading while paused (CLIENT PAUSE); resumes processing what is buffered.
  void resume();
  // Holding a command back for CLIENT PAUSE: counted as blocked (INFO blocked_clients,
  // CLIENT LIST flags=b), as Redis 7.0 counts its postponed clients.
  bool held_by_pause() const { return held_by_pause_; }
  // A blocked client: runs its command again now that a key it waits on is ready (see
  // commands/blocking.h).
  void retry_blocked();
  // A blocked client: ends the wait with the timeout reply, or with `error`.
  void end_blocked(std::string_view error = {});

  ReplyWriter* pubsub_writer() override;
  void pubsub_delivered() override;
  // Reply bytes beyond the first 16 KiB waiting (Redis's reply list beyond its static buffer:
  // CLIENT LIST omem, and what client-output-buffer-limit measures).
  size_t output_memory() const;
  // Closes the connection asynchronously when its output is over its class's limits; the
  // cron's check (`from_cron`) closes it at once, as Redis's clientsCron does.
  void enforce_output_limit(bool from_cron = false);
  bool close_asap() const { return close_asap_; }
  bool reply_buffer_reached(ReplyWriter& writer) override;

  bool pending_write = false;  // queued on the server's write list

  // ReplicaChannel (replication/replica_channel.h).
  uint64_t channel_client_id() const override { return id(); }
  std::string channel_peer_ip() const override;
  void channel_send(std::string_view bytes) override;
  size_t channel_unsent_bytes() const override { return output_size() + held_stream_.size(); }
  void channel_close_async() override;
  int64_t channel_output_hard_limit() const override {
    return server_.client_limits().output[kOutputClassReplica].hard;
  }

 private:
  void set_held_by_pause(bool held);
  void read_from_socket();
  // Where the next read goes and how much it asks for (`want`): the block of a big argument
  // being received, or room in the query buffer.
  char* read_target(size_t& want);
  // Adds `count` bytes just read at the read position (the big argument's block, or the
  // query buffer).
  void commit_read(size_t count);
  // After a read returned `count` (already committed by commit_read() when positive).
  void handle_read(ssize_t count, bool was_waiting_for_write);
  // Counts the result of one send (write_output's loop, or the ring's for write_done) in
  // output_sent_ and io_written_, or notes the failure; whether another send may follow.
  bool account_sent(ssize_t count);
  void process_query_buffer();
  // After a parse that awaits the body of a big bulk: moves it out of the query buffer into a
  // block of its exact size that the next reads fill (see big_arguments_).
  void detach_big_argument();
  // CLIENT PAUSE held back the command that owns big_arguments_: puts their bytes back where
  // they were in the query buffer, so that the command is parsed again like any other.
  void restore_big_arguments();
  void prefetch_batch();
  void finish_processing();
  // Runs one command through the dispatcher and applies the client's reply mode to its reply.
  ExecutionResult::Outcome execute_one(std::span<const std::string_view> args, Command* command,
                                       OwnedArguments owned = {});
  void watch_for(uint32_t events);
  // Sets the reply size at which the writer next asks reply_buffer_reached().
  void watch_output_limit();
  // The limits of the connection's class (pubsub while subscribed, else normal).
  const OutputBufferLimit& output_limit() const;

  // Watches for readability, and for writability too while a reply waits or a TLS read
  // needs to write.
  void watch_for_io(bool output_pending);

  ConnectionHost& server_;
  bool held_by_pause_ = false;
  int fd_;
  Transport transport_;
  std::string peer_;
  std::string local_;
  bool unix_socket_;
  ByteBuffer query_;
  // The most query-buffer bytes in use since the cron last looked (Redis's querybuf_peak).
  size_t query_peak_ = 0;
  RequestParser parser_;
  // Big bulk arguments (Redis's PROTO_MBULK_BIG_ARG, 32 KiB or more) of the command being
  // received, when they had not all arrived with their header: each is read straight into a
  // block of its exact size (body and trailer), which SET keeps as the stored value instead of
  // copying it out of the query buffer. The parser views them in place of the buffer's bytes
  // (RequestParser::detach_bulk); they belong to the first command parsed next and are freed
  // once it ran (unless it took them). big_argument_missing_ counts the bytes the last one
  // still awaits; while it is not 0, reads go into that block and stop at its end.
  std::vector<OwnedArgument> big_arguments_;
  // Where each of them was cut out of its command (offset from the command's first byte).
  std::vector<size_t> big_argument_offsets_;
  size_t big_argument_missing_ = 0;
  // The commands parsed ahead from the query buffer (pipelining), executed in order.
  static constexpr size_t kBatchSize = 16;
  struct BatchCommand {
    size_t first_arg;   // into batch_args_
    size_t arg_count;
    size_t end_offset;  // query-buffer bytes up to the end of this command
    Command* command;   // looked up once, null when unknown
  };
  std::vector<BatchCommand> batch_;
  // The hashes of the batch's keys hinted to the cache (prefetch_batch), at most kPrefetchKeys:
  // beyond that the first hints would be evicted before their lookups.
  static constexpr size_t kPrefetchKeys = 64;
  std::vector<uint64_t> prefetch_hashes_;
  // While the commands of one read run back to back: the clock as the last of them ended (or
  // as the read returned), the next one's start. Cleared when processing stops.
  ClockReading batch_clock_{0, 0};
  bool batch_clock_valid_ = false;
  std::vector<std::string_view> batch_args_;
  std::string output_;
  size_t output_sent_ = 0;
  // Results of write_output() and read_input(), possibly from an I/O thread, consumed on the
  // command thread.
  size_t io_written_ = 0;
  bool io_failed_ = false;
  bool read_pending_ = false;  // finish_read() left a read for on_events()
  char* io_read_into_ = nullptr;
  size_t io_read_want_ = 0;
  ssize_t io_read_result_ = 0;
  ReplyWriter writer_;
  ClientSession session_;
  uint32_t watched_events_ = 0;
  int64_t created_ms_ = 0;
  int64_t last_interaction_ms_ = 0;
  uint64_t commands_processed_ = 0;
  size_t output_peak_ = 0;
  int64_t output_peak_since_ms_ = 0;
  bool monitor_ = false;
  bool close_asap_ = false;
  int64_t soft_limit_since_ms_ = 0;  // when output first went over the soft limit, 0: under
  // While the client runs a command whose reply may be dropped (CLIENT REPLY OFF/SKIP), the
  // messages it receives meanwhile (its own PUBLISH, keyspace events) and the confirmations of
  // its (un)subscriptions wait here: Redis delivers them whatever the reply mode.
  bool hold_pushes_ = false;
  std::string held_pushes_;
  // Stream bytes sent to this replica while its own command runs (its reply is dropped after
  // the command, the stream must not be): appended once the command is done.
  bool executing_ = false;
  std::string held_stream_;
  ReplyWriter held_writer_{&held_pushes_};
};

// CLIENT LIST's line for `connection` as seen from outside any command (log lines).
// `running`: the command the client runs now (null from outside its commands).
std::string client_info_line(const Connection& connection, int64_t now_ms,
                             const Command* running = nullptr);

}  // namespace keywarden
