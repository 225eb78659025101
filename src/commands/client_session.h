// What the command layer knows of one client: its selected database, protocol version,
// authentication, name, reply mode and transaction state. The server layer owns the socket and
// embeds a session per connection; commands see only this, so they can be tested without
// sockets.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "commands/blocking.h"
#include "commands/locks.h"
#include "commands/tracking.h"
#include "commands/transactions.h"
#include "pubsub/pubsub.h"

namespace keywarden {

struct Command;
struct AclUser;

enum class ReplyMode : uint8_t { kOn, kOff, kSkipNext, kSkip };

struct ClientSession {
  uint64_t id = 0;
  int db = 0;
  int resp = 2;
  bool authenticated = false;
  // The ACL user the client runs as (commands/acl.h); null for the server's own sessions
  // (the AOF, a primary's stream, internal calls), which nothing restricts.
  std::shared_ptr<AclUser> user;
  bool close_after_reply = false;  // QUIT, or a fatal error already replied
  bool no_evict = false;
  bool no_touch = false;
  bool is_local = true;  // connected over loopback or a unix socket (enable-debug-command local)
  bool script_client = false;  // the session a script's redis.call runs commands in
  // RESTORE payloads from it are trusted (the AOF being loaded): sanitize-dump-payload
  // clients does not validate them in depth.
  bool payloads_trusted = false;
  // Commands that the server must apply, not judge: the AOF being replayed, the server's own
  // internal calls (later, a primary's stream). As Redis's mustObeyClient, the dispatcher does
  // not refuse them for the server's state: -LOADING, -MISCONF, nor hold them for CLIENT PAUSE.
  bool must_obey = false;
  // The link from this server's primary (a replica applying the replication stream): never
  // refused as read-only or stale, and it sees keys whose deadline passed until the primary's
  // DEL arrives (Redis's CLIENT_MASTER).
  bool primary_link = false;
  // A replica of this server, once it sent SYNC or PSYNC (Redis's CLIENT_SLAVE): it may not
  // touch the keyspace, and CLIENT PAUSE does not hold it.
  bool replica = false;
  // The replication offset after this client's latest command (WAIT waits for it).
  int64_t write_offset = 0;
  ReplyMode reply_mode = ReplyMode::kOn;
  std::string name;
  std::string library_name;
  std::string library_version;
  const Command* last_command = nullptr;
  ClientTransaction transaction;  // MULTI state and watched keys
  BlockedCommand blocked;         // the command it waits in, when blocked on keys
  // Locks granted to this connection with BIND: released when it closes.
  std::vector<LockGrant> bound_locks;
  // The client as the pub/sub hub sees it (its subscriptions, where its messages go); null for
  // a client that cannot subscribe.
  Subscriber* subscriber = nullptr;
  // CLIENT TRACKING (commands/tracking.h).
  ClientTracking tracking;

  // Subscribed to a channel, pattern or shard channel: RESP2 subscribed mode.
  bool subscribed() const { return subscriber != nullptr && subscriber->subscribed(); }
};

}  // namespace keywarden
