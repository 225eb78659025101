// The client library's one error hierarchy: every failure thrown by keywarden::Client derives
// from keywarden::Error, and the four leaves tell apart where it came from (the network, the
// clock, the server or the byte stream), because callers react to each differently.
#pragma once

#include <stdexcept>
#include <string>

namespace keywarden {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Connecting, reading or writing failed, or the connection was closed by the peer. The
// connection is dropped; a later command reconnects.
class TransportError : public Error {
 public:
  using Error::Error;
};

// No reply (or no connection) within the configured timeout. The connection is dropped,
// since a late reply would otherwise be taken for the next command's.
class TimeoutError : public Error {
 public:
  using Error::Error;
};

// The server answered with an error reply, e.g. "WRONGTYPE Operation against a key ...".
class ServerError : public Error {
 public:
  // `text` is the whole error line as the server sent it, without the leading '-'.
  explicit ServerError(const std::string& text);

  // The first word, e.g. "WRONGTYPE", "ERR", "NOSCRIPT".
  const std::string& code() const { return code_; }
  // What follows the code (the whole text when it has a single word).
  const std::string& message() const { return message_; }

 private:
  std::string code_;
  std::string message_;
};

// A Redis Cluster could not run a command as asked: its keys live in different slots
// (CROSSSLOT: give them a common {hash tag}), the redirections (MOVED, ASK, TRYAGAIN) went on
// past ClusterOptions::max_redirects, or the cluster stayed down or unreachable (CLUSTERDOWN).
// code() is the server's code; what() adds what the client tried.
class ClusterError : public ServerError {
 public:
  using ServerError::ServerError;
};

// The server's bytes are not valid RESP, or a reply does not have the shape a call needs.
class ProtocolError : public Error {
 public:
  using Error::Error;
};

}  // namespace keywarden
