// Connection: sockets, deadlines, handshake and reconnect backoff (see connection.h).
#include "client/connection.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <functional>
#include <cerrno>
#include <cstring>

#include "keywarden/errors.h"

namespace keywarden::detail {

namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds left for poll(): -1 for no deadline, rounded up so a deadline is never cut
// short, 0 once it has passed.
int poll_timeout(Deadline deadline) {
  if (deadline == Deadline::max()) return -1;
  auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<int64_t>(ms, 1 << 30));
}

std::string errno_text(int error) { return std::strerror(error); }

template <typename Args>
void encode_args(std::string& out, const Args& args) {
  out += '*';
  out += std::to_string(args.size());
  out += "\r\n";
  for (const auto& arg : args) {
    out += '$';
    out += std::to_string(arg.size());
    out += "\r\n";
    out.append(arg.data(), arg.size());
    out += "\r\n";
  }
}

}  // namespace

Deadline deadline_after(std::chrono::milliseconds limit) {
  if (limit.count() <= 0) return Deadline::max();
  return Clock::now() + limit;
}

void encode_command(std::string& out, const std::vector<std::string_view>& args) {
  encode_args(out, args);
}

void encode_command(std::string& out, const std::vector<std::string>& args) {
  encode_args(out, args);
}

namespace {

// A TCP connection to host:port (or the Unix socket `path` when set) within `deadline`.
int connect_endpoint(const std::string& path, const std::string& host, int port,
                     Deadline deadline) {
  const std::string where = path.empty() ? host + ":" + std::to_string(port) : path;
  std::string failure = "no address";
  auto attempt = [&](int family, const sockaddr* address, socklen_t length) -> int {
    int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      failure = "socket: " + errno_text(errno);
      return -1;
    }
    int rc = ::connect(fd, address, length);
    if (rc < 0 && errno != EINPROGRESS && errno != EAGAIN) {
      failure = errno_text(errno);
      ::close(fd);
      return -1;
    }
    if (rc < 0) {
      pollfd p{fd, POLLOUT, 0};
      int ready;
      do {
        ready = ::poll(&p, 1, poll_timeout(deadline));
      } while (ready < 0 && errno == EINTR);
      if (ready == 0) {
        ::close(fd);
        throw TimeoutError("timed out connecting to " + where);
      }
      int error = 0;
      socklen_t size = sizeof(error);
      if (ready < 0) error = errno;
      else ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
      if (error != 0) {
        failure = errno_text(error);
        ::close(fd);
        return -1;
      }
    }
    if (family != AF_UNIX) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    return fd;
  };

  if (!path.empty()) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof(address.sun_path)) {
      throw TransportError("unix socket path too long: " + path);
    }
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    int fd = attempt(AF_UNIX, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    if (fd < 0) throw TransportError("cannot connect to " + where + ": " + failure);
    return fd;
  }

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* results = nullptr;
  const std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &results);
  if (rc != 0) throw TransportError("cannot resolve " + host + ": " + gai_strerror(rc));
  int fd = -1;
  try {
    for (addrinfo* a = results; a != nullptr && fd < 0; a = a->ai_next) {
      fd = attempt(a->ai_family, a->ai_addr, a->ai_addrlen);
    }
  } catch (...) {
    ::freeaddrinfo(results);
    throw;
  }
  ::freeaddrinfo(results);
  if (fd < 0) throw TransportError("cannot connect to " + where + ": " + failure);
  return fd;
}

// Sends `args` to the sentinels in order until `use` accepts a reply (then true). A
// sentinel that cannot be reached, refuses, or gives a reply `use` rejects is skipped, with
// the reason appended to `failures`; false when none answered usefully.
bool ask_sentinels(const ClientOptions& options, Deadline deadline,
                   const std::vector<std::string_view>& args,
                   const std::function<bool(const RespValue&)>& use, std::string& failures) {
  const SentinelOptions& sentinel = options.sentinel;
  std::string encoded;
  encode_command(encoded, args);
  for (const auto& [host, port] : sentinel.addresses) {
    ClientOptions ask;
    ask.host = host;
    ask.port = port;
    ask.username = sentinel.username;
    ask.password = sentinel.password;
    ask.connect_timeout = options.connect_timeout;
    ask.command_timeout = options.connect_timeout;
    try {
      Connection connection(ask);
      if (Clock::now() >= deadline) break;
      const RespValue reply = connection.round_trip(encoded, 1).at(0);
      if (!reply.is_error() && use(reply)) return true;
      failures += "; " + host + ":" + std::to_string(port) +
                  (reply.is_error() ? " refused: " + reply.str : " does not know it");
    } catch (const Error& e) {
      failures += "; " + host + ":" + std::to_string(port) + ": " + e.what();
    }
  }
  return false;
}

bool parse_port(const std::string& text, int& port) {
  return std::from_chars(text.data(), text.data() + text.size(), port).ec == std::errc() &&
         port > 0;
}

// The primary's address as the first sentinel that knows the group answers it.
std::pair<std::string, int> primary_from_sentinels(const ClientOptions& options,
                                                   Deadline deadline) {
  std::pair<std::string, int> primary;
  std::string failures;
  auto use = [&](const RespValue& reply) {
    if (reply.type != RespType::kArray || reply.elements.size() != 2) return false;
    primary.first = reply.elements[0].str;
    return parse_port(reply.elements[1].str, primary.second);
  };
  if (ask_sentinels(options, deadline,
                    {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options.sentinel.master_name}, use,
                    failures)) {
    return primary;
  }
  throw TransportError("no sentinel named a primary for '" + options.sentinel.master_name + "'" +
                       failures);
}

// The replicas of the group fit to serve reads, as the first sentinel that knows the group
// lists them (SENTINEL REPLICAS): not subjectively or objectively down, not disconnected, and
// with their link to the primary up. Empty when there are none or no sentinel answered.
std::vector<std::pair<std::string, int>> healthy_replicas_from_sentinels(
    const ClientOptions& options, Deadline deadline) {
  std::vector<std::pair<std::string, int>> replicas;
  auto use = [&](const RespValue& reply) {
    if (reply.type != RespType::kArray) return false;
    for (const RespValue& entry : reply.elements) {
      // A flat field/value array (RESP2) or a map (RESP3): the same pairs either way.
      std::string ip, port_text, flags, link;
      for (size_t i = 0; i + 1 < entry.elements.size(); i += 2) {
        const std::string& field = entry.elements[i].str;
        const std::string& value = entry.elements[i + 1].str;
        if (field == "ip") ip = value;
        else if (field == "port") port_text = value;
        else if (field == "flags") flags = value;
        else if (field == "master-link-status") link = value;
      }
      int port = 0;
      if (ip.empty() || !parse_port(port_text, port) || link != "ok") continue;
      if (flags.find("s_down") != std::string::npos || flags.find("o_down") != std::string::npos ||
          flags.find("disconnected") != std::string::npos) {
        continue;
      }
      replicas.emplace_back(ip, port);
    }
    return true;
  };
  std::string failures;
  ask_sentinels(options, deadline, {"SENTINEL", "REPLICAS", options.sentinel.master_name}, use,
                failures);
  return replicas;
}

}  // namespace

int connect_socket(const ClientOptions& options, Deadline deadline, std::string* where,
                   bool replica) {
  if (!options.unix_socket.empty()) {
    if (where != nullptr) *where = options.unix_socket;
    return connect_endpoint(options.unix_socket, {}, 0, deadline);
  }
  if (!options.cluster.addresses.empty()) {
    // A subscriber on a Redis Cluster: classic pub/sub reaches every node, so the first seed
    // that accepts will do.
    std::string failures;
    for (const auto& [host, port] : options.cluster.addresses) {
      try {
        int fd = connect_endpoint({}, host, port, deadline);
        if (where != nullptr) *where = host + ":" + std::to_string(port) + " (cluster node)";
        return fd;
      } catch (const TransportError& e) {
        failures += std::string("; ") + e.what();
      }
    }
    throw TransportError("no node of the cluster accepted a connection" + failures);
  }
  if (options.sentinel.addresses.empty()) {
    if (where != nullptr) *where = options.host + ":" + std::to_string(options.port);
    return connect_endpoint({}, options.host, options.port, deadline);
  }
  if (replica) {
    // Spread the connections of a process over the replicas: each starts at the next one.
    static std::atomic<size_t> turn{0};
    const auto replicas = healthy_replicas_from_sentinels(options, deadline);
    const size_t first = replicas.empty() ? 0 : turn.fetch_add(1) % replicas.size();
    for (size_t i = 0; i < replicas.size(); ++i) {
      const auto& [host, port] = replicas[(first + i) % replicas.size()];
      try {
        int fd = connect_endpoint({}, host, port, deadline);
        if (where != nullptr) {
          *where = host + ":" + std::to_string(port) + " (replica of '" +
                   options.sentinel.master_name + "' per the sentinels)";
        }
        return fd;
      } catch (const TransportError&) {
        // the next replica, then the primary
      }
    }
  }
  const auto [host, port] = primary_from_sentinels(options, deadline);
  if (where != nullptr) {
    *where = host + ":" + std::to_string(port) + " (primary of '" + options.sentinel.master_name +
             "' per the sentinels)";
  }
  return connect_endpoint({}, host, port, deadline);
}

void Stream::open(const ClientOptions& options, Deadline deadline, std::string* where,
                  bool replica) {
  close();
  fd_ = connect_socket(options, deadline, where, replica);
  transport_ = std::make_unique<Transport>(fd_);
  if (!options.tls.enabled) return;
  transport_->set_guard_sigpipe(true);
  const TlsOptions& tls = options.tls;
  TlsClientSettings settings;
  settings.ca_file = tls.ca_file;
  settings.ca_dir = tls.ca_dir;
  settings.cert_file = tls.cert_file;
  settings.key_file = tls.key_file;
  settings.key_file_pass = tls.key_password;
  settings.server_name = tls.server_name;
  settings.verify_peer = tls.verify_peer;
  TlsContextPtr context;
  std::string problem = build_tls_client_context(settings, &context);
  if (problem.empty()) {
    problem = transport_->start_tls(context, /*accepting=*/false, tls.server_name,
                                    tls.verify_peer);
  }
  if (!problem.empty()) {
    close();
    throw TransportError("TLS setup failed: " + problem);
  }
  for (;;) {
    const ssize_t result = transport_->handshake();
    if (result == 1) break;
    if (result == Transport::kFailed) {
      const std::string why = transport_->error();
      close();
      throw TransportError("TLS handshake failed: " + why);
    }
    pollfd p{fd_, poll_events_for_read(), 0};
    int ready = ::poll(&p, 1, poll_timeout(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      close();
      if (ready == 0) throw TimeoutError("timed out in the TLS handshake");
      throw TransportError("poll failed: " + errno_text(errno));
    }
  }
}

void Stream::close() {
  if (fd_ < 0) return;
  if (transport_) transport_->shutdown();
  transport_.reset();
  ::close(fd_);
  fd_ = -1;
}

short Stream::poll_events_for_read() const {
  return transport_->read_wants_write() ? POLLOUT : POLLIN;
}

short Stream::poll_events_for_write() const {
  return transport_->write_wants_read() ? POLLIN : POLLOUT;
}

Connection::~Connection() { close(); }

void Connection::close() {
  stream_.close();
  inbuf_.clear();
  parser_.reset();
}

std::string Connection::endpoint() const {
  if (!connected_to_.empty()) return connected_to_;
  if (!options_.unix_socket.empty()) return options_.unix_socket;
  if (through_sentinel()) return "the primary of '" + options_.sentinel.master_name + "'";
  return options_.host + ":" + std::to_string(options_.port);
}

void Connection::ensure_connected() {
  // The sentinels announced a new primary since this connection was opened: reopen it (a
  // switch is news, not a failure, so any backoff is forgotten).
  const bool switched =
      epoch_ != nullptr && epoch_->load(std::memory_order_acquire) != opened_epoch_;
  if (switched) failures_ = 0;
  if (stream_.is_open()) {
    if (!switched && !peer_closed()) return;
    close();
  }
  auto now = Clock::now();
  if (failures_ > 0 && now < next_attempt_) {
    auto wait = std::chrono::ceil<std::chrono::milliseconds>(next_attempt_ - now).count();
    throw TransportError("not connected to " + endpoint() + " (next attempt in " +
                         std::to_string(wait) + " ms; last error: " + last_error_ + ")");
  }
  try {
    close();
    // Read before asking the sentinels: a switch announced while connecting reopens again.
    if (epoch_ != nullptr) opened_epoch_ = epoch_->load(std::memory_order_acquire);
    stream_.open(options_, deadline_after(options_.connect_timeout), &connected_to_,
                 prefer_replica_);
    handshake();
    failures_ = 0;
  } catch (const Error& e) {
    close();
    ++failures_;
    auto backoff = options_.reconnect_backoff_min;
    for (int i = 1; i < failures_ && backoff < options_.reconnect_backoff_max; ++i) backoff *= 2;
    backoff = std::min(backoff, options_.reconnect_backoff_max);
    next_attempt_ = Clock::now() + backoff;
    last_error_ = e.what();
    throw;
  }
}

bool Connection::peer_closed() {
  pollfd p{stream_.fd(), POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLERR | POLLNVAL)) return true;
  if (p.revents & (POLLIN | POLLHUP)) {
    // Read through the stream: TLS sends records of its own (session tickets) that an idle
    // connection takes in here; anything else is kept for the next reply.
    char chunk[4096];
    ssize_t n = stream_.read(chunk, sizeof(chunk));
    if (n == 0 || n == Transport::kFailed) return true;
    if (n > 0) inbuf_.append(chunk, static_cast<size_t>(n));
  }
  return false;
}

void Connection::handshake() {
  std::string encoded;
  size_t count = 0;
  if (options_.resp == 3) {
    std::vector<std::string> hello{"HELLO", "3"};
    if (!options_.password.empty()) {
      hello.insert(hello.end(), {"AUTH", options_.username.empty() ? "default" : options_.username,
                                 options_.password});
    }
    if (!options_.client_name.empty()) hello.insert(hello.end(), {"SETNAME", options_.client_name});
    encode_command(encoded, hello);
    ++count;
  } else {
    if (!options_.password.empty()) {
      std::vector<std::string> auth{"AUTH"};
      if (!options_.username.empty()) auth.push_back(options_.username);
      auth.push_back(options_.password);
      encode_command(encoded, auth);
      ++count;
    }
    if (!options_.client_name.empty()) {
      encode_command(encoded, std::vector<std::string>{"CLIENT", "SETNAME", options_.client_name});
      ++count;
    }
  }
  if (options_.database != 0) {
    encode_command(encoded, std::vector<std::string>{"SELECT", std::to_string(options_.database)});
    ++count;
  }
  // Through Sentinel, what the sentinels named must really be a primary by now: a failover
  // may have turned it into a replica since they answered.
  if (through_sentinel()) {
    encode_command(encoded, std::vector<std::string>{"ROLE"});
    ++count;
  }
  if (count == 0) return;
  auto replies = exchange(encoded, count, deadline_after(options_.connect_timeout));
  for (const RespValue& reply : replies) {
    if (reply.is_error()) throw ServerError(reply.str);
  }
  if (through_sentinel()) {
    const RespValue& role = replies.back();
    // A connection meant for reads may have reached a replica, or the primary when none was fit.
    const bool acceptable =
        role.type == RespType::kArray && !role.elements.empty() &&
        (role.elements[0].str == "master" || (prefer_replica_ && role.elements[0].str == "slave"));
    if (!acceptable) {
      throw TransportError(endpoint() + " is not a primary (ROLE says " +
                           (role.elements.empty() ? std::string("nothing") : role.elements[0].str) +
                           ")");
    }
  }
}

std::vector<RespValue> Connection::round_trip(std::string_view encoded, size_t count) {
  ensure_connected();
  std::vector<RespValue> replies = exchange(encoded, count, deadline_after(options_.command_timeout));
  // A primary demoted under us answers writes with -READONLY: drop the connection so that
  // the next command asks the sentinels again. The caller still gets the error.
  // Likewise a blocking command that the demotion ended (-UNBLOCKED ... master -> replica).
  if (through_sentinel()) {
    for (const RespValue& reply : replies) {
      if (reply.is_error() &&
          (reply.str.starts_with("READONLY") ||
           (reply.str.starts_with("UNBLOCKED") &&
            reply.str.find("instance state changed") != std::string::npos))) {
        close();
        break;
      }
    }
  }
  return replies;
}

std::vector<RespValue> Connection::exchange(std::string_view encoded, size_t count,
                                            Deadline deadline) {
  try {
    write_all(encoded, deadline);
    std::vector<RespValue> replies;
    replies.reserve(count);
    for (size_t i = 0; i < count; ++i) replies.push_back(read_reply(deadline));
    return replies;
  } catch (const Error&) {
    close();
    throw;
  }
}

bool Connection::receive_some() {
  char chunk[16384];
  ssize_t n = stream_.read(chunk, sizeof(chunk));
  if (n > 0) {
    inbuf_.append(chunk, static_cast<size_t>(n));
    // Decrypted bytes held by OpenSSL: poll() would not report them.
    while (stream_.pending() > 0) {
      n = stream_.read(chunk, sizeof(chunk));
      if (n <= 0) break;
      inbuf_.append(chunk, static_cast<size_t>(n));
    }
    return true;
  }
  if (n == 0) throw TransportError("connection to " + endpoint() + " closed by the server");
  if (n == Transport::kAgain) return false;
  throw TransportError("read from " + endpoint() + " failed: " + stream_.error());
}

void Connection::write_all(std::string_view data, Deadline deadline) {
  while (!data.empty()) {
    ssize_t n = stream_.write(data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n == Transport::kFailed) {
      throw TransportError("write to " + endpoint() + " failed: " + stream_.error());
    }
    // The socket buffer is full: the server may be waiting for us to read its replies to
    // earlier commands, so take them in while waiting to write.
    pollfd p{stream_.fd(), static_cast<short>(stream_.poll_events_for_write() | POLLIN), 0};
    int ready = ::poll(&p, 1, poll_timeout(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw TransportError("poll failed: " + errno_text(errno));
    if (ready == 0) throw TimeoutError("timed out writing to " + endpoint());
    if (p.revents & POLLIN) receive_some();
  }
}

RespValue Connection::read_reply(Deadline deadline) {
  for (;;) {
    ReplyParseStatus status = parser_.parse(inbuf_);
    inbuf_.erase(0, parser_.consumed());
    if (status == ReplyParseStatus::kValue) {
      RespValue value = parser_.take_value();
      // Out-of-band RESP3 pushes (e.g. tracking invalidations) are not command replies.
      if (value.type == RespType::kPush) continue;
      return value;
    }
    if (status == ReplyParseStatus::kError) {
      throw ProtocolError("malformed reply from " + endpoint() + ": " +
                          std::string(parser_.error()));
    }
    if (receive_some()) continue;
    // A wait that a switch interrupts looks at the epoch every slice (an atomic cannot be
    // polled with the socket).
    const bool watch_switch = interrupt_on_switch_ && epoch_ != nullptr;
    if (watch_switch && epoch_->load(std::memory_order_acquire) != opened_epoch_) {
      throw PrimarySwitchedError("the sentinels named a new primary while waiting on " +
                                 endpoint());
    }
    int timeout = poll_timeout(deadline);
    constexpr int kSwitchSliceMs = 200;
    if (watch_switch && (timeout < 0 || timeout > kSwitchSliceMs)) timeout = kSwitchSliceMs;
    pollfd p{stream_.fd(), stream_.poll_events_for_read(), 0};
    int ready = ::poll(&p, 1, timeout);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw TransportError("poll failed: " + errno_text(errno));
    if (ready == 0 && watch_switch && poll_timeout(deadline) != 0) continue;  // a slice ended
    if (ready == 0) throw TimeoutError("timed out waiting for a reply from " + endpoint());
  }
}

}  // namespace keywarden::detail
