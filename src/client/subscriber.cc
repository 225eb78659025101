// Subscriber: one connection in subscribed mode, read by one thread (see subscriber.h). Callers
// write SUBSCRIBE-family commands under the core's mutex and wait for the reader to see the
// confirmations; the reader owns (re)connecting, and wakes from poll() through an eventfd.
#include "keywarden/subscriber.h"

#include <charconv>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "client/connection.h"
#include "client/sentinel_watch.h"
#include "common/key_slot.h"
#include "keywarden/client.h"
#include "keywarden/errors.h"
#include "resp/reply_parser.h"

namespace keywarden::detail {

namespace {

using Clock = std::chrono::steady_clock;

enum Kind { kChannel = 0, kPattern = 1, kShard = 2 };

constexpr std::array<const char*, 3> kSubscribeCommand = {"SUBSCRIBE", "PSUBSCRIBE",
                                                          "SSUBSCRIBE"};
constexpr std::array<const char*, 3> kUnsubscribeCommand = {"UNSUBSCRIBE", "PUNSUBSCRIBE",
                                                            "SUNSUBSCRIBE"};

int poll_ms(Deadline deadline) {
  if (deadline == Deadline::max()) return -1;
  auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  return static_cast<int>(
      std::min<int64_t>(std::chrono::ceil<std::chrono::milliseconds>(left).count(), 1 << 30));
}

bool equals_lower(std::string_view text, std::string_view lower) {
  if (text.size() != lower.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

// Writes all of `data`; false when the socket failed (the reader will notice and reconnect).
bool send_all(Stream& stream, std::string_view data, Deadline deadline) {
  while (!data.empty()) {
    ssize_t n = stream.write(data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n == Transport::kFailed) return false;
    pollfd p{stream.fd(), stream.poll_events_for_write(), 0};
    int ready = ::poll(&p, 1, poll_ms(deadline));
    if (ready == 0) return false;
    if (ready < 0 && errno != EINTR) return false;
  }
  return true;
}

// The options of a connection to one of the sentinels: their credentials, no TLS (Sentinel is
// TLS-free for now), the host and port set per attempt.
ClientOptions sentinel_connection_options(const ClientOptions& options) {
  ClientOptions out = options;
  out.username = options.sentinel.username;
  out.password = options.sentinel.password;
  out.tls = TlsOptions{};
  out.sentinel = SentinelOptions{};
  out.cluster = ClusterOptions{};
  out.unix_socket.clear();
  return out;
}

}  // namespace

// Told, on the reader thread, that a shard channel left this connection without the caller
// asking: the server dropped it (a `sunsubscribe` it sent because the slot moved away) or
// refused it with -MOVED. The entry is gone from the core; the handler comes along.
using ShardDropped = std::function<void(const std::string& channel,
                                        std::shared_ptr<MessageHandler> handler)>;

class SubscriberCore {
 public:
  // Failed connection attempts in a row after which a cluster node's shard channels are
  // handed back for relocation.
  static constexpr int kHandOverAfter = 2;

  // With `on_sentinels`, the connection goes to options.sentinel's sentinels (see
  // Subscriber::OnSentinels); otherwise to the server options names, and through Sentinel a
  // SentinelWatch drops it whenever the group's primary changes. `on_shard_dropped`: see
  // ShardDropped (a cluster node's core).
  SubscriberCore(ClientOptions options, bool on_sentinels,
                 ShardDropped on_shard_dropped = nullptr)
      : options_(on_sentinels ? sentinel_connection_options(options) : options),
        on_shard_dropped_(std::move(on_shard_dropped)),
        sentinels_(on_sentinels ? options.sentinel.addresses
                                : std::vector<std::pair<std::string, int>>{}) {
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) throw TransportError(std::string("eventfd: ") + std::strerror(errno));
    thread_ = std::thread([this] { run(); });
    if (!on_sentinels && !options_.sentinel.addresses.empty()) {
      watch_ = std::make_unique<SentinelWatch>(options_, [this] { drop_connection(); },
                                               /*report_switches=*/false);
    }
  }

  ~SubscriberCore() {
    watch_.reset();  // its callback uses this core
    {
      std::lock_guard<std::mutex> guard(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof(one));
    if (thread_.joinable()) thread_.join();
    ::close(wake_fd_);
  }

  void subscribe(Kind kind, const std::string& name, MessageHandler handler, bool wait = true) {
    subscribe(kind, name, std::make_shared<MessageHandler>(std::move(handler)), wait);
  }

  void subscribe(Kind kind, const std::string& name, std::shared_ptr<MessageHandler> handler,
                 bool wait = true) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto [it, inserted] = entries_[kind].try_emplace(name);
    it->second.handler = std::move(handler);
    if (!inserted) {
      if (it->second.confirmed) return;
    } else {
      it->second.confirmed = false;
      send_locked(kSubscribeCommand[kind], {name});
      if (ready_) ++outstanding_[kind][name];
    }
    if (!wait || std::this_thread::get_id() == thread_.get_id()) return;
    const uint64_t errors_before = error_count_;
    Deadline deadline = deadline_after(options_.command_timeout);
    // While a caller waits, an error reply is its to report, not the shard hand-over's.
    ++waiting_[kind][name];
    struct Unwait {
      std::map<std::string, int>& waiting;
      const std::string& name;
      ~Unwait() {
        if (--waiting[name] == 0) waiting.erase(name);
      }
    } unwait{waiting_[kind], name};
    for (;;) {
      auto found = entries_[kind].find(name);
      if (found == entries_[kind].end()) {
        throw Error("subscription to " + name + " withdrawn while waiting for it");
      }
      if (found->second.confirmed) return;
      if (stop_) throw TransportError("subscriber is shutting down");
      if (error_count_ != errors_before) {
        std::string text = last_error_;
        if (is_redirect(text)) {
          // Nothing was subscribed there: drop the entry without a SUNSUBSCRIBE (which the
          // node would refuse as well).
          entries_[kind].erase(name);
          outstanding_[kind].erase(name);
        } else {
          withdraw_locked(kind, name);
        }
        throw ServerError(text);
      }
      if (deadline == Deadline::max()) {
        cv_.wait(lock);
        continue;
      }
      if (cv_.wait_until(lock, deadline) != std::cv_status::timeout) continue;
      auto late = entries_[kind].find(name);
      if (late != entries_[kind].end() && late->second.confirmed) return;
      withdraw_locked(kind, name);
      throw TimeoutError("no confirmation of " + std::string(kSubscribeCommand[kind]) + " " +
                         name +
                         (last_connect_error_.empty()
                              ? std::string()
                              : " (last connect error: " + last_connect_error_ + ")"));
    }
  }

  void unsubscribe(Kind kind, const std::string& name) {
    std::lock_guard<std::mutex> guard(mutex_);
    withdraw_locked(kind, name);
  }

  // Shuts the connection down, so that the reader reconnects (asking the sentinels again) and
  // subscribes everything anew.
  void drop_connection() {
    std::lock_guard<std::mutex> guard(mutex_);
    switched_ = true;  // a connection being opened now may have been told the old primary
    if (stream_ != nullptr) ::shutdown(stream_->fd(), SHUT_RDWR);
  }

  void set_on_reconnect(std::function<void()> callback) {
    std::lock_guard<std::mutex> guard(mutex_);
    on_reconnect_ = std::make_shared<std::function<void()>>(std::move(callback));
  }

  bool connected() const {
    std::lock_guard<std::mutex> guard(mutex_);
    if (stream_ == nullptr || !ready_) return false;
    for (const auto& map : entries_) {
      for (const auto& [name, entry] : map) {
        if (!entry.confirmed) return false;
      }
    }
    return true;
  }

 private:
  struct Entry {
    std::shared_ptr<MessageHandler> handler;
    bool confirmed = false;
  };

  void withdraw_locked(Kind kind, const std::string& name) {
    if (entries_[kind].erase(name) > 0) send_locked(kUnsubscribeCommand[kind], {name});
  }

  // A SUBSCRIBE-family command for `names` (none: nothing to send).
  void send_locked(const char* command, const std::vector<std::string>& names) {
    if (names.empty()) return;
    std::vector<std::string> args{command};
    args.insert(args.end(), names.begin(), names.end());
    write_locked(args);
  }

  // Writes one command when the connection is up; otherwise the reconnect sends what matters.
  void write_locked(const std::vector<std::string>& args) {
    if (stream_ == nullptr || !ready_) return;
    std::string encoded;
    encode_command(encoded, args);
    if (!send_all(*stream_, encoded, deadline_after(std::chrono::milliseconds(1000)))) {
      // The reader sees the shut-down socket and reconnects, subscribing everything again.
      ::shutdown(stream_->fd(), SHUT_RDWR);
    }
  }

  // Reads one reply during the handshake.
  RespValue read_one(Stream& stream, std::string& buffer, ReplyParser& parser,
                     Deadline deadline) {
    for (;;) {
      ReplyParseStatus status = parser.parse(buffer);
      buffer.erase(0, parser.consumed());
      if (status == ReplyParseStatus::kValue) {
        RespValue value = parser.take_value();
        if (value.type == RespType::kPush) continue;
        return value;
      }
      if (status == ReplyParseStatus::kError) throw ProtocolError("malformed reply");
      char chunk[4096];
      ssize_t n = stream.read(chunk, sizeof(chunk));
      if (n == 0) throw TransportError("connection closed during the handshake");
      if (n == Transport::kFailed) throw TransportError("read failed: " + stream.error());
      if (n > 0) {
        buffer.append(chunk, static_cast<size_t>(n));
        continue;
      }
      pollfd p{stream.fd(), stream.poll_events_for_read(), 0};
      int ready = ::poll(&p, 1, poll_ms(deadline));
      if (ready == 0) throw TimeoutError("timed out in the subscriber's handshake");
    }
  }

  RespValue exchange(Stream& fd, const std::vector<std::string>& args, std::string& buffer,
                     ReplyParser& parser, Deadline deadline) {
    std::string encoded;
    encode_command(encoded, args);
    if (!send_all(fd, encoded, deadline)) throw TransportError("write failed in the handshake");
    return read_one(fd, buffer, parser, deadline);
  }

  // HELLO 3 (with AUTH and SETNAME) when the server knows it, else AUTH / CLIENT SETNAME.
  void handshake(Stream& fd, std::string& buffer, ReplyParser& parser) {
    Deadline deadline = deadline_after(options_.connect_timeout);
    std::vector<std::string> hello{"HELLO", "3"};
    if (!options_.password.empty()) {
      hello.insert(hello.end(), {"AUTH", options_.username.empty() ? "default" : options_.username,
                                 options_.password});
    }
    if (!options_.client_name.empty()) hello.insert(hello.end(), {"SETNAME", options_.client_name});
    RespValue reply = exchange(fd, hello, buffer, parser, deadline);
    if (reply.is_error()) {
      bool no_hello = reply.str.rfind("NOPROTO", 0) == 0 ||
                      reply.str.find("unknown command") != std::string::npos;
      if (!no_hello) throw ServerError(reply.str);
      if (!options_.password.empty()) {
        std::vector<std::string> auth{"AUTH"};
        if (!options_.username.empty()) auth.push_back(options_.username);
        auth.push_back(options_.password);
        reply = exchange(fd, auth, buffer, parser, deadline);
        if (reply.is_error()) throw ServerError(reply.str);
      }
      if (!options_.client_name.empty()) {
        reply = exchange(fd, {"CLIENT", "SETNAME", options_.client_name}, buffer, parser, deadline);
        if (reply.is_error()) throw ServerError(reply.str);
      }
    }
  }

  // Sleeps `pause` unless shutdown comes first; false on shutdown.
  bool pause(std::chrono::milliseconds pause) {
    pollfd p{wake_fd_, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(pause.count()));
    std::lock_guard<std::mutex> guard(mutex_);
    return !stop_;
  }

  void run() {
    int failures = 0;
    bool was_connected = false;
    std::string buffer;
    ReplyParser parser;
    for (;;) {
      {
        std::lock_guard<std::mutex> guard(mutex_);
        if (stop_) return;
      }
      buffer.clear();
      parser.reset();
      Stream stream;
      ClientOptions sentinel_target;
      const ClientOptions* target = &options_;
      if (!sentinels_.empty()) {
        sentinel_target = options_;
        sentinel_target.host = sentinels_[next_sentinel_ % sentinels_.size()].first;
        sentinel_target.port = sentinels_[next_sentinel_ % sentinels_.size()].second;
        target = &sentinel_target;
      }
      {
        std::lock_guard<std::mutex> guard(mutex_);
        switched_ = false;
      }
      try {
        stream.open(*target, deadline_after(options_.connect_timeout));
        handshake(stream, buffer, parser);
      } catch (const Error& e) {
        stream.close();
        ++next_sentinel_;
        {
          std::lock_guard<std::mutex> guard(mutex_);
          last_connect_error_ = e.what();
        }
        ++failures;
        if (failures >= kHandOverAfter && on_shard_dropped_) {
          // The node may be gone for good (a failover promotes its replica elsewhere): its
          // shard channels go back to the cluster subscriber, which asks the map again.
          std::vector<std::pair<std::string, std::shared_ptr<MessageHandler>>> dropped;
          {
            std::lock_guard<std::mutex> guard(mutex_);
            auto& shard = entries_[kShard];
            for (auto it = shard.begin(); it != shard.end();) {
              if (waiting_[kShard].count(it->first) == 0) {
                dropped.emplace_back(it->first, it->second.handler);
                it = shard.erase(it);
              } else {
                ++it;
              }
            }
          }
          for (auto& [channel, handler] : dropped) on_shard_dropped_(channel, std::move(handler));
        }
        auto backoff = options_.reconnect_backoff_min;
        for (int i = 1; i < failures && backoff < options_.reconnect_backoff_max; ++i) backoff *= 2;
        backoff = std::max(std::chrono::milliseconds(1),
                           std::min(backoff, options_.reconnect_backoff_max));
        if (!pause(backoff)) return;
        continue;
      }
      failures = 0;
      {
        std::lock_guard<std::mutex> guard(mutex_);
        stream_ = &stream;
        ready_ = true;
        // A switch announced while connecting: this may be the old primary, start over.
        if (switched_) ::shutdown(stream.fd(), SHUT_RDWR);
        last_connect_error_.clear();
        notify_reconnect_ = was_connected;
        for (int kind = 0; kind < 3; ++kind) {
          outstanding_[kind].clear();
          // Shard channels go in one SSUBSCRIBE per slot: a cluster refuses one that spans
          // slots with -CROSSSLOT.
          std::map<int, std::vector<std::string>> groups;
          for (auto& [name, entry] : entries_[kind]) {
            entry.confirmed = false;
            groups[kind == kShard ? key_slot(name) : 0].push_back(name);
            outstanding_[kind][name] = 1;
          }
          for (const auto& [slot, names] : groups) send_locked(kSubscribeCommand[kind], names);
        }
      }
      was_connected = true;
      maybe_fire_reconnect();
      read_loop(stream, buffer, parser);
      ++next_sentinel_;  // on the sentinels: the next one, should this one be gone
      std::lock_guard<std::mutex> guard(mutex_);
      stream_ = nullptr;
      stream.close();
      ready_ = false;
      for (auto& map : entries_) {
        for (auto& [name, entry] : map) entry.confirmed = false;
      }
    }
  }

  // Reads and dispatches until the connection fails or shutdown. A connection silent for a
  // keep-alive interval gets a PING; one still silent an interval later is taken for dead (a
  // frozen server or a dropped route never closes the socket) and reconnected.
  void read_loop(Stream& stream, std::string& buffer, ReplyParser& parser) {
    const auto interval = options_.keepalive_interval;
    Clock::time_point last_heard = Clock::now();
    bool ping_sent = false;
    for (;;) {
      for (;;) {
        ReplyParseStatus status = parser.parse(buffer);
        buffer.erase(0, parser.consumed());
        if (status == ReplyParseStatus::kError) return;
        if (status != ReplyParseStatus::kValue) break;
        dispatch(parser.take_value());
      }
      int timeout = -1;
      if (interval.count() > 0) timeout = poll_ms(last_heard + interval * (ping_sent ? 2 : 1));
      short wanted;
      {
        std::lock_guard<std::mutex> guard(mutex_);
        wanted = stream.poll_events_for_read();
      }
      pollfd p[2] = {{stream.fd(), wanted, 0}, {wake_fd_, POLLIN, 0}};
      int ready = ::poll(p, 2, timeout);
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) return;
      if (ready == 0) {
        if (ping_sent) return;
        std::lock_guard<std::mutex> guard(mutex_);
        write_locked({"PING"});
        ping_sent = true;
        continue;
      }
      if (p[1].revents & POLLIN) {
        std::lock_guard<std::mutex> guard(mutex_);
        if (stop_) return;
      }
      if (p[0].revents & (POLLIN | POLLOUT | POLLHUP | POLLERR)) {
        char chunk[16384];
        // Writers use the stream too (under the mutex): one TLS object, one user at a time.
        std::lock_guard<std::mutex> guard(mutex_);
        ssize_t n = stream.read(chunk, sizeof(chunk));
        if (n == 0 || n == Transport::kFailed) return;
        if (n == Transport::kAgain) continue;
        buffer.append(chunk, static_cast<size_t>(n));
        while (stream.pending() > 0) {
          n = stream.read(chunk, sizeof(chunk));
          if (n <= 0) break;
          buffer.append(chunk, static_cast<size_t>(n));
        }
        last_heard = Clock::now();
        ping_sent = false;
      }
    }
  }

  void dispatch(RespValue value) {
    if (value.is_error()) {
      std::vector<std::pair<std::string, std::shared_ptr<MessageHandler>>> dropped;
      {
        std::lock_guard<std::mutex> guard(mutex_);
        ++error_count_;
        last_error_ = value.str;
        if (on_shard_dropped_) dropped = take_moved_locked(value.str);
      }
      cv_.notify_all();
      for (auto& [channel, handler] : dropped) on_shard_dropped_(channel, std::move(handler));
      return;
    }
    if (!value.is_aggregate() || value.elements.size() < 2) return;
    auto& e = value.elements;
    const std::string& word = e[0].str;
    Message message;
    Kind kind;
    if (equals_lower(word, "message") && e.size() >= 3) {
      kind = kChannel;
      message.kind = Message::Kind::kMessage;
      message.channel = std::move(e[1].str);
      message.payload = std::move(e[2].str);
    } else if (equals_lower(word, "smessage") && e.size() >= 3) {
      kind = kShard;
      message.kind = Message::Kind::kShardMessage;
      message.channel = std::move(e[1].str);
      message.payload = std::move(e[2].str);
    } else if (equals_lower(word, "pmessage") && e.size() >= 4) {
      kind = kPattern;
      message.kind = Message::Kind::kPatternMessage;
      message.pattern = std::move(e[1].str);
      message.channel = std::move(e[2].str);
      message.payload = std::move(e[3].str);
    } else if (equals_lower(word, "sunsubscribe")) {
      shard_unsubscribed(e[1].str);
      return;
    } else {
      int confirmed_kind = equals_lower(word, "subscribe")    ? kChannel
                           : equals_lower(word, "psubscribe") ? kPattern
                           : equals_lower(word, "ssubscribe") ? kShard
                                                              : -1;
      if (confirmed_kind >= 0) confirm(static_cast<Kind>(confirmed_kind), e[1].str);
      return;
    }
    std::shared_ptr<MessageHandler> handler;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      const std::string& key = kind == kPattern ? message.pattern : message.channel;
      auto it = entries_[kind].find(key);
      if (it == entries_[kind].end()) return;
      handler = it->second.handler;
    }
    if (handler && *handler) {
      try {
        (*handler)(message);
      } catch (...) {
        // A handler's exception must not end the reader thread; the handler owns its errors.
      }
    }
  }

  static bool is_redirect(std::string_view error) {
    return error.starts_with("MOVED ") || error.starts_with("ASK ") ||
           error.starts_with("TRYAGAIN") || error.starts_with("CLUSTERDOWN");
  }

  // -MOVED <slot> <node> while no caller waits for it: the SSUBSCRIBEs a reconnect sent for
  // that slot went to a node that no longer owns it. Their entries leave this core.
  std::vector<std::pair<std::string, std::shared_ptr<MessageHandler>>> take_moved_locked(
      std::string_view error) {
    std::vector<std::pair<std::string, std::shared_ptr<MessageHandler>>> out;
    if (!error.starts_with("MOVED ")) return out;
    std::string_view rest = error.substr(6);
    int slot = -1;
    auto parsed = std::from_chars(rest.data(), rest.data() + rest.size(), slot);
    if (parsed.ec != std::errc() || slot < 0 || slot >= 16384) return out;  // not a slot
    auto& shard = entries_[kShard];
    for (auto it = shard.begin(); it != shard.end();) {
      if (!it->second.confirmed && key_slot(it->first) == slot &&
          waiting_[kShard].count(it->first) == 0) {
        out.emplace_back(it->first, it->second.handler);
        outstanding_[kShard].erase(it->first);
        it = shard.erase(it);
      } else {
        ++it;
      }
    }
    return out;
  }

  // A `sunsubscribe` for a channel still wanted and not being subscribed again: the server
  // dropped it (its slot went to another node). Ours to withdraw would have erased it first.
  void shard_unsubscribed(const std::string& channel) {
    std::shared_ptr<MessageHandler> handler;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (!on_shard_dropped_) return;
      auto it = entries_[kShard].find(channel);
      if (it == entries_[kShard].end() || !it->second.confirmed) return;
      if (outstanding_[kShard].count(channel) > 0) return;
      handler = it->second.handler;
      entries_[kShard].erase(it);
    }
    on_shard_dropped_(channel, std::move(handler));
  }

  void confirm(Kind kind, const std::string& name) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      auto pending = outstanding_[kind].find(name);
      if (pending != outstanding_[kind].end()) {
        if (--pending->second > 0) return;
        outstanding_[kind].erase(pending);
      }
      auto it = entries_[kind].find(name);
      if (it != entries_[kind].end()) it->second.confirmed = true;
    }
    cv_.notify_all();
    maybe_fire_reconnect();
  }

  void maybe_fire_reconnect() {
    std::shared_ptr<std::function<void()>> callback;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (!notify_reconnect_) return;
      for (const auto& map : entries_) {
        for (const auto& [name, entry] : map) {
          if (!entry.confirmed) return;
        }
      }
      notify_reconnect_ = false;
      callback = on_reconnect_;
    }
    if (callback && *callback) {
      try {
        (*callback)();
      } catch (...) {
      }
    }
  }

  const ClientOptions options_;
  const ShardDropped on_shard_dropped_;
  // On the sentinels: their addresses, and which one the next connection tries (reader only).
  const std::vector<std::pair<std::string, int>> sentinels_;
  size_t next_sentinel_ = 0;
  int wake_fd_ = -1;
  std::thread thread_;

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  Stream* stream_ = nullptr;  // the reader's connection while one is up (under mutex_)
  bool ready_ = false;
  bool notify_reconnect_ = false;
  bool switched_ = false;  // the watch announced a switch since the last connect began
  std::array<std::map<std::string, Entry>, 3> entries_;
  // Confirmations still due per name: a confirmation of an earlier SUBSCRIBE must not pass
  // for the one a later subscribe() sent.
  std::array<std::map<std::string, int>, 3> outstanding_;
  // Callers of subscribe() still waiting, per name.
  std::array<std::map<std::string, int>, 3> waiting_;
  uint64_t error_count_ = 0;
  std::string last_error_;
  std::string last_connect_error_;
  std::shared_ptr<std::function<void()>> on_reconnect_;
  std::unique_ptr<SentinelWatch> watch_;
};

// A Subscriber on a Redis Cluster: one SubscriberCore per node that has shard channels
// (SSUBSCRIBE must reach the primary that owns the channel's slot, and a node sends only its
// own slots' SPUBLISH messages), and one more on any seed node for SUBSCRIBE/PSUBSCRIBE, which
// a cluster broadcasts to every node. The slot map comes from CLUSTER SLOTS and is corrected
// by -MOVED. A shard channel that leaves a node's connection (the node sent `sunsubscribe`
// because the slot moved away, or refused it with -MOVED on a reconnect) goes to the
// relocation thread, which asks for the map again and subscribes it on the new owner; then
// on_reconnect fires, since messages published during the move are lost.
class ClusterSubscriber {
 public:
  explicit ClusterSubscriber(ClientOptions options)
      : options_(std::move(options)), owners_(kClusterSlots) {
    relocator_ = std::thread([this] { relocate_loop(); });
  }

  ~ClusterSubscriber() {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    relocator_.join();
    // The cores' reader threads call back into this object: stop them before members go.
    std::map<std::string, std::shared_ptr<SubscriberCore>> cores;
    std::shared_ptr<SubscriberCore> classic;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      cores.swap(cores_);
      classic.swap(classic_);
    }
    cores.clear();
    classic.reset();
  }

  void subscribe(Kind kind, const std::string& name, MessageHandler handler) {
    if (kind != kShard) {
      classic_core()->subscribe(kind, name, std::move(handler));
      return;
    }
    auto shared = std::make_shared<MessageHandler>(std::move(handler));
    {
      std::lock_guard<std::mutex> guard(mutex_);
      shard_handlers_[name] = shared;
    }
    try {
      ssubscribe(name, shared);
    } catch (...) {
      std::lock_guard<std::mutex> guard(mutex_);
      auto it = shard_handlers_.find(name);
      if (it != shard_handlers_.end() && it->second == shared) shard_handlers_.erase(it);
      throw;
    }
  }

  void unsubscribe(Kind kind, const std::string& name) {
    if (kind != kShard) {
      classic_core()->unsubscribe(kind, name);
      return;
    }
    std::shared_ptr<SubscriberCore> core;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      shard_handlers_.erase(name);
      auto where = shard_node_.find(name);
      if (where == shard_node_.end()) return;
      auto found = cores_.find(where->second);
      if (found != cores_.end()) core = found->second;
      shard_node_.erase(where);
    }
    if (core) core->unsubscribe(kShard, name);
  }

  void set_on_reconnect(std::function<void()> callback) {
    std::lock_guard<std::mutex> guard(mutex_);
    on_reconnect_ = std::make_shared<std::function<void()>>(std::move(callback));
  }

  bool connected() const {
    std::vector<std::shared_ptr<SubscriberCore>> cores;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (!to_relocate_.empty() || relocating_) return false;
      for (const auto& [address, core] : cores_) cores.push_back(core);
      if (classic_) cores.push_back(classic_);
    }
    for (const auto& core : cores) {
      if (!core->connected()) return false;
    }
    return true;
  }

 private:
  ClientOptions node_options(const std::string& address) const {
    ClientOptions node = options_;
    node.cluster.addresses.clear();
    node.sentinel.addresses.clear();
    size_t colon = address.rfind(':');
    node.host = address.substr(0, colon);
    node.port = std::atoi(address.c_str() + colon + 1);
    return node;
  }

  std::shared_ptr<SubscriberCore> classic_core() {
    std::lock_guard<std::mutex> guard(mutex_);
    // With the cluster's addresses left in, the connection goes to the first seed that
    // accepts, and to the next when that one is gone.
    if (!classic_) classic_ = make_core(options_, false);
    return classic_;
  }

  std::shared_ptr<SubscriberCore> shard_core_locked(const std::string& address) {
    auto& core = cores_[address];
    if (!core) core = make_core(node_options(address), true);
    return core;
  }

  std::shared_ptr<SubscriberCore> make_core(ClientOptions options, bool shard) {
    ShardDropped dropped;
    if (shard) {
      dropped = [this](const std::string& channel, std::shared_ptr<MessageHandler>) {
        std::lock_guard<std::mutex> guard(mutex_);
        if (shard_handlers_.count(channel) == 0) return;
        shard_node_.erase(channel);
        to_relocate_.push_back(channel);
        cv_.notify_all();
      };
    }
    auto core = std::make_shared<SubscriberCore>(std::move(options), false, std::move(dropped));
    core->set_on_reconnect([this] { fire_reconnect(); });
    return core;
  }

  void fire_reconnect() {
    std::shared_ptr<std::function<void()>> callback;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      callback = on_reconnect_;
    }
    if (callback && *callback) {
      try {
        (*callback)();
      } catch (...) {
      }
    }
  }

  // Reads CLUSTER SLOTS from any node (a cluster Client finds one).
  void refresh_map() {
    std::lock_guard<std::mutex> refreshing(refresh_mutex_);
    if (!map_client_) map_client_ = std::make_unique<Client>(options_);
    Reply slots = map_client_->command("CLUSTER", "SLOTS");
    const std::string& seed_host = options_.cluster.addresses.front().first;
    std::lock_guard<std::mutex> guard(mutex_);
    for (const Reply& range : slots.elements()) {
      const auto& fields = range.elements();
      // A range without a primary's host and port, or slots outside the cluster's, is skipped
      // or cut to what exists (as ClusterRouter reads the map): the reply is the server's bytes.
      if (fields.size() < 3 || fields[2].elements().size() < 2) continue;
      const auto& primary = fields[2].elements();
      std::string host = primary[0].is_null() ? std::string() : primary[0].str();
      if (host.empty() || host == "?") host = seed_host;
      std::string address = host + ":" + std::to_string(primary[1].integer());
      const int64_t first = std::max<int64_t>(fields[0].integer(), 0);
      const int64_t last = std::min<int64_t>(fields[1].integer(), kClusterSlots - 1);
      for (int64_t slot = first; slot <= last; ++slot) {
        owners_[static_cast<size_t>(slot)] = address;
      }
    }
  }

  std::string owner(int slot) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (!owners_[slot].empty()) return owners_[slot];
    }
    refresh_map();
    std::lock_guard<std::mutex> guard(mutex_);
    if (owners_[slot].empty()) {
      throw ClusterError("CLUSTERDOWN Hash slot not served (slot " + std::to_string(slot) + ")");
    }
    return owners_[slot];
  }

  // SSUBSCRIBE on the slot's owner, following -MOVED (the node it names) and waiting out
  // -TRYAGAIN / -CLUSTERDOWN with a fresh map, up to max_redirects times.
  void ssubscribe(const std::string& channel, const std::shared_ptr<MessageHandler>& handler) {
    const int slot = key_slot(channel);
    std::string last;
    auto pause = options_.cluster.retry_backoff_min;
    for (int attempt = 0; attempt <= options_.cluster.max_redirects; ++attempt) {
      const std::string address = owner(slot);
      std::shared_ptr<SubscriberCore> core;
      {
        std::lock_guard<std::mutex> guard(mutex_);
        if (stop_) throw TransportError("subscriber is shutting down");
        if (shard_handlers_.count(channel) == 0) return;  // unsubscribed meanwhile
        core = shard_core_locked(address);
        shard_node_[channel] = address;
      }
      try {
        core->subscribe(kShard, channel, handler);
        return;
      } catch (const ServerError& e) {
        last = e.what();
        if (e.code() == "MOVED") {
          std::string text = e.what();
          std::string target = text.substr(text.rfind(' ') + 1);
          if (target.starts_with(":")) target = options_.cluster.addresses.front().first + target;
          std::lock_guard<std::mutex> guard(mutex_);
          owners_[slot] = target;
          continue;
        }
        if (e.code() != "TRYAGAIN" && e.code() != "CLUSTERDOWN" && e.code() != "ASK") throw;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, options_.cluster.retry_backoff_max);
      try {
        refresh_map();
      } catch (const Error&) {
      }
    }
    throw ClusterError("SSUBSCRIBE " + channel + ": too many redirections (last: " + last + ")");
  }

  // Subscribes dropped shard channels on their new owners, retrying with backoff until they
  // are placed or unsubscribed.
  void relocate_loop() {
    auto pause = options_.cluster.retry_backoff_min;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || !to_relocate_.empty(); });
      if (stop_) return;
      std::vector<std::string> channels(to_relocate_.begin(), to_relocate_.end());
      to_relocate_.clear();
      relocating_ = true;
      lock.unlock();
      std::vector<std::string> failed;
      try {
        refresh_map();
      } catch (const Error&) {
      }
      for (const auto& channel : channels) {
        std::shared_ptr<MessageHandler> handler;
        {
          std::lock_guard<std::mutex> guard(mutex_);
          auto it = shard_handlers_.find(channel);
          if (it == shard_handlers_.end()) continue;
          handler = it->second;
        }
        try {
          ssubscribe(channel, handler);
        } catch (const Error&) {
          failed.push_back(channel);
        }
      }
      if (failed.empty()) {
        pause = options_.cluster.retry_backoff_min;
        fire_reconnect();
      }
      lock.lock();
      relocating_ = false;
      if (!failed.empty()) {
        to_relocate_.insert(to_relocate_.end(), failed.begin(), failed.end());
        cv_.wait_for(lock, pause, [&] { return stop_; });
        pause = std::min(pause * 2, options_.cluster.retry_backoff_max);
      }
    }
  }

  const ClientOptions options_;
  mutable std::mutex mutex_;  // everything below but map_client_
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<std::string> owners_;  // slot -> "host:port" of its primary, "" when unknown
  std::map<std::string, std::shared_ptr<SubscriberCore>> cores_;  // shard cores by node
  std::shared_ptr<SubscriberCore> classic_;
  std::map<std::string, std::shared_ptr<MessageHandler>> shard_handlers_;
  std::map<std::string, std::string> shard_node_;  // channel -> node it was sent to
  std::deque<std::string> to_relocate_;
  bool relocating_ = false;
  std::shared_ptr<std::function<void()>> on_reconnect_;
  std::mutex refresh_mutex_;  // one CLUSTER SLOTS at a time; guards map_client_
  std::unique_ptr<Client> map_client_;
  std::thread relocator_;
};

}  // namespace keywarden::detail

namespace keywarden {

Subscriber::Subscriber(ClientOptions options) {
  if (!options.cluster.addresses.empty()) {
    cluster_ = std::make_shared<detail::ClusterSubscriber>(std::move(options));
  } else {
    core_ = std::make_shared<detail::SubscriberCore>(std::move(options), false);
  }
}

Subscriber::Subscriber(const ClientOptions& options, OnSentinels)
    : core_(std::make_shared<detail::SubscriberCore>(options, true)) {}

void Subscriber::subscribe_later(const std::string& channel, MessageHandler handler) {
  core_->subscribe(detail::kChannel, channel, std::move(handler), /*wait=*/false);
}

Subscriber::~Subscriber() = default;

void Subscriber::subscribe(const std::string& channel, MessageHandler handler) {
  add(detail::kChannel, channel, std::move(handler));
}
void Subscriber::psubscribe(const std::string& pattern, MessageHandler handler) {
  add(detail::kPattern, pattern, std::move(handler));
}
void Subscriber::ssubscribe(const std::string& channel, MessageHandler handler) {
  add(detail::kShard, channel, std::move(handler));
}
void Subscriber::unsubscribe(const std::string& channel) { remove(detail::kChannel, channel); }
void Subscriber::punsubscribe(const std::string& pattern) { remove(detail::kPattern, pattern); }
void Subscriber::sunsubscribe(const std::string& channel) { remove(detail::kShard, channel); }

void Subscriber::add(int kind, const std::string& name, MessageHandler handler) {
  auto k = static_cast<detail::Kind>(kind);
  if (cluster_) {
    cluster_->subscribe(k, name, std::move(handler));
  } else {
    core_->subscribe(k, name, std::move(handler));
  }
}
void Subscriber::remove(int kind, const std::string& name) {
  auto k = static_cast<detail::Kind>(kind);
  if (cluster_) {
    cluster_->unsubscribe(k, name);
  } else {
    core_->unsubscribe(k, name);
  }
}
void Subscriber::on_reconnect(std::function<void()> callback) {
  if (cluster_) {
    cluster_->set_on_reconnect(std::move(callback));
  } else {
    core_->set_on_reconnect(std::move(callback));
  }
}
bool Subscriber::connected() const {
  return cluster_ ? cluster_->connected() : core_->connected();
}

}  // namespace keywarden
