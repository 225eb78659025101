// The directives of the command layer's own settings: expiry effort, lazy freeing, maxmemory and
// its policy, the small encodings' limits, keyspace notifications. They bind to the fields the
// keyspace, the evictor and the handlers read (CommandSettings, ExpirySettings…), so nothing
// below the config registry looks a setting up by name.
#include <cstdint>

#include "commands/config_registry.h"
#include "commands/notifications.h"
#include "commands/server_state.h"

namespace keywarden {

void register_keyspace_config(ConfigRegistry& c, ServerState& state) {
  CommandSettings& command = state.settings();
  ExpirySettings& expiry = state.keyspace().expiry_settings();
  constexpr int64_t kMax = INT64_MAX;
  c.add_int("active-expire-effort", &expiry.effort, 1, 10);
  LazyFreeSettings& lazy_free = state.keyspace().lazy_free().settings();
  c.add_bool("lazyfree-lazy-eviction", &lazy_free.lazy_eviction);
  c.add_bool("lazyfree-lazy-expire", &lazy_free.lazy_expire);
  c.add_bool("lazyfree-lazy-user-del", &command.lazyfree_lazy_user_del);
  c.add_bool("lazyfree-lazy-user-flush", &command.lazyfree_lazy_user_flush);
  c.add_bool("lazyfree-lazy-server-del", &command.lazyfree_lazy_server_del);
  c.add_bool("replica-lazy-flush", &lazy_free.replica_lazy_flush);
  c.add_alias("replica-lazy-flush", "slave-lazy-flush");
  EvictionSettings& eviction = state.eviction().settings();
  c.add_memory("maxmemory", &eviction.maxmemory, 0, kMax, 0,
               [&state] { state.eviction().schedule(); });
  c.add_enum("maxmemory-policy", &command.maxmemory_policy,
             {{"volatile-lru", kMaxmemoryVolatileLru},
              {"volatile-lfu", kMaxmemoryVolatileLfu},
              {"volatile-random", kMaxmemoryVolatileRandom},
              {"volatile-ttl", kMaxmemoryVolatileTtl},
              {"allkeys-lru", kMaxmemoryAllKeysLru},
              {"allkeys-lfu", kMaxmemoryAllKeysLfu},
              {"allkeys-random", kMaxmemoryAllKeysRandom},
              {"noeviction", kMaxmemoryNoEviction}});
  c.add_integer("lfu-log-factor", &command.lfu_log_factor, 0, INT32_MAX);
  c.add_integer("lfu-decay-time", &command.lfu_decay_time, 0, INT32_MAX);
  c.add_integer("hash-max-listpack-entries", &command.hash_limits.max_listpack_entries, 0, kMax);
  c.add_alias("hash-max-listpack-entries", "hash-max-ziplist-entries");
  c.add_memory("hash-max-listpack-value", &command.hash_limits.max_listpack_value, 0, kMax);
  c.add_alias("hash-max-listpack-value", "hash-max-ziplist-value");
  c.add_integer("list-max-listpack-size", &command.list_max_listpack_size, INT32_MIN, INT32_MAX);
  c.add_alias("list-max-listpack-size", "list-max-ziplist-size");
  c.add_integer("list-compress-depth", &command.list_compress_depth, 0, INT32_MAX);
  c.add_integer("set-max-intset-entries", &command.set_limits.max_intset_entries, 0, kMax);
  c.add_integer("set-max-listpack-entries", &command.set_limits.max_listpack_entries, 0, kMax);
  c.add_memory("set-max-listpack-value", &command.set_limits.max_listpack_value, 0, kMax);
  c.add_integer("zset-max-listpack-entries", &command.zset_limits.max_listpack_entries, 0, kMax);
  c.add_alias("zset-max-listpack-entries", "zset-max-ziplist-entries");
  c.add_memory("zset-max-listpack-value", &command.zset_limits.max_listpack_value, 0, kMax);
  c.add_alias("zset-max-listpack-value", "zset-max-ziplist-value");
  c.add_memory("stream-node-max-bytes", &command.stream_node_max_bytes, 0, kMax);
  c.add_integer("stream-node-max-entries", &command.stream_node_max_entries, 0, kMax);
  c.add_memory("hll-sparse-max-bytes", &command.hll_sparse_max_bytes, 0, kMax);
  c.add_integer("maxmemory-samples", &eviction.samples, 1, 64);
  c.add_integer("maxmemory-eviction-tenacity", &eviction.tenacity, 0, 100);
  // Class letters (notifications.h), printed back in Redis's order.
  c.add({"notify-keyspace-events", {}, 0,
         [&command] { return format_notify_flags(command.notify_keyspace_events); },
         [&command](std::string_view value, bool) -> std::string {
           uint32_t flags;
           if (!parse_notify_flags(value, &flags)) return std::string(kNotifyFlagsError);
           command.notify_keyspace_events = flags;
           return "";
         }});
}

}  // namespace keywarden
