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

Connection::~Connection() { close(); }

void Connection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  inbuf_.clear();
  parser_.reset();
}

std::string Connection::endpoint() const {
  if (!options_.unix_socket.empty()) return options_.unix_socket;
  return options_.host + ":" + std::to_string(options_.port);
}

void Connection::ensure_connected() {
  if (fd_ >= 0) {
    if (!peer_closed()) return;
    close();
  }
  auto now = Clock::now();
  if (failures_ > 0 && now < next_attempt_) {
    auto wait = std::chrono::ceil<std::chrono::milliseconds>(next_attempt_ - now).count();
    throw TransportError("not connected to " + endpoint() + " (next attempt in " +
                         std::to_string(wait) + " ms; last error: " + last_error_ + ")");
  }
  try {
    open_socket(deadline_after(options_.connect_timeout));
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
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLERR | POLLNVAL)) return true;
  if (p.revents & (POLLIN | POLLHUP)) {
    char byte;
    ssize_t n = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0) return true;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return true;
  }
  return false;
}

void Connection::open_socket(Deadline deadline) {
  close();
  std::string failure;
  auto try_address = [&](int family, const sockaddr* address, socklen_t length) -> bool {
    int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      failure = "socket: " + errno_text(errno);
      return false;
    }
    int rc = ::connect(fd, address, length);
    if (rc < 0 && errno != EINPROGRESS && errno != EAGAIN) {
      failure = errno_text(errno);
      ::close(fd);
      return false;
    }
    if (rc < 0) {
      pollfd p{fd, POLLOUT, 0};
      int ready;
      do {
        ready = ::poll(&p, 1, poll_timeout(deadline));
      } while (ready < 0 && errno == EINTR);
      if (ready == 0) {
        ::close(fd);
        throw TimeoutError("timed out connecting to " + endpoint());
      }
      int error = 0;
      socklen_t size = sizeof(error);
      if (ready < 0) error = errno;
      else ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
      if (error != 0) {
        failure = errno_text(error);
        ::close(fd);
        return false;
      }
    }
    if (family != AF_UNIX) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    fd_ = fd;
    return true;
  };

  if (!options_.unix_socket.empty()) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (options_.unix_socket.size() >= sizeof(address.sun_path)) {
      throw TransportError("unix socket path too long: " + options_.unix_socket);
    }
    std::memcpy(address.sun_path, options_.unix_socket.c_str(), options_.unix_socket.size() + 1);
    if (!try_address(AF_UNIX, reinterpret_cast<sockaddr*>(&address), sizeof(address))) {
      throw TransportError("cannot connect to " + endpoint() + ": " + failure);
    }
    return;
  }

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* results = nullptr;
  std::string port = std::to_string(options_.port);
  int rc = ::getaddrinfo(options_.host.c_str(), port.c_str(), &hints, &results);
  if (rc != 0) {
    throw TransportError("cannot resolve " + options_.host + ": " + gai_strerror(rc));
  }
  bool connected = false;
  try {
    for (addrinfo* a = results; a != nullptr && !connected; a = a->ai_next) {
      connected = try_address(a->ai_family, a->ai_addr, a->ai_addrlen);
    }
  } catch (...) {
    ::freeaddrinfo(results);
    throw;
  }
  ::freeaddrinfo(results);
  if (!connected) throw TransportError("cannot connect to " + endpoint() + ": " + failure);
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
  if (count == 0) return;
  auto replies = exchange(encoded, count, deadline_after(options_.connect_timeout));
  for (const RespValue& reply : replies) {
    if (reply.is_error()) throw ServerError(reply.str);
  }
}

std::vector<RespValue> Connection::round_trip(std::string_view encoded, size_t count) {
  ensure_connected();
  return exchange(encoded, count, deadline_after(options_.command_timeout));
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
  for (;;) {
    ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n > 0) {
      inbuf_.append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n == 0) throw TransportError("connection to " + endpoint() + " closed by the server");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
    throw TransportError("read from " + endpoint() + " failed: " + errno_text(errno));
  }
}

void Connection::write_all(std::string_view data, Deadline deadline) {
  while (!data.empty()) {
    ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      throw TransportError("write to " + endpoint() + " failed: " + errno_text(errno));
    }
    // The socket buffer is full: the server may be waiting for us to read its replies to
    // earlier commands, so take them in while waiting to write.
    pollfd p{fd_, POLLOUT | POLLIN, 0};
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
    pollfd p{fd_, POLLIN, 0};
    int ready = ::poll(&p, 1, poll_timeout(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw TransportError("poll failed: " + errno_text(errno));
    if (ready == 0) throw TimeoutError("timed out waiting for a reply from " + endpoint());
  }
}

}  // namespace keywarden::detail
