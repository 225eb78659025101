// Everything a command handler may touch besides its own client: the keyspace, the clock, the
// command table, the propagation path, the settings that change command behaviour, and the
// counters INFO reports. One instance per server, owned by the server layer (or by a test).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "commands/acl.h"
#include "commands/blocking.h"
#include "commands/client_pause.h"
#include "commands/command_table.h"
#include "commands/eviction.h"
#include "commands/locks.h"
#include "commands/propagation.h"
#include "commands/replication_role.h"
#include "commands/service.h"
#include "commands/tracking.h"
#include "commands/transactions.h"
#include "common/clock.h"
#include "pubsub/pubsub.h"
#include "storage/keyspace.h"
#include "types/hash_value.h"
#include "types/list_value.h"
#include "types/set_value.h"
#include "types/zset_value.h"

namespace keywarden {

// enable-debug-command, numbered as its config names ("no", "yes", "local").
enum DebugCommandAccess : int { kDebugCommandNo = 0, kDebugCommandYes = 1, kDebugCommandLocal = 2 };

// maxmemory-policy, numbered as the server's config table numbers its names.
enum MaxmemoryPolicy : int {
  kMaxmemoryNoEviction = 0,
  kMaxmemoryVolatileLru = 1,
  kMaxmemoryVolatileLfu = 2,
  kMaxmemoryVolatileRandom = 3,
  kMaxmemoryVolatileTtl = 4,
  kMaxmemoryAllKeysLru = 5,
  kMaxmemoryAllKeysLfu = 6,
  kMaxmemoryAllKeysRandom = 7,
};
// sanitize-dump-payload: how deep RESTORE (and RDB loading, with kYes) validates packed
// encodings; see persistence/rdb_codec.h. kClients sanitizes RESTORE from ordinary clients
// only, not from sessions whose payloads are trusted (the AOF being loaded) nor RDB loading.
enum SanitizeDumpPayload : int {
  kSanitizeDumpNo = 0,
  kSanitizeDumpYes = 1,
  kSanitizeDumpClients = 2,
};

// Under an LFU policy entries' access clocks hold LFU counters instead of LRU times.
inline bool policy_uses_lfu(int policy) {
  return policy == kMaxmemoryVolatileLfu || policy == kMaxmemoryAllKeysLfu;
}

// Settings the dispatcher and handlers read; the server's config table points into them.
struct CommandSettings {
  std::string requirepass;
  int enable_debug_command = kDebugCommandNo;  // a DebugCommandAccess
  int64_t proto_max_bulk_len = 512LL * 1024 * 1024;
  bool lazyfree_lazy_user_del = false;
  bool lazyfree_lazy_user_flush = false;
  bool lazyfree_lazy_server_del = false;
  int maxmemory_policy = kMaxmemoryNoEviction;  // a MaxmemoryPolicy
  int64_t lfu_log_factor = 10;
  int64_t lfu_decay_time = 1;  // minutes
  // hash-max-listpack-entries / hash-max-listpack-value.
  HashLimits hash_limits;
  // list-max-listpack-size: positive, entries per quicklist node; -1..-5, node size of 4, 8,
  // 16, 32 or 64 KiB. list-compress-depth is accepted and kept (nodes are never compressed).
  int64_t list_max_listpack_size = kDefaultListMaxListpackSize;
  int64_t list_compress_depth = 0;
  // A set of integers stays an intset up to set-max-intset-entries members; other small sets
  // are listpacks up to set-max-listpack-entries members of at most set-max-listpack-value
  // bytes (Redis 7.2's encoding and settings; 7.0 goes straight to hashtable).
  SetLimits set_limits;
  // zset-max-listpack-entries / zset-max-listpack-value.
  ZSetLimits zset_limits;
  // stream-node-max-bytes / stream-node-max-entries: when a stream's tail node is full.
  int64_t stream_node_max_bytes = 4096;
  int64_t stream_node_max_entries = 100;
  // hll-sparse-max-bytes: the longest sparse HyperLogLog string before it turns dense.
  int64_t hll_sparse_max_bytes = 3000;
  // notify-keyspace-events: NotifyClass bits (commands/notifications.h); 0 is off.
  uint32_t notify_keyspace_events = 0;
  int sanitize_dump_payload = kSanitizeDumpNo;  // a SanitizeDumpPayload
  // DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call noscript commands (a test knob).
  bool script_disable_deny_script = false;
};

struct ServerStats {
  uint64_t total_commands_processed = 0;
  uint64_t keyspace_hits = 0;
  uint64_t keyspace_misses = 0;
  uint64_t total_error_replies = 0;
  uint64_t dirty = 0;                       // writes since the last save
  uint64_t dump_payload_sanitizations = 0;  // packed blobs RESTORE validated in depth
  std::map<std::string, uint64_t, std::less<>> error_counts;  // errorstats, by error code
  void reset() {
    uint64_t keep_dirty = dirty;
    *this = {};
    dirty = keep_dirty;
  }
};

class ServerState final : public KeyspaceListener {
 public:
  ServerState(const Clock& clock, int database_count);

  const Clock& clock() const { return clock_; }
  Keyspace& keyspace() { return keyspace_; }
  CommandTable& commands() { return commands_; }
  Propagator& propagator() { return propagator_; }
  CommandSettings& settings() { return settings_; }
  ServerStats& stats() { return stats_; }
  // The services and shared parts reachable by type (commands/service.h): the dispatcher,
  // the scripting engine, the RDB and AOF services, the server itself…
  ServiceRegistry& services() { return services_; }
  const ServiceRegistry& services() const { return services_; }
  // Which clients WATCH which keys (MULTI/EXEC).
  WatchRegistry& watches() { return watches_; }
  // Which clients are blocked on which keys (BLPOP…).
  BlockingRegistry& blocking() { return blocking_; }
  // The locks granted natively and their counters (locks.h).
  LockTable& locks() { return locks_; }
  // CLIENT TRACKING: who may cache which keys, and their invalidation messages.
  KeyTracking& tracking() { return tracking_; }
  // Channels, patterns and their subscribers; keyspace notifications are published here.
  PubSub& pubsub() { return pubsub_; }
  // maxmemory, its policy's evictions and the memory gauge they read (eviction.h).
  Evictor& eviction() { return eviction_; }
  // ACL users, the checks the dispatcher runs, the ACL log (commands/acl.h).
  AclStore& acl() { return acl_; }
  const AclStore& acl() const { return acl_; }
  const Evictor& eviction() const { return eviction_; }
  // When not empty, write commands (and PING) are refused with this error (-MISCONF): the
  // server cannot persist them. Two sources set it, the RDB service after a failed background
  // save under stop-writes-on-bgsave-error and the AOF after a failed write; when both do, the
  // RDB's error is the one given, as Redis's writeCommandsDeniedByDiskError checks it first.
  enum class DiskError : uint8_t { kRdb, kAof };
  std::string_view write_refusal() const {
    return !rdb_write_refusal_.empty() ? rdb_write_refusal_ : aof_write_refusal_;
  }
  // `text` empty: that source no longer refuses writes.
  void set_write_refusal(DiskError source, std::string_view text) {
    (source == DiskError::kRdb ? rdb_write_refusal_ : aof_write_refusal_) = text;
  }
  // While the server loads its dataset at start-up (the server layer sets it), every command
  // without the loading flag is refused with -LOADING.
  bool loading() const { return loading_; }
  void set_loading(bool loading) { loading_ = loading; }
  // CLIENT PAUSE (client_pause.h): set by CLIENT PAUSE/UNPAUSE, read by the dispatcher.
  ClientPause& client_pause() { return client_pause_; }
  // The server's place in replication (commands/replication_role.h); the replication service
  // keeps it current.
  ReplicationRole& replication() { return replication_; }
  const ReplicationRole& replication() const { return replication_; }
  const ClientPause& client_pause() const { return client_pause_; }
  // The flags `command` runs with for `args`: the table's, except for a script that declares
  // flags (EVAL with a shebang, FCALL), whose write/denyoom/stale/may-replicate flags follow
  // the declaration, as Redis's getCommandFlags. The scripting layer installs the rule.
  using CommandFlagsRule =
      std::function<uint32_t(const Command&, std::span<const std::string_view>)>;
  void set_command_flags_rule(CommandFlagsRule rule) { command_flags_rule_ = std::move(rule); }
  uint32_t command_flags(const Command& command, std::span<const std::string_view> args) const {
    return command_flags_rule_ ? command_flags_rule_(command, args) : command.spec->flags;
  }
  // While a script runs past busy-reply-threshold, the error every command without the
  // allow-busy flag gets (-BUSY …); empty otherwise.
  std::string_view busy_reply() const { return busy_reply_; }
  void set_busy_reply(std::string_view text) { busy_reply_ = text; }
  // Counts an error reply under its code (the first word: "ERR", "WRONGTYPE"…).
  void count_error(std::string_view text);

  // The deletions no command asked for take one path each, as a command's changes do
  // (CommandContext::changed): the effect (DEL, or UNLINK when freed lazily) joins the
  // propagation batch, WATCH learns of the change, the event fires. Neither counts as a change
  // (Redis leaves server.dirty alone). The key is signalled to the blocked clients: a key gone
  // serves no list waiter, but it frees a lock its LOCK.ACQUIRE waiters queue for.
  // Expiry, lazy or active: fires `expired`.
  void key_expired(int db, std::string_view key) override;
  void hash_fields_expired(int db, std::string_view key, const std::vector<std::string>& fields,
                           bool key_deleted) override;
  // Eviction, after it removed the key (freed lazily when `lazy`): fires `evicted`.
  void key_evicted(int db, std::string_view key, bool lazy);

  // Publishes a keyspace notification of class `event_class` (a NotifyClass bit) for `key`
  // in database `db`, when notify-keyspace-events enables that class: `event` on
  // __keyspace@<db>__:<key> (K) and `key` on __keyevent@<db>__:<event> (E).
  void notify_keyspace_event(uint32_t event_class, std::string_view event, std::string_view key,
                             int db) {
    if ((settings_.notify_keyspace_events & event_class) == 0) return;
    publish_keyspace_event(event, key, db);
  }

 private:
  void publish_keyspace_event(std::string_view event, std::string_view key, int db);

  const Clock& clock_;
  Keyspace keyspace_;
  CommandTable commands_;
  Propagator propagator_;
  CommandSettings settings_;
  ServerStats stats_;
  ServiceRegistry services_;
  WatchRegistry watches_;
  BlockingRegistry blocking_;
  LockTable locks_;
  KeyTracking tracking_;
  PubSub pubsub_;
  Evictor eviction_{*this};
  AclStore acl_{commands_};
  std::string_view busy_reply_;
  std::string rdb_write_refusal_;
  std::string aof_write_refusal_;
  bool loading_ = false;
  ClientPause client_pause_{keyspace_};
  ReplicationRole replication_;
  CommandFlagsRule command_flags_rule_;
};

}  // namespace keywarden
