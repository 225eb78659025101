#include "server/connection.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "commands/context.h"
#include "commands/dispatcher.h"
#include "common/log.h"

namespace keywarden {
namespace {
// Bytes read per readable event (Redis's PROTO_IOBUF_LEN). Bounding each read is what keeps
// one client pipelining a million commands from starving the others: it gets a turn of this
// size, then the loop moves on.
constexpr size_t kReadChunk = 16 * 1024;
// A reply buffer larger than this is given back to the allocator once it has been sent.
constexpr size_t kIdleOutputKeep = 64 * 1024;
constexpr size_t kIdleQueryKeep = 32 * 1024;
// Redis's PROTO_MBULK_BIG_ARG: a bulk argument at least this long that has not all arrived with
// its header is read into a block of its own (Connection::big_arguments_).
constexpr size_t kBigArgument = 32 * 1024;
// The cron's query-buffer resizing (Redis's clientsCronResizeQueryBuffer): it acts only on a
// buffer wasting more than kQueryWasteBytes; a client idle for more than kResizeIdleMs loses
// all its free room, a busy one only the room above twice its recent peak, and only from a
// buffer bigger than kQueryResizeThreshold (smaller ones are not worth a copy every second).
constexpr size_t kQueryWasteBytes = 4 * 1024;
constexpr size_t kQueryResizeThreshold = 32 * 1024;
constexpr int64_t kResizeIdleMs = 2000;
// Redis keeps this much of a client's replies in a static buffer and counts only the rest as
// output memory (omem, client-output-buffer-limit).
constexpr size_t kStaticReplyBytes = 16 * 1024;
// Write at most this much per flush so one huge reply cannot monopolise the loop.
constexpr size_t kMaxWritePerFlush = 64 * 1024 * 1024;
}  // namespace

char* ByteBuffer::prepare(size_t extra) {
  if (end_ + extra <= capacity_) return bytes_.get() + end_;
  size_t used = size();
  if (used + extra <= capacity_ && start_ >= capacity_ / 2) {
    // Plenty of room once the consumed front is dropped.
    std::memmove(bytes_.get(), bytes_.get() + start_, used);
  } else {
    size_t new_capacity = std::max(capacity_ * 2, used + extra);
    std::unique_ptr<char[]> bigger(new char[new_capacity]);  // not zero-filled
    if (used > 0) std::memcpy(bigger.get(), bytes_.get() + start_, used);
    bytes_ = std::move(bigger);
    capacity_ = new_capacity;
  }
  start_ = 0;
  end_ = used;
  return bytes_.get() + end_;
}

void ByteBuffer::consume(size_t count) {
  start_ += count;
  if (start_ == end_) start_ = end_ = 0;
}

void ByteBuffer::shrink_if_idle(size_t keep) {
  if (empty() && capacity_ > keep) {
    bytes_.reset();
    capacity_ = start_ = end_ = 0;
  }
}

void ByteBuffer::shrink_to(size_t capacity) {
  const size_t used = size();
  const size_t target = std::max(used, capacity);
  if (target >= capacity_) return;
  if (target == 0) {
    bytes_.reset();
  } else {
    std::unique_ptr<char[]> smaller(new char[target]);
    if (used > 0) std::memcpy(smaller.get(), bytes_.get() + start_, used);
    bytes_ = std::move(smaller);
  }
  capacity_ = target;
  start_ = 0;
  end_ = used;
}

Connection::Connection(ConnectionHost& server, int fd, uint64_t id, std::string peer, std::string local,
                       bool unix_socket)
    : server_(server),
      fd_(fd),
      transport_(fd),
      peer_(std::move(peer)),
      local_(std::move(local)),
      unix_socket_(unix_socket),
      writer_(&output_) {
  session_.id = id;
  session_.subscriber = this;
  // Every client starts as the default user, logged in when that user needs no password.
  session_.user = server.state().acl().default_user();
  session_.authenticated = server.state().acl().default_user_open();
  session_.is_local = unix_socket || peer_.starts_with("127.") || peer_.starts_with("[::1]") ||
                      peer_.starts_with("::1");
  ParserLimits limits;
  limits.proto_max_bulk_len = server.state().settings().proto_max_bulk_len;
  limits.auth_required = !session_.authenticated;
  parser_.set_limits(limits);
  created_ms_ = last_interaction_ms_ = server.state().clock().wall_ms();
  watch_output_limit();
  watch_for(EventLoop::kReadable);
}

Connection::~Connection() { close(); }

std::string Connection::start_tls(const TlsContextPtr& context, int verify_mode) {
  return transport_.start_tls(context, /*accepting=*/true, {}, false, verify_mode);
}

void Connection::watch_for_io(bool output_pending) {
  const bool writable = output_pending || transport_.read_wants_write();
  watch_for(writable ? EventLoop::kReadable | EventLoop::kWritable : EventLoop::kReadable);
}

void Connection::watch_for(uint32_t events) {
  if (fd_ < 0 || events == watched_events_) return;
  if (watched_events_ == 0) {
    server_.loop().watch(fd_, events, this);
  } else {
    server_.loop().update(fd_, events, this);
  }
  watched_events_ = events;
}

void Connection::close() {
  if (fd_ < 0) return;
  server_.state().blocking().unblock(session_);
  server_.state().pubsub().unsubscribe_all(this);
  server_.loop().unwatch(fd_);
  transport_.shutdown();
  ::close(fd_);
  fd_ = -1;
  server_.connection_closed(this);
}

void Connection::on_events(uint32_t events) {
  if (closed()) return;
  // The client whose script is running is answered when the script ends; what it sends
  // meanwhile waits in the socket.
  if (server_.script_running_for(session_)) return;
  // A TLS stream may need the other readiness than the one its operation waits for: a read
  // that had to write goes on when the socket is writable, a write that had to read when it
  // is readable.
  const bool read_waits_for_write = transport_.read_wants_write();
  if ((events & EventLoop::kWritable) || transport_.write_wants_read()) {
    if (!flush()) return;
  }
  if (read_pending_) {
    // An I/O thread read for this event already (ClientRegistry::read_batch).
    read_pending_ = false;
    handle_read(io_read_result_, false);
  } else if ((events & EventLoop::kReadable) ||
             (read_waits_for_write && (events & EventLoop::kWritable))) {
    read_from_socket();
  }
}

char* Connection::read_target(size_t& want) {
  if (big_argument_missing_ > 0) {
    // Exactly what the big argument lacks, so that its block ends with it and nothing of the
    // next command lands there (as Redis limits its read to the rest of a big bulk).
    StringBlock& block = big_arguments_.back().block;
    want = big_argument_missing_;
    // The cron gives back the room of a client idle in the middle of one (resize_buffers).
    if (block.capacity() < block.size() + want) block.resize(block.size() + want);
    return block.data() + block.size();
  }
  // A bulk argument announced by its header is read in as few calls as possible.
  want = std::max(kReadChunk, std::min(parser_.bytes_wanted(), size_t{64} << 20));
  if (parser_.bytes_wanted() > query_.size()) {
    want = std::max(kReadChunk, parser_.bytes_wanted() - query_.size());
  }
  return query_.prepare(want);
}

void Connection::read_from_socket() {
  size_t want = 0;
  char* into = read_target(want);
  const bool was_waiting_for_write = transport_.read_wants_write();
  const ssize_t count = transport_.read(into, want);
  if (count > 0) commit_read(static_cast<size_t>(count));
  handle_read(count, was_waiting_for_write);
}

bool Connection::readable_off_thread() const {
  return !closed() && !read_pending_ && !transport_.tls() && !session_.replica &&
         !server_.script_running_for(session_);
}

void Connection::prepare_read() { io_read_into_ = read_target(io_read_want_); }

void Connection::read_input() {
  // Only this connection's socket and the room prepare_read() reserved (in the query buffer,
  // or in the block of a big argument being received).
  io_read_result_ = closed() ? Transport::kAgain : transport_.read(io_read_into_, io_read_want_);
}

void Connection::read_done(ssize_t result) {
  io_read_result_ = closed() ? Transport::kAgain : transport_.adopt_result(result);
}

void Connection::finish_read() {
  // The bytes join the query buffer (or the big argument's block) at once, so that whatever
  // the command thread does with this connection before its event is handled sees a
  // consistent buffer.
  if (io_read_result_ > 0) commit_read(static_cast<size_t>(io_read_result_));
  io_read_into_ = nullptr;
  read_pending_ = true;
}

void Connection::handle_read(ssize_t count, bool was_waiting_for_write) {
  if (count == 0 || count == Transport::kFailed) {
    if (count == Transport::kFailed && transport_.tls()) {
      log_message(LogLevel::kVerbose, "Error accepting a client connection: " +
                                          transport_.error() + " (addr=" + peer_ +
                                          " laddr=" + local_ + ")");
    }
    close();
    return;
  }
  if (count == Transport::kAgain) {
    // A TLS handshake step may have to wait for writability.
    if (transport_.read_wants_write() != was_waiting_for_write) watch_for_io(output_size() > 0);
    return;
  }
  if (was_waiting_for_write) watch_for_io(output_size() > 0);
  // Bytes OpenSSL decrypted already are not in the socket any more, so the loop would not
  // report them: take them now (at most the rest of one TLS record).
  while (size_t pending = transport_.pending()) {
    size_t room = 0;
    char* into = read_target(room);
    pending = std::min(pending, room);
    ssize_t more = transport_.read(into, pending);
    if (more <= 0) break;
    commit_read(static_cast<size_t>(more));
    count += more;
  }
  query_peak_ = std::max(query_peak_, query_.size());
  ++server_.traffic().reads_processed;
  server_.traffic().net_input_bytes += static_cast<uint64_t>(count);
  batch_clock_ = server_.state().clock().read();
  last_interaction_ms_ = batch_clock_.wall_ms;
  if (static_cast<int64_t>(query_buffer_size()) > server_.client_limits().query_buffer_limit) {
    // Redis closes such a client without a reply: it is not speaking the protocol sanely.
    close();
    return;
  }
  // A query buffer that takes the clients past maxmemory-clients may get this client evicted
  // before its command runs.
  server_.client_memory_changed(*this);
  // Nothing to parse until the big argument being read is complete.
  if (big_argument_missing_ > 0) return;
  batch_clock_valid_ = true;
  process_query_buffer();
  batch_clock_valid_ = false;
  server_.client_memory_changed(*this);
}

void Connection::commit_read(size_t count) {
  if (big_argument_missing_ == 0) {
    query_.commit(count);
    return;
  }
  StringBlock& block = big_arguments_.back().block;
  block.set_size(block.size() + count);
  big_argument_missing_ -= count;
  // Complete: the block holds the bulk's bytes (its trailer stays behind them, unused).
  if (big_argument_missing_ == 0) block.set_size(block.size() - 2);
}

void Connection::detach_big_argument() {
  const std::optional<RequestParser::AwaitedBulk> awaited = parser_.awaited_bulk();
  if (!awaited || awaited->length < kBigArgument) return;
  // What arrived of the body so far (less than body and trailer: the parser is waiting) moves
  // to the block, which the next reads fill.
  const size_t needed = awaited->length + 2;
  const size_t have = query_.size() - awaited->offset;
  StringBlock block = StringBlock::allocate(needed);
  if (have > 0) std::memcpy(block.data(), query_.data() + awaited->offset, have);
  block.set_size(have);
  query_.truncate(awaited->offset);
  const size_t index = parser_.detach_bulk({block.data(), awaited->length});
  big_arguments_.push_back({index, std::move(block)});
  big_argument_offsets_.push_back(awaited->offset);
  big_argument_missing_ = needed - have;
}

void Connection::restore_big_arguments() {
  // Rare (a pause that began while a big argument was on its way): one copy of each argument
  // back into a buffer laid out as the client sent it.
  ByteBuffer restored;
  size_t from = 0;
  for (size_t i = 0; i < big_arguments_.size(); ++i) {
    const size_t cut = big_argument_offsets_[i];
    const StringBlock& block = big_arguments_[i].block;
    const size_t length = block.size() + 2;  // with its trailer
    char* into = restored.prepare(cut - from + length);
    std::memcpy(into, query_.data() + from, cut - from);
    std::memcpy(into + (cut - from), block.view().data(), length);
    restored.commit(cut - from + length);
    from = cut;
  }
  const size_t rest = query_.size() - from;
  if (rest > 0) {
    std::memcpy(restored.prepare(rest), query_.data() + from, rest);
    restored.commit(rest);
  }
  query_ = std::move(restored);
  big_arguments_.clear();
  big_argument_offsets_.clear();
}

size_t Connection::query_buffer_size() const {
  size_t size = query_.size();
  for (const OwnedArgument& argument : big_arguments_) size += argument.block.size();
  return size;
}

size_t Connection::query_buffer_capacity() const {
  size_t capacity = query_.capacity();
  for (const OwnedArgument& argument : big_arguments_) capacity += argument.block.capacity();
  return capacity;
}

void Connection::resume() {
  if (closed()) return;
  process_query_buffer();
  server_.client_memory_changed(*this);
}

void Connection::resize_buffers(int64_t now_ms) {
  // The client whose script is running has its arguments in the query buffer.
  if (closed() || server_.script_running_for(session_)) return;
  const size_t before = memory_usage();
  const size_t used = query_.size();
  const bool idle = now_ms - last_interaction_ms_ > kResizeIdleMs;
  if (query_.capacity() - used > kQueryWasteBytes) {
    if (idle) {
      query_.shrink_to(0);
    } else if (query_.capacity() > kQueryResizeThreshold &&
               query_.capacity() / 2 > query_peak_) {
      // Not below what is in use lately, nor below a big argument being received: that
      // room is about to be used again.
      query_.shrink_to(std::max(query_peak_, parser_.bytes_wanted()));
    }
  }
  // A big argument's block keeps room for its missing bytes, except from a client idle for
  // long (as Redis 7.0 frees an idle client's spare query-buffer room even in the middle of a
  // bulk); read_target() makes the room again when they come.
  if (idle && big_argument_missing_ > 0) {
    StringBlock& block = big_arguments_.back().block;
    if (block.capacity() - block.size() > kQueryWasteBytes) block.resize(block.size());
  }
  query_peak_ = std::max(query_.size(), parser_.bytes_wanted());
  if (idle && output_.empty() && output_.capacity() > kQueryWasteBytes) {
    std::string().swap(output_);
  }
  if (memory_usage() != before) server_.client_memory_changed(*this);
}

size_t Connection::memory_usage() const {
  return sizeof(Connection) + query_buffer_capacity() + output_.capacity() +
         session_.transaction.memory_overhead();
}

void Connection::evict() {
  close_asap_ = true;
  server_.queue_write(this);
}

void Connection::retry_blocked() {
  watch_output_limit();
  const size_t mark = output_.size();
  if (!server_.dispatcher().retry_blocked(session_, writer_)) return;
  if (session_.reply_mode == ReplyMode::kOff) output_.resize(mark);
  server_.queue_write(this);
  server_.resume_later(this);
}

void Connection::end_blocked(std::string_view error) {
  if (!session_.blocked.blocked()) return;
  watch_output_limit();
  const size_t mark = output_.size();
  server_.dispatcher().end_blocked(session_, writer_, error);
  if (session_.reply_mode == ReplyMode::kOff) output_.resize(mark);
  server_.queue_write(this);
  server_.resume_later(this);
}

void Connection::set_held_by_pause(bool held) {
  if (held == held_by_pause_) return;
  held_by_pause_ = held;
  server_.pause_hold_changed(held ? 1 : -1);
}

void Connection::process_query_buffer() {
  set_held_by_pause(false);
  // CONFIG SET proto-max-bulk-len applies to connections already open, as in Redis, whose
  // parser reads the setting at each bulk header.
  const int64_t max_bulk = server_.state().settings().proto_max_bulk_len;
  if (parser_.limits().proto_max_bulk_len != max_bulk) {
    ParserLimits limits = parser_.limits();
    limits.proto_max_bulk_len = max_bulk;
    parser_.set_limits(limits);
  }
  // A blocked client's further commands wait in the buffer until it is served; a command
  // waits until the big argument being read into its own block is complete.
  while (!closed() && !session_.close_after_reply && !close_asap_ &&
         !session_.blocked.blocked() && big_argument_missing_ == 0 && !query_.empty()) {
    // Parse ahead: up to kBatchSize complete commands. Multibulk arguments are views into the
    // query buffer and stay valid until it is consumed; an inline command's arguments live in
    // the parser and last only until the next parse, so an inline command ends a batch.
    batch_.clear();
    batch_args_.clear();
    size_t offset = 0;
    ParseStatus status = ParseStatus::kNeedMore;
    while (batch_.size() < kBatchSize) {
      status = parser_.parse(query_.data() + offset, query_.size() - offset);
      offset += parser_.consumed();
      if (status != ParseStatus::kCommand) break;
      std::span<const std::string_view> args = parser_.args();
      batch_.push_back({batch_args_.size(), args.size(), offset,
                        server_.state().commands().find_for_args(args)});
      batch_args_.insert(batch_args_.end(), args.begin(), args.end());
      const char* first = args[0].data();
      if (first < query_.data() || first >= query_.data() + query_.size()) break;
    }
    if (batch_.size() > 1) prefetch_batch();

    size_t done = 0;  // bytes of the commands executed so far
    for (const BatchCommand& queued : batch_) {
      std::span<const std::string_view> args(batch_args_.data() + queued.first_arg,
                                             queued.arg_count);
      // Big arguments read aside belong to the first command parsed after them.
      const OwnedArguments owned =
          &queued == &batch_.front() ? OwnedArguments(big_arguments_) : OwnedArguments();
      // A command that CLIENT PAUSE holds back stays in the buffer, unread: resume() parses
      // from here again once the pause ends.
      if (execute_one(args, queued.command, owned) == ExecutionResult::Outcome::kPostponed) {
        set_held_by_pause(true);
        query_.consume(done);
        if (!owned.empty()) restore_big_arguments();
        parser_.reset();
        finish_processing();
        return;
      }
      if (!owned.empty()) {
        big_arguments_.clear();  // those the command did not keep are freed
        big_argument_offsets_.clear();
      }
      done = queued.end_offset;
      if (session_.blocked.blocked()) {
        query_.consume(done);
        parser_.reset();
        finish_processing();
        return;
      }
      if (closed() || session_.close_after_reply) break;
    }
    if (closed()) return;
    if (session_.close_after_reply) {
      query_.consume(query_.size());
      break;
    }
    if (status == ParseStatus::kError) {
      writer_.error(parser_.error());
      server_.state().count_error(parser_.error());
      session_.close_after_reply = true;
      query_.consume(query_.size());
      break;
    }
    query_.consume(offset);
    if (status == ParseStatus::kNeedMore) {
      detach_big_argument();
      break;
    }
  }
  finish_processing();
}

void Connection::prefetch_batch() {
  // Three passes over the batch so that its cache misses overlap: first every key's bucket
  // slot, then (the slots being on their way) what each slot points at, an entry or the array
  // of a crowded bucket, then the entries of those arrays that may hold the key. Every key of a
  // command is hinted (an MSET's ten keys miss the cache as much as ten GETs' do), up to
  // kPrefetchKeys a batch, in the database selected now; a SELECT inside the batch just makes
  // the hints useless, never wrong.
  Database& db = server_.state().keyspace().db(session_.db);
  prefetch_hashes_.clear();
  for (const BatchCommand& queued : batch_) {
    const Command* command = queued.command;
    if (command == nullptr) continue;
    const int first = command->spec->first_key;
    if (first <= 0 || static_cast<size_t>(first) >= queued.arg_count) continue;
    const int count = static_cast<int>(queued.arg_count);
    const int last = command->spec->last_key < 0 ? count + command->spec->last_key
                                                 : std::min(command->spec->last_key, count - 1);
    const int step = std::max(command->spec->key_step, 1);
    for (int at = first; at <= last && prefetch_hashes_.size() < kPrefetchKeys; at += step) {
      const uint64_t hash = Database::hash_key(batch_args_[queued.first_arg + at]);
      prefetch_hashes_.push_back(hash);
      db.prefetch_bucket(hash);
    }
  }
  for (uint64_t hash : prefetch_hashes_) db.prefetch_entry(hash);
  for (uint64_t hash : prefetch_hashes_) db.prefetch_crowded_entry(hash);
}

void Connection::finish_processing() {
  query_.shrink_if_idle(kIdleQueryKeep);
  enforce_output_limit();
  if (!output_.empty() || session_.close_after_reply) server_.queue_write(this);
}

ExecutionResult::Outcome Connection::execute_one(std::span<const std::string_view> args,
                                                 Command* command, OwnedArguments owned) {
  const bool skip_this = session_.reply_mode == ReplyMode::kSkip;
  watch_output_limit();
  const size_t mark = output_.size();
  const bool was_authenticated = session_.authenticated;
  hold_pushes_ = session_.reply_mode != ReplyMode::kOn;
  // A replica's replies are never sent (Redis's prepareClientToWrite); PSYNC's own answer is
  // sent on the channel.
  const bool drop_reply = session_.replica;
  executing_ = true;
  const ExecutionResult result = server_.dispatcher().execute(
      session_, args, writer_, command, batch_clock_valid_ ? &batch_clock_ : nullptr, owned);
  executing_ = false;
  if (result.ran()) batch_clock_ = result.finished_at;
  if (session_.replica) {
    if (drop_reply) output_.resize(mark);
    output_ += held_stream_;
    held_stream_.clear();
  }
  if (result.outcome == ExecutionResult::Outcome::kPostponed) {
    // Nothing ran and nothing was replied: the command is offered again when the pause ends,
    // in whatever reply mode is in force then.
    hold_pushes_ = false;
    output_ += held_pushes_;
    held_pushes_.clear();
    return result.outcome;
  }
  ++commands_processed_;
  const bool executed = result.ran();

  if (skip_this) {
    // CLIENT REPLY ON ends a skip and its own "+OK" is sent, as in Redis; anything else run
    // while skipping is dropped. A CLIENT REPLY SKIP run while skipping skips the next one.
    const bool turned_on = session_.reply_mode == ReplyMode::kOn &&
                           session_.last_command != nullptr &&
                           session_.last_command->full_name == "client|reply";
    if (!turned_on) output_.resize(mark);
    if (session_.reply_mode == ReplyMode::kSkip) {
      session_.reply_mode = ReplyMode::kOn;
    } else if (session_.reply_mode == ReplyMode::kSkipNext) {
      session_.reply_mode = ReplyMode::kSkip;
    }
  } else if (session_.reply_mode == ReplyMode::kOff) {
    output_.resize(mark);
  } else if (session_.reply_mode == ReplyMode::kSkipNext) {
    output_.resize(mark);
    session_.reply_mode = ReplyMode::kSkip;
  }
  if (hold_pushes_) {
    hold_pushes_ = false;
    output_ += held_pushes_;
    held_pushes_.clear();
  }
  if (session_.authenticated != was_authenticated) {
    parser_.set_auth_required(!session_.authenticated);
  }
  // Like Redis, the slow log, the latency monitor and MONITOR see only commands that ran, not
  // those refused before (unknown, wrong arity, NOAUTH…).
  if (executed && session_.last_command != nullptr) {
    server_.command_ran(*this, args, *session_.last_command, result.duration_us);
  }
  // Writes of this command may have made keys that clients wait on ready. Their commands take
  // time this client's next command must not count as its own start.
  if (server_.state().blocking().has_ready()) {
    server_.serve_blocked_clients();
    batch_clock_valid_ = false;
  }
  return result.outcome;
}

void Connection::send_raw(std::string_view bytes) {
  if (closed()) return;
  output_.append(bytes);
  server_.queue_write(this);
}

ReplyWriter* Connection::pubsub_writer() {
  if (close_asap_) return nullptr;
  if (!hold_pushes_) {
    watch_output_limit();
    return &writer_;
  }
  held_writer_.set_resp(session_.resp);
  return &held_writer_;
}

void Connection::pubsub_delivered() {
  server_.queue_write(this);
  enforce_output_limit();
  server_.client_memory_changed(*this);
}

size_t Connection::output_memory() const {
  const size_t pending = output_size();
  return pending > kStaticReplyBytes ? pending - kStaticReplyBytes : 0;
}

const OutputBufferLimit& Connection::output_limit() const {
  if (session_.replica) return server_.client_limits().output[kOutputClassReplica];
  return server_.client_limits().output[session_.subscribed() ? kOutputClassPubSub
                                                                       : kOutputClassNormal];
}

std::string Connection::channel_peer_ip() const {
  // "ip:port", or "[v6]:port": everything before the last colon, without brackets.
  const size_t colon = peer_.rfind(':');
  std::string ip = colon == std::string::npos ? peer_ : peer_.substr(0, colon);
  if (ip.size() >= 2 && ip.front() == '[' && ip.back() == ']') ip = ip.substr(1, ip.size() - 2);
  return ip;
}

void Connection::channel_send(std::string_view bytes) {
  if (closed() || close_asap_) return;
  if (executing_) {
    held_stream_.append(bytes);
    return;
  }
  output_.append(bytes);
  server_.queue_write(this);
  enforce_output_limit();
}

void Connection::channel_close_async() {
  if (closed()) return;
  close_asap_ = true;
  server_.queue_write(this);
}

void Connection::watch_output_limit() {
  // The writer asks when the bytes not yet sent, beyond the static 16 KiB, reach the soft
  // limit (while not over it yet) or the hard one. Over the soft limit, its time is checked
  // after each command and by the cron. Replies a CLIENT REPLY mode drops count for nothing.
  size_t mark = SIZE_MAX;
  const OutputBufferLimit& limit = output_limit();
  if (session_.reply_mode == ReplyMode::kOn && !close_asap_) {
    const size_t base = output_sent_ + kStaticReplyBytes;
    if (limit.hard > 0) mark = base + static_cast<size_t>(limit.hard);
    if (limit.soft > 0 && soft_limit_since_ms_ == 0) {
      mark = std::min(mark, base + static_cast<size_t>(limit.soft));
    }
  }
  writer_.watch_size(mark, this);
}

bool Connection::reply_buffer_reached(ReplyWriter&) {
  enforce_output_limit();
  if (close_asap_) return true;
  watch_output_limit();
  return false;
}

void Connection::enforce_output_limit(bool from_cron) {
  if (close_asap_ || closed()) return;
  const size_t used = output_memory();
  if (used == 0) {
    soft_limit_since_ms_ = 0;
    return;
  }
  const OutputBufferLimit& limit = output_limit();
  const int64_t bytes = static_cast<int64_t>(used);
  bool over = limit.hard > 0 && bytes >= limit.hard;
  if (limit.soft > 0 && bytes >= limit.soft) {
    // Over the soft limit only counts once it has lasted longer than the soft seconds.
    const int64_t now_ms = server_.state().clock().wall_ms();
    if (soft_limit_since_ms_ == 0) {
      soft_limit_since_ms_ = now_ms;
    } else if (now_ms / 1000 - soft_limit_since_ms_ / 1000 > limit.soft_seconds) {
      over = true;
    }
  } else {
    soft_limit_since_ms_ = 0;
  }
  if (!over) return;
  // Not the client whose script is running (the cron can run while a script is busy).
  if (from_cron && !server_.script_running_for(session_)) {
    log_message(LogLevel::kWarning,
                "Client " + client_info_line(*this, server_.state().clock().wall_ms()) +
                    " closed for overcoming of output buffer limits.");
    close();
    return;
  }
  log_message(LogLevel::kWarning,
              "Client " + client_info_line(*this, server_.state().clock().wall_ms()) +
                  " scheduled to be closed ASAP for overcoming of output buffer limits.");
  close_asap_ = true;
  server_.queue_write(this);  // closed at the flush, without sending what is left
}

bool Connection::flush() {
  if (!begin_flush()) return false;
  write_output();
  return end_flush();
}

bool Connection::begin_flush() {
  if (closed()) return false;
  // No reply may leave before the AOF holds the writes it acknowledges.
  server_.before_replies();
  if (close_asap_) {
    close();
    return false;
  }
  const size_t pending = output_.size() - output_sent_;
  if (last_interaction_ms_ - output_peak_since_ms_ >= 5000) {
    output_peak_ = 0;
    output_peak_since_ms_ = last_interaction_ms_;
  }
  output_peak_ = std::max(output_peak_, pending);
  if (pending > 0) ++server_.traffic().writes_processed;
  return true;
}

bool Connection::writable_off_thread() const {
  // Only a plain socket with a plain reply buffer: TLS (OpenSSL's per-connection state and
  // error queue), a replica's stream and MONITOR stay on the command thread.
  return !closed() && !close_asap_ && !transport_.tls() && !session_.replica && !monitor_ &&
         output_sent_ < output_.size();
}

void Connection::write_output() {
  // Touches only this connection's reply buffer, its sent offset and its socket: safe on an
  // I/O thread while the command thread waits.
  io_written_ = 0;
  io_failed_ = false;
  if (closed()) return;  // its descriptor number may belong to something else by now
  while (output_sent_ < output_.size() && io_written_ < kMaxWritePerFlush) {
    const size_t length = std::min(output_.size() - output_sent_, kMaxWritePerFlush - io_written_);
    if (!account_sent(transport_.write(output_.data() + output_sent_, length))) return;
  }
}

bool Connection::account_sent(ssize_t count) {
  if (count == Transport::kAgain) return false;
  if (count < 0) {
    io_failed_ = true;
    return false;
  }
  output_sent_ += static_cast<size_t>(count);
  io_written_ += static_cast<size_t>(count);
  return true;
}

std::string_view Connection::unsent_output() const {
  return std::string_view(output_).substr(output_sent_, kMaxWritePerFlush);
}

void Connection::write_done(ssize_t result) {
  io_written_ = 0;
  io_failed_ = false;
  account_sent(transport_.adopt_result(result));
}

bool Connection::end_flush() {
  server_.traffic().net_output_bytes += io_written_;
  io_written_ = 0;
  if (closed()) return false;
  if (io_failed_) {
    io_failed_ = false;
    close();
    return false;
  }
  if (output_sent_ == output_.size()) {
    output_.clear();
    output_sent_ = 0;
    if (output_.capacity() > kIdleOutputKeep) output_.shrink_to_fit();
    watch_output_limit();
    if (session_.close_after_reply) {
      close();
      return false;
    }
    watch_for_io(false);
  } else {
    // A TLS write waiting for readability is retried on the next readable event.
    watch_for_io(!transport_.write_wants_read());
  }
  server_.client_memory_changed(*this);
  return true;
}

}  // namespace keywarden
