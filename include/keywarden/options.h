// keywarden::ClientOptions: where the server is and how every connection is set up.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace keywarden {

// Where to find the primary of a Sentinel-managed group. With `addresses` set, the client asks
// the sentinels in order (SENTINEL GET-MASTER-ADDR-BY-NAME master_name) every time it opens a
// connection, checks with ROLE that what it reached is a primary, and drops a connection that
// answers -READONLY (the primary became a replica) so that the next command asks again; host
// and port are then unused.
//
// It also follows failovers as they happen: a background connection to one sentinel at a
// time (the next in the list when it is lost) listens for +switch-master. When the sentinels
// announce a new primary for master_name, every pooled connection is reopened on its next use,
// so the first command after the switch already goes to the new primary, without waiting for
// a -READONLY or a timeout from the old one; a Subscriber made from these options reconnects
// to the new primary and subscribes again (its on_reconnect runs). A switch missed while the
// background connection was down counts as one: everything reconnects once it is back.
// With read_from = kReplicaPreferred, read-only commands sent with Client::command go to a
// replica instead (see ReadFrom). docs/locks.md, "A Sentinel-managed primary".
struct SentinelOptions {
  // Where Client::command sends the read-only commands of a short fixed list (GET, MGET,
  // EXISTS, TTL, HGET, HGETALL, LRANGE, SMEMBERS, ZRANGE, ZSCORE, SCAN…; docs/locks.md).
  enum class ReadFrom {
    kPrimary,           // everything to the primary
    // To a replica the sentinels list as fit (not s_down, o_down or disconnected, with its
    // link to the primary ok), over a pool of its own; to the primary when there is none.
    // Replication is asynchronous: such a read may not see the caller's latest writes yet.
    // Pipelines, transactions, scripts, Client::command_on_primary and every lock and
    // synchronizer always use the primary.
    kReplicaPreferred,
  };

  std::vector<std::pair<std::string, int>> addresses;  // host, port of each sentinel
  std::string master_name;
  // AUTH for the sentinels themselves (their requirepass), when set.
  std::string username;
  std::string password;
  // Called (on the Client's background thread, keep it short) for each +switch-master of
  // master_name the client hears, with the old and the new primary as "ip:port".
  std::function<void(const std::string& from, const std::string& to)> on_primary_switch;
  ReadFrom read_from = ReadFrom::kPrimary;
};

// TLS to the server (its tls-port). With `enabled`, every connection of the client (pooled,
// Subscriber, sentinel queries excepted) runs a TLS handshake right after connecting, within
// connect_timeout. The server's certificate is checked against ca_file/ca_dir (the system's
// store when both are empty) unless verify_peer is false; cert_file/key_file are the client
// certificate a server with tls-auth-clients yes requires.
struct TlsOptions {
  bool enabled = false;
  std::string ca_file;       // PEM bundle of trusted CAs
  std::string ca_dir;        // directory of hashed CA certificates (c_rehash)
  std::string cert_file;     // client certificate chain (PEM)
  std::string key_file;      // its private key (PEM)
  std::string key_password;  // passphrase of an encrypted key_file
  // Sent as SNI and, when verify_peer, checked against the certificate's names (DNS names,
  // or an IP address literal). Empty: neither, only the chain is checked.
  std::string server_name;
  bool verify_peer = true;
};

// A Redis Cluster. With `addresses` set (a few of its nodes: any will do, the client learns
// the rest from CLUSTER SLOTS), every command goes to the primary that owns its key's slot,
// over a connection pool per node; host, port, unix_socket and database are then unused.
// -MOVED updates the slot map and retries there, -ASK retries once on the importing node after
// ASKING, -TRYAGAIN and -CLUSTERDOWN retry after a backoff; each command gets at most
// max_redirects retries, after which the last error reply is its answer (Client::command
// throws ClusterError). docs/locks.md, "A Redis Cluster".
struct ClusterOptions {
  std::vector<std::pair<std::string, int>> addresses;  // host, port of the seed nodes
  int max_redirects = 16;
  // TRYAGAIN, CLUSTERDOWN and unreachable nodes: wait min, 2*min, 4*min... up to max before
  // retrying (MOVED and ASK retry at once).
  std::chrono::milliseconds retry_backoff_min{10};
  std::chrono::milliseconds retry_backoff_max{1000};
};

// Whether Lock and FencedLock use keywarden-server's native lock commands (ClientOptions).
enum class LockNativeCommands {
  kAuto,  // when the server has them (asked once: COMMAND INFO lock.acquire)
  kOff,   // always Redisson's scripts
};

struct ClientOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  // When sentinel.addresses is set, the server is the primary the sentinels name.
  SentinelOptions sentinel;
  // When cluster.addresses is set, the servers are the primaries of that Redis Cluster.
  ClusterOptions cluster;
  // When set, connect to this Unix socket path instead of host:port.
  std::string unix_socket;
  TlsOptions tls;

  // Sent with AUTH (or HELLO ... AUTH) on connect when password is set; an empty username
  // means the default user.
  std::string username;
  std::string password;
  int database = 0;            // SELECTed on connect when not 0
  std::string client_name;     // CLIENT SETNAME on connect when set

  // Zero means no limit. connect_timeout bounds opening a connection and its handshake;
  // command_timeout bounds one round trip (a whole pipeline or transaction counts as one) and
  // the wait for a free pooled connection. A blocking command (BLPOP ...) needs a
  // command_timeout longer than its own timeout, or zero.
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds command_timeout{5000};

  int resp = 2;  // 2, or 3 (HELLO 3 on connect); Client's constructor rejects anything else

  size_t pool_size = 1;  // connections shared by all threads; a command borrows one

  // After a failed reconnect attempt, further attempts wait min, 2*min, 4*min... up to max;
  // commands issued meanwhile fail fast with TransportError.
  std::chrono::milliseconds reconnect_backoff_min{100};
  std::chrono::milliseconds reconnect_backoff_max{5000};

  // A Subscriber's connection silent this long gets a PING; still silent as long again, it
  // is taken for dead and reconnected (a frozen server or a dropped route never closes the
  // socket, and a lock waiter would miss its release). Zero disables.
  std::chrono::milliseconds keepalive_interval{30000};

  // Lease of a lock taken without an explicit lease; the watchdog renews it every third of it.
  std::chrono::milliseconds lock_watchdog_timeout{30000};

  // FencedLock's token counters. false (the default): one counter per cluster slot shared by
  // every name in it, so locking many distinct names leaves at most 16384 counter keys behind.
  // true: Redisson's RFencedLock layout, one counter key per name ever locked, never deleted —
  // only for names that Redisson clients lock too. (docs/locks.md, "Fencing tokens".)
  bool fencing_counter_per_name = false;

  // Lock and FencedLock (its default, shared-counter layout) on keywarden-server: with kAuto,
  // acquire with LOCK.ACQUIRE, waiting in the server's FIFO queue on a connection of the lock
  // service's own (so no pooled connection is held while waiting), and release with
  // LOCK.RELEASE; on other servers, or with kOff, Redisson's scripts. Handles that require
  // durable grants (require_replicas) keep the scripts. (docs/locks.md, "libkeywarden on
  // keywarden-server".)
  LockNativeCommands lock_native_commands = LockNativeCommands::kAuto;
  // With native commands: bind each grant to the connection that asked for it (LOCK.ACQUIRE …
  // BIND), so that a process that dies frees its locks at once, not when their lease ends.
  bool lock_bind_to_connection = false;

  // Every lock handle's default for Lock::require_replicas: grants, renewals and releases count
  // only once this many replicas acknowledged them (WAIT), within lock_durable_timeout. 0: off.
  // command_timeout must exceed lock_durable_timeout, since the WAIT shares a round trip.
  int lock_durable_replicas = 0;
  std::chrono::milliseconds lock_durable_timeout{1000};
};

}  // namespace keywarden
