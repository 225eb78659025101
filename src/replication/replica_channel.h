// The server layer as replication sees it: a replica's connection (ReplicaChannel) and the host
// that finds connections by client id (ReplicationHost). The server's Connection and
// ClientRegistry implement them, so that src/replication never includes src/server.
//
// A channel belongs to the server: it may close at any time (the peer hung up, CLIENT KILL,
// output buffer limits), and the host then tells the primary side with
// PrimarySide::replica_closed() before the object goes away.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace keywarden {

class ReplicaChannel {
 public:
  virtual ~ReplicaChannel() = default;
  virtual uint64_t channel_client_id() const = 0;
  // The peer's IP address, without the port.
  virtual std::string channel_peer_ip() const = 0;
  // Appends bytes to the connection's output (replication stream, RDB payload, +FULLRESYNC);
  // they leave with the connection's next flush. Output beyond the replica class's
  // client-output-buffer-limit closes the connection asynchronously.
  virtual void channel_send(std::string_view bytes) = 0;
  // Bytes queued and not yet written to the socket.
  virtual size_t channel_unsent_bytes() const = 0;
  // The replica class's hard output limit in bytes (0: none). The stream a replica accumulates
  // while its image is prepared counts against it, as in Redis, where it waits in the
  // replica's output buffer.
  virtual int64_t channel_output_hard_limit() const = 0;
  // Closes the connection at its next flush (Redis's freeClientAsync).
  virtual void channel_close_async() = 0;
};

class ReplicationHost {
 public:
  virtual ~ReplicationHost() = default;
  // The open connection of client `client_id`, or null.
  virtual ReplicaChannel* replica_channel(uint64_t client_id) = 0;
  // A client blocked in WAIT may be satisfied now: run its command again.
  virtual void retry_blocked_client(uint64_t client_id) = 0;
  // Ends every client's blocking command (not a CLIENT PAUSE hold) with `error`: the server
  // became a replica, and what they wait for can no longer come from their writes.
  virtual void end_blocked_clients(std::string_view error) = 0;
};

}  // namespace keywarden
