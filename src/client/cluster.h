// Internal to the client layer: a Client's view of a Redis Cluster. ClusterRouter keeps the
// slot map (from CLUSTER SLOTS) and one ConnectionPool per node, and runs a batch of encoded
// commands on the nodes that own their keys' slots:
// - a batch that must stay on one connection (it contains MULTI/EXEC, WAIT, SCRIPT, WATCH:
//   a transaction, a script with its SCRIPT LOAD, a write with its WAIT) goes whole to the
//   owner of its first key's slot; any redirection in its replies retries it whole;
// - any other batch (a pipeline) is split per node, each part sent in one write, the replies
//   put back in the caller's order; a command redirected retries alone.
// Redirections: MOVED updates the map (and refreshes it all, at most every 100 ms) and
// retries at once (with a growing pause from the third in a row, should two nodes disagree);
// ASK retries once on the named node, ASKING before each command; TRYAGAIN, CLUSTERDOWN and a
// node that refuses connections retry after a growing backoff. A command gets at most
// max_redirects retries; then its last error reply stands. A node is only retried after a
// failure to connect, never after a request went out (it may have run). A transaction, or a
// batch with WAIT or SCRIPT, whose keys span slots is a CROSSSLOT ClusterError before sending.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/connection_pool.h"
#include "keywarden/options.h"
#include "resp/reply_parser.h"

namespace keywarden::detail {

// One command of an encoded batch: its bytes and its arguments (views into the batch).
struct EncodedCommand {
  std::string_view bytes;
  std::vector<std::string_view> args;
};
// Splits a batch made by encode_command into its `count` commands. Throws ProtocolError when
// the bytes are not such a batch.
std::vector<EncodedCommand> split_encoded(std::string_view encoded, size_t count);

// The key that decides where a command goes (args[0] is the command's name): the first key,
// or the first of KEYS for EVAL/EVALSHA/FCALL; nullopt for a command without keys.
std::optional<std::string_view> routing_key(const std::vector<std::string_view>& args);

// Whether a command's error reply asks the client to go elsewhere or wait (MOVED, ASK,
// TRYAGAIN, CLUSTERDOWN).
bool is_redirect_error(const RespValue& reply);

class ClusterRouter {
 public:
  // `options` (with cluster.addresses set) must outlive the router.
  explicit ClusterRouter(const ClientOptions& options);
  ~ClusterRouter();
  ClusterRouter(const ClusterRouter&) = delete;
  ClusterRouter& operator=(const ClusterRouter&) = delete;

  // Runs `count` encoded commands and returns their replies in order (see above).
  std::vector<RespValue> round_trip(std::string_view encoded, size_t count);

 private:
  struct Node {
    std::string address;  // host:port
    ClientOptions options;
    std::unique_ptr<ConnectionPool> pool;
  };

  Node& node(const std::string& host, int port);
  // The primary serving `slot` (-1: any primary), learning the map first when needed. Throws
  // ClusterError (CLUSTERDOWN) when no node can tell the map or the slot has no owner.
  Node& owner(int slot);
  // Asks the known nodes, then the seeds, for CLUSTER SLOTS; false when none answered.
  bool refresh();
  void refresh_soon();
  // Sends a unit that must stay together (slot -1: any node), retrying redirections.
  std::vector<RespValue> send_unit(std::string_view encoded, size_t count, int slot);
  std::chrono::milliseconds backoff(int attempt) const;

  const ClientOptions& options_;
  std::mutex mutex_;  // guards nodes_, slots_, have_map_, last_refresh_, last_failure_
  std::map<std::string, std::unique_ptr<Node>> nodes_;  // never erased: pointers stay valid
  std::vector<Node*> slots_;                            // slot -> owner, nullptr when unknown
  bool have_map_ = false;
  std::chrono::steady_clock::time_point last_refresh_{};
  std::string last_failure_;
  std::mutex refresh_mutex_;  // one CLUSTER SLOTS at a time
};

}  // namespace keywarden::detail
