// One socket to the server, used by one thread at a time (the pool guarantees it): connects
// with a deadline, runs the configured handshake (HELLO/AUTH/SETNAME/SELECT), and exchanges
// batches of encoded commands for their replies with poll()-based deadlines. Any transport,
// timeout or protocol failure closes the socket, since the stream is out of step after it;
// the next use reconnects, spacing failed attempts with exponential backoff.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "keywarden/options.h"
#include "resp/reply_parser.h"

namespace keywarden::detail {

using Deadline = std::chrono::steady_clock::time_point;

// Deadline `limit` from now; zero means none.
Deadline deadline_after(std::chrono::milliseconds limit);

// A non-blocking socket connected within `deadline` to the server `options` describe: the Unix
// socket, host:port, or the primary its sentinels name. `*where` (when given) receives what
// it connected to, for messages. Throws TransportError, or TimeoutError when the deadline
// passes while connecting.
int connect_socket(const ClientOptions& options, Deadline deadline, std::string* where = nullptr);

// RESP request encoding of one command.
void encode_command(std::string& out, const std::vector<std::string_view>& args);
void encode_command(std::string& out, const std::vector<std::string>& args);

class Connection {
 public:
  explicit Connection(const ClientOptions& options) : options_(options) {}
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Opens the socket and runs the handshake unless already open (an idle socket the server
  // has closed is noticed here and reopened). Throws TransportError, TimeoutError or
  // ServerError (a handshake command refused); within the backoff after a failed attempt it
  // throws TransportError without trying.
  void ensure_connected();

  // Writes `encoded` (`count` commands) and reads `count` replies.
  std::vector<RespValue> round_trip(std::string_view encoded, size_t count);

  bool is_open() const { return fd_ >= 0; }
  void close();

 private:
  void handshake();
  std::vector<RespValue> exchange(std::string_view encoded, size_t count, Deadline deadline);
  void write_all(std::string_view data, Deadline deadline);
  RespValue read_reply(Deadline deadline);
  // Reads what the socket has into inbuf_; false when nothing was available.
  bool receive_some();
  bool peer_closed();
  std::string endpoint() const;
  bool through_sentinel() const { return !options_.sentinel.addresses.empty(); }

  const ClientOptions& options_;
  int fd_ = -1;
  std::string connected_to_;  // what connect_socket reached last
  std::string inbuf_;
  ReplyParser parser_;
  int failures_ = 0;
  Deadline next_attempt_{};
  std::string last_error_;
};

}  // namespace keywarden::detail
