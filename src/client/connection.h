// One socket to the server, used by one thread at a time (the pool guarantees it): connects
// with a deadline, runs the configured handshake (HELLO/AUTH/SETNAME/SELECT), and exchanges
// batches of encoded commands for their replies with poll()-based deadlines. Any transport,
// timeout or protocol failure closes the socket, since the stream is out of step after it;
// the next use reconnects, spacing failed attempts with exponential backoff.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/transport.h"
#include "keywarden/errors.h"
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
// With `replica` (through Sentinel only), a replica fit to serve reads (SENTINEL REPLICAS:
// not down, not disconnected, its link to the primary up) when there is one, else the primary.
int connect_socket(const ClientOptions& options, Deadline deadline, std::string* where = nullptr,
                   bool replica = false);

// A connected socket and its byte stream, TLS when options.tls.enabled (the handshake done
// within the deadline by open()). Reads and writes never block; the caller polls for
// poll_events_for_read()/poll_events_for_write(), which a TLS stream may turn around.
class Stream {
 public:
  Stream() = default;
  ~Stream() { close(); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // connect_socket(), then the TLS handshake. Throws TransportError or TimeoutError.
  void open(const ClientOptions& options, Deadline deadline, std::string* where = nullptr,
            bool replica = false);
  void close();
  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  // >0 bytes, 0 at the end of the stream, Transport::kAgain or Transport::kFailed.
  ssize_t read(char* into, size_t size) { return transport_->read(into, size); }
  ssize_t write(const char* from, size_t size) { return transport_->write(from, size); }
  size_t pending() const { return transport_->pending(); }
  short poll_events_for_read() const;
  short poll_events_for_write() const;
  const std::string& error() const { return transport_->error(); }

 private:
  int fd_ = -1;
  std::unique_ptr<Transport> transport_;
};

// Thrown by a connection that interrupts its waits on a switch (Connection::
// interrupt_on_switch) when the sentinels announce a new primary while it waits for a reply:
// whatever it waited for on the old primary no longer counts. The connection is closed.
class PrimarySwitchedError : public TransportError {
 public:
  using TransportError::TransportError;
};

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

  bool is_open() const { return stream_.is_open(); }
  void close();

  // Through Sentinel: the SentinelWatch epoch to follow (it must outlive the connection). An
  // open connection whose epoch has moved since it was opened is reopened on its next use.
  void follow(const std::atomic<uint64_t>* epoch) { epoch_ = epoch; }
  // Through Sentinel: connect to a replica fit for reads, or the primary when there is none.
  void prefer_replica() { prefer_replica_ = true; }
  // Through Sentinel: a wait for a reply (a blocking command's) ends with PrimarySwitchedError
  // as soon as the followed epoch moves, instead of going on on the old primary.
  void interrupt_on_switch() { interrupt_on_switch_ = true; }

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
  Stream stream_;
  std::string connected_to_;  // what connect_socket reached last
  std::string inbuf_;
  ReplyParser parser_;
  const std::atomic<uint64_t>* epoch_ = nullptr;
  uint64_t opened_epoch_ = 0;
  bool prefer_replica_ = false;
  bool interrupt_on_switch_ = false;
  int failures_ = 0;
  Deadline next_attempt_{};
  std::string last_error_;
};

}  // namespace keywarden::detail
