// What a client connection needs from the process around it, and nothing more: the command
// layer to run its commands on, the event loop to watch its socket, the limits it enforces,
// the write queue its replies wait in, and the client registry it reports its memory, its
// pauses and its end to. The server implements it; a test implements it around a bare
// ServerState and Dispatcher to drive a Connection alone over a socketpair.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace keywarden {

class ClientSession;
class Connection;
class Dispatcher;
class EventLoop;
class ServerState;
struct Command;

// client-output-buffer-limit of one client class: bytes (0: none) and how long the soft
// limit may be exceeded.
struct OutputBufferLimit {
  int64_t hard = 0;
  int64_t soft = 0;
  int64_t soft_seconds = 0;
};
enum OutputClass : int { kOutputClassNormal = 0, kOutputClassReplica = 1, kOutputClassPubSub = 2 };

// The limits every connection enforces on itself (client-query-buffer-limit,
// client-output-buffer-limit).
struct ClientLimits {
  int64_t query_buffer_limit = 1024LL * 1024 * 1024;
  // Indexed by OutputClass.
  OutputBufferLimit output[3] = {
      {0, 0, 0}, {256LL << 20, 64LL << 20, 60}, {32LL << 20, 8LL << 20, 60}};
};

// Traffic counters the connections add to (INFO stats; CONFIG RESETSTAT clears them).
struct TrafficStats {
  uint64_t net_input_bytes = 0;
  uint64_t net_output_bytes = 0;
  uint64_t reads_processed = 0;   // read events handled (total_reads_processed)
  uint64_t writes_processed = 0;  // flushes with something to send (total_writes_processed)
};

class ConnectionHost {
 public:
  virtual ~ConnectionHost() = default;

  // ---- the command layer and the loop ----
  virtual ServerState& state() = 0;
  virtual Dispatcher& dispatcher() = 0;
  virtual EventLoop& loop() = 0;
  virtual const ClientLimits& client_limits() const = 0;
  virtual TrafficStats& traffic() = 0;
  // Whether a script runs now for `session` (its connection must neither flush nor close
  // under the script's feet).
  virtual bool script_running_for(const ClientSession& session) const = 0;

  // ---- replies ----
  // Marks a connection for flushing before the loop sleeps.
  virtual void queue_write(Connection* connection) = 0;
  // Called before any reply leaves the process (the AOF is written first).
  virtual void before_replies() = 0;

  // ---- after a command ----
  // A command of this connection ran (not one refused before running).
  virtual void command_ran(Connection& connection, std::span<const std::string_view> args,
                           const Command& command, int64_t duration_us) = 0;
  // Writes may have made keys that blocked clients wait on ready: serve them.
  virtual void serve_blocked_clients() = 0;

  // ---- the client registry ----
  // The connection's memory may have changed (client eviction, maxmemory-clients).
  virtual void client_memory_changed(Connection& connection) = 0;
  // Run the connection's buffered commands at the next before-sleep (after an unblock or a
  // pause ended).
  virtual void resume_later(Connection* connection) = 0;
  // A connection started (+1) or stopped (-1) holding a command back for CLIENT PAUSE.
  virtual void pause_hold_changed(int delta) = 0;
  // The connection closed itself; the host destroys it between event batches.
  virtual void connection_closed(Connection* connection) = 0;
};

}  // namespace keywarden
