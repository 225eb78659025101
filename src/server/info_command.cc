// INFO [section ...]: the server's figures in Redis 7.0.15's sections, order and field names,
// because monitoring tools and client libraries parse them by name (redis-py's info(),
// Redisson's version check, exporters that scrape every field).
//
// Fields for machinery keywarden does not have yet (forks, replicas, AOF, Lua, pub/sub,
// tracking, defragmentation) report the value Redis shows while that machinery is idle, so
// that parsers find every name; the figures keywarden does have are its own, measured the
// same way where it can be (rates over the last cron samples, exact average TTL from the
// expiry index instead of Redis's sampled estimate).
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <string>
#include <vector>

#include "commands/context.h"
#include "common/ascii.h"
#include "common/number.h"
#include "common/version.h"
#include "persistence/fork_child.h"
#include "scripting/script_engine.h"
#include "replication/primary.h"
#include "server/server.h"
#include "server/server_families.h"
#include "storage/memory_accounting.h"

namespace keywarden {
namespace {

// The sections INFO shows without arguments or with "default".
constexpr std::string_view kDefaultSections[] = {
    "server", "clients",     "memory",     "persistence", "stats",   "replication",
    "cpu",    "module_list", "errorstats", "cluster",     "keyspace"};

// Which sections one INFO call asked for. Names compare case-insensitively, as in Redis.
class SectionRequest {
 public:
  explicit SectionRequest(std::span<const std::string_view> args) {
    if (args.empty()) {
      names_.assign(std::begin(kDefaultSections), std::end(kDefaultSections));
      return;
    }
    for (std::string_view arg : args) {
      if (equals_ignore_case(arg, "default")) {
        names_.insert(names_.end(), std::begin(kDefaultSections), std::end(kDefaultSections));
      } else if (equals_ignore_case(arg, "all")) {
        all_ = true;
      } else if (equals_ignore_case(arg, "everything")) {
        all_ = true;
      } else {
        names_.push_back(arg);
      }
    }
  }

  bool wants(std::string_view section) const { return all_ || named(section); }
  // Asked for by name: keywarden's own sections, which "all" and "everything" leave out so
  // that those show Redis's sections exactly.
  bool named(std::string_view section) const {
    for (std::string_view name : names_) {
      if (equals_ignore_case(name, section)) return true;
    }
    return false;
  }

 private:
  bool all_ = false;  // "all" and "everything" differ only for module sections, and we have none
  std::vector<std::string_view> names_;
};

std::string format_timeval(const timeval& time) {
  char buffer[48];
  snprintf(buffer, sizeof(buffer), "%ld.%06ld", static_cast<long>(time.tv_sec),
           static_cast<long>(time.tv_usec));
  return buffer;
}

std::string executable_path() {
  char path[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return length > 0 ? std::string(path, static_cast<size_t>(length)) : std::string();
}

uint64_t average_sample(const uint64_t (&samples)[16]) {
  uint64_t sum = 0;
  for (uint64_t sample : samples) sum += sample;
  return sum / 16;
}

void server_section(InfoText& info, Server& server, int64_t now_us) {
  static const utsname kSystem = [] {
    utsname name{};
    uname(&name);
    return name;
  }();
  static const std::string kExecutable = executable_path();
  // A build id in Redis's spirit: a hash of what identifies this build.
  static const std::string kBuildId = [] {
    uint64_t hash = 1469598103934665603ull;
    for (char c : std::string(kKeywardenVersion) + __DATE__ + __TIME__) {
      hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    }
    char text[24];
    snprintf(text, sizeof(text), "%llx", static_cast<unsigned long long>(hash));
    return std::string(text);
  }();

  const int64_t uptime = now_us / 1'000'000 - server.start_time_ms() / 1000;
  info.field("redis_version", kRedisCompatibleVersion);
  info.field("keywarden_version", kKeywardenVersion);
  info.field("redis_git_sha1", "00000000");
  info.field("redis_git_dirty", 0);
  info.field("redis_build_id", kBuildId);
  info.field("redis_mode", "standalone");
  info.field("os", std::string(kSystem.sysname) + " " + kSystem.release + " " + kSystem.machine);
  info.field("arch_bits", static_cast<int>(sizeof(void*) * 8));
  info.field("monotonic_clock", "POSIX clock_gettime");
  info.field("multiplexing_api", "epoll");
  info.field("atomicvar_api", "c11-builtin");
  info.field("gcc_version", std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) +
                                "." + std::to_string(__GNUC_PATCHLEVEL__));
  info.field("process_id", static_cast<int64_t>(getpid()));
  info.field("process_supervised", "no");
  info.field("run_id", server.run_id());
  info.field("tcp_port", server.actual_port());
  info.field("server_time_usec", now_us);
  info.field("uptime_in_seconds", uptime);
  info.field("uptime_in_days", uptime / 86400);
  info.field("hz", server.settings().hz);
  info.field("configured_hz", server.settings().hz);
  // Redis's LRU clock: seconds, wrapping at 24 bits.
  info.field("lru_clock", (now_us / 1'000'000) & ((1 << 24) - 1));
  info.field("executable", kExecutable);
  info.field("config_file", server.config_file());
  info.field("io_threads_active", server.clients().io_threads_active() ? 1 : 0);
}

void memory_section(InfoText& info, Server& server) {
  const memory::AllocatorStats allocator = memory::allocator_stats();
  const size_t used = server.used_memory();
  const size_t rss = memory::process_rss();
  const size_t peak = std::max(server.peak_memory(), used);
  const size_t startup = server.startup_memory();

  size_t clients_memory = 0;
  for (const auto& [id, connection] : server.clients().connections()) {
    if (!connection->closed()) clients_memory += connection->memory_usage();
  }
  // Overhead is what is not the data itself: the start-up footprint, client buffers, and the
  // databases' bucket arrays and expiry indexes.
  size_t overhead = startup + clients_memory;
  Keyspace& keyspace = server.state().keyspace();
  for (int i = 0; i < keyspace.database_count(); ++i) {
    Database& db = keyspace.db(i);
    overhead += db.table().bucket_memory() + db.expiry_index().memory_bytes();
  }
  const size_t dataset = used > overhead ? used - overhead : 0;
  const size_t net_usage = used > startup ? used - startup : 1;

  const size_t allocated = allocator.allocated;
  const size_t active = allocator.active;
  const size_t resident = allocator.resident;
  auto ratio = [](size_t a, size_t b) {
    return b == 0 ? 0.0 : static_cast<double>(static_cast<float>(a) / static_cast<float>(b));
  };
  auto difference = [](size_t a, size_t b) {
    return static_cast<int64_t>(a) - static_cast<int64_t>(b);
  };

  const size_t system_memory = memory::total_system_memory();
  const int64_t maxmemory = server.state().eviction().settings().maxmemory;
  ConfigDirective* policy = server.config().find("maxmemory-policy");

  info.field("used_memory", used);
  info.field("used_memory_human", format_human_bytes(used));
  info.field("used_memory_rss", rss);
  info.field("used_memory_rss_human", format_human_bytes(rss));
  info.field("used_memory_peak", peak);
  info.field("used_memory_peak_human", format_human_bytes(peak));
  info.fixed2("used_memory_peak_perc", ratio(used * 100, peak), "%");
  info.field("used_memory_overhead", overhead);
  info.field("used_memory_startup", startup);
  info.field("used_memory_dataset", dataset);
  info.fixed2("used_memory_dataset_perc", ratio(dataset * 100, net_usage), "%");
  info.field("allocator_allocated", allocated);
  info.field("allocator_active", active);
  info.field("allocator_resident", resident);
  info.field("total_system_memory", system_memory);
  info.field("total_system_memory_human", format_human_bytes(system_memory));
  const ScriptEngine& scripts = server.scripting();
  const uint64_t lua_eval = scripts.lua_memory_bytes();
  const uint64_t lua_functions = scripts.functions_lua_memory_bytes();
  info.field("used_memory_lua", lua_eval);
  info.field("used_memory_vm_eval", lua_eval);
  info.field("used_memory_lua_human", format_human_bytes(lua_eval));
  info.field("used_memory_scripts_eval", scripts.cache_bytes());
  info.field("number_of_cached_scripts", scripts.cached_scripts());
  info.field("number_of_functions", scripts.function_count());
  info.field("number_of_libraries", scripts.library_count());
  info.field("used_memory_vm_functions", lua_functions);
  info.field("used_memory_vm_total", lua_eval + lua_functions);
  info.field("used_memory_vm_total_human", format_human_bytes(lua_eval + lua_functions));
  info.field("used_memory_functions", scripts.functions_bytes());
  const uint64_t script_bytes = scripts.cache_bytes() + scripts.functions_bytes();
  info.field("used_memory_scripts", script_bytes);
  info.field("used_memory_scripts_human", format_human_bytes(script_bytes));
  info.field("maxmemory", maxmemory);
  info.field("maxmemory_human", format_human_bytes(static_cast<uint64_t>(maxmemory)));
  info.field("maxmemory_policy", policy != nullptr ? policy->get() : "noeviction");
  info.fixed2("allocator_frag_ratio", ratio(active, allocated));
  info.field("allocator_frag_bytes", difference(active, allocated));
  info.fixed2("allocator_rss_ratio", ratio(resident, active));
  info.field("allocator_rss_bytes", difference(resident, active));
  info.fixed2("rss_overhead_ratio", ratio(rss, resident));
  info.field("rss_overhead_bytes", difference(rss, resident));
  info.fixed2("mem_fragmentation_ratio", ratio(rss, used));
  info.field("mem_fragmentation_bytes", difference(rss, used));
  info.field("mem_not_counted_for_evict", 0);
  const int64_t backlog = server.replication().primary().backlog_memory();
  info.field("mem_replication_backlog", backlog);
  info.field("mem_total_replication_buffers", backlog);
  info.field("mem_clients_slaves", 0);
  info.field("mem_clients_normal", clients_memory);
  info.field("mem_cluster_links", 0);
  info.field("mem_aof_buffer", server.aof().log().buffer_length());
  info.field("mem_allocator", memory::allocator_name());
  info.field("active_defrag_running", 0);
  const LazyFree& lazy_free = server.state().keyspace().lazy_free();
  info.field("lazyfree_pending_objects", lazy_free.pending_objects());
  info.field("lazyfreed_objects", lazy_free.freed_objects());
}

void persistence_section(InfoText& info, Server& server) {
  info.field("loading", server.is_loading() ? 1 : 0);
  info.field("async_loading", 0);
  info.field("current_cow_peak", 0);
  info.field("current_cow_size", 0);
  info.field("current_cow_size_age", 0);
  info.field("current_fork_perc", "0.00");
  info.field("current_save_keys_processed", 0);
  info.field("current_save_keys_total", 0);
}

void stats_section(InfoText& info, Server& server) {
  const NetworkStats& network = server.network_stats();
  const ClientStats& clients = server.clients().stats();
  const ServerStats& stats = server.state().stats();
  const ExpiryStats& expiry = server.state().keyspace().expiry_stats();
  info.field("total_connections_received", clients.total_connections_received);
  info.field("total_commands_processed", stats.total_commands_processed);
  info.field("instantaneous_ops_per_sec", average_sample(network.ops_samples));
  info.field("total_net_input_bytes", clients.net_input_bytes);
  info.field("total_net_output_bytes", clients.net_output_bytes);
  info.field("total_net_repl_input_bytes", 0);
  info.field("total_net_repl_output_bytes",
             server.replication().primary().stats().net_repl_output_bytes);
  info.fixed2("instantaneous_input_kbps",
              static_cast<float>(average_sample(network.input_samples)) / 1024);
  info.fixed2("instantaneous_output_kbps",
              static_cast<float>(average_sample(network.output_samples)) / 1024);
  info.field("instantaneous_input_repl_kbps", "0.00");
  info.field("instantaneous_output_repl_kbps", "0.00");
  info.field("rejected_connections", clients.rejected_connections);
  const ReplicationStats& replication = server.replication().primary().stats();
  info.field("sync_full", replication.sync_full);
  info.field("sync_partial_ok", replication.sync_partial_ok);
  info.field("sync_partial_err", replication.sync_partial_err);
  // Redis 7.4+ counts expired hash fields here (before expired_keys, as it prints them).
  info.field("expired_subkeys", expiry.expired_fields);
  info.field("expired_keys", expiry.expired_keys);
  info.fixed2("expired_stale_perc", expiry.stale_percent);
  info.field("expired_time_cap_reached_count", expiry.time_cap_reached_count);
  info.field("expire_cycle_cpu_milliseconds", expiry.cycle_cpu_us / 1000);
  info.field("evicted_keys", server.state().eviction().evicted_keys());
  info.field("evicted_clients", clients.evicted_clients);
  info.field("total_eviction_exceeded_time", server.state().eviction().total_exceeded_ms());
  info.field("current_eviction_exceeded_time", server.state().eviction().current_exceeded_ms());
  info.field("keyspace_hits", stats.keyspace_hits);
  info.field("keyspace_misses", stats.keyspace_misses);
  const PubSub& pubsub = server.state().pubsub();
  info.field("pubsub_channels", pubsub.channel_count());
  info.field("pubsub_patterns", pubsub.pattern_count());
  info.field("pubsubshard_channels", pubsub.shard_channel_count());
  info.field("latest_fork_usec", ForkChild::latest_fork_usec());
  info.field("total_forks", ForkChild::total_forks());
  info.field("migrate_cached_sockets",
             static_cast<int64_t>(server.rdb().migrate_connections().size()));
  info.field("slave_expires_tracked_keys", 0);
  info.field("active_defrag_hits", 0);
  info.field("active_defrag_misses", 0);
  info.field("active_defrag_key_hits", 0);
  info.field("active_defrag_key_misses", 0);
  info.field("total_active_defrag_time", 0);
  info.field("current_active_defrag_time", 0);
  const KeyTracking& tracking = server.state().tracking();
  info.field("tracking_total_keys", tracking.keys());
  info.field("tracking_total_items", tracking.items());
  info.field("tracking_total_prefixes", tracking.prefixes());
  info.field("unexpected_error_replies", 0);
  info.field("total_error_replies", stats.total_error_replies);
  info.field("dump_payload_sanitizations", stats.dump_payload_sanitizations);
  info.field("total_reads_processed", clients.reads_processed);
  info.field("total_writes_processed", clients.writes_processed);
  info.field("io_threaded_reads_processed", clients.io_threaded_reads_processed);
  info.field("io_threaded_writes_processed", clients.io_threaded_writes_processed);
  info.field("io_uring_reads_processed", clients.io_uring_reads_processed);
  info.field("io_uring_writes_processed", clients.io_uring_writes_processed);
  info.field("reply_buffer_shrinks", 0);
  info.field("reply_buffer_expands", 0);
}

void cpu_section(InfoText& info) {
  rusage self{}, children{}, thread{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  getrusage(RUSAGE_THREAD, &thread);
  info.field("used_cpu_sys", format_timeval(self.ru_stime));
  info.field("used_cpu_user", format_timeval(self.ru_utime));
  info.field("used_cpu_sys_children", format_timeval(children.ru_stime));
  info.field("used_cpu_user_children", format_timeval(children.ru_utime));
  info.field("used_cpu_sys_main_thread", format_timeval(thread.ru_stime));
  info.field("used_cpu_user_main_thread", format_timeval(thread.ru_utime));
}

// A command, then its subcommands, for every command in the table.
void commandstats_section(InfoText& info, Server& server) {
  server.state().commands().for_each([&](const Command& command) {
    const CommandStats& stats = command.stats;
    if (stats.calls == 0 && stats.failed_calls == 0 && stats.rejected_calls == 0) return;
    // Redis divides in float precision, and the rounding shows in the second decimal.
    const float per_call =
        stats.calls == 0 ? 0.0f
                         : static_cast<float>(stats.usec) / static_cast<float>(stats.calls);
    char figures[160];
    snprintf(figures, sizeof(figures),
             ":calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,failed_calls=%llu",
             static_cast<unsigned long long>(stats.calls),
             static_cast<unsigned long long>(stats.usec), static_cast<double>(per_call),
             static_cast<unsigned long long>(stats.rejected_calls),
             static_cast<unsigned long long>(stats.failed_calls));
    info.line("cmdstat_" + safe_info_name(command.full_name) + figures);
  });
}

void errorstats_section(InfoText& info, Server& server) {
  for (const auto& [code, count] : server.state().stats().error_counts) {
    info.line("errorstat_" + safe_info_name(code) + ":count=" + std::to_string(count));
  }
}

// Locks (keywarden's own section, only when asked for by name: INFO locks): the natively
// granted locks still held, the clients queued in LOCK.ACQUIRE, and the counters. Names whose
// key has gone (released by a script, a DEL) or whose queue has emptied are pruned on the way.
void locks_section(InfoText& info, Server& server, int64_t now_ms) {
  ServerState& state = server.state();
  LockTable& locks = state.locks();
  std::erase_if(locks.held(), [&](const LockTable::Name& name) {
    Database& db = state.keyspace().db(name.first);
    const Entry* entry = db.find_raw(name.second);
    return entry == nullptr || db.is_expired(entry, now_ms) ||
           entry->value.type() != ValueType::kHash;
  });
  size_t waiters = 0;
  std::erase_if(locks.contended(), [&](const LockTable::Name& name) {
    size_t queued = 0;
    for (const ClientSession* waiter : state.blocking().waiters(name.first, name.second)) {
      if (waiter->blocked.wakes_on_any_change()) ++queued;
    }
    waiters += queued;
    return queued == 0;
  });
  info.field("locks_held", locks.held().size());
  info.field("lock_waiters", waiters);
  info.field("lock_grants", locks.stats().grants);
  info.field("lock_handoffs", locks.stats().handoffs);
  info.field("lock_expired_while_held", locks.stats().expired_while_held);
}

void keyspace_section(InfoText& info, Server& server, int64_t now_ms) {
  Keyspace& keyspace = server.state().keyspace();
  for (int i = 0; i < keyspace.database_count(); ++i) {
    const Database& db = keyspace.db(i);
    const size_t keys = db.size();
    const size_t expires = db.volatile_count();
    if (keys == 0 && expires == 0) continue;
    // The exact mean of the remaining TTLs; keys past due but not yet reclaimed count as 0
    // through the clamp, like the already-expired keys Redis's estimate never sees.
    int64_t average_ttl = 0;
    if (expires > 0) {
      const __int128 remaining = db.expiry_index().deadline_sum() -
                                 static_cast<__int128>(now_ms) * static_cast<__int128>(expires);
      average_ttl = std::max<int64_t>(0, static_cast<int64_t>(remaining / expires));
    }
    info.line("db" + std::to_string(i) + ":keys=" + std::to_string(keys) +
              ",expires=" + std::to_string(expires) + ",avg_ttl=" + std::to_string(average_ttl));
  }
}

void info_command(CommandContext& ctx) {
  Server& server = Server::from(ctx);
  const SectionRequest request(ctx.args.subspan(1));
  const int64_t now_us = server.clock().wall_us();
  InfoText info;
  // Each section in Redis 7.0's order: its title, the lines INFO computes itself, then those
  // the services registered for it (InfoSections: the client registry's Clients, the RDB and
  // AOF services' Persistence lines, Latencystats…).
  auto section = [&](std::string_view name, std::string_view title, const auto& own_lines) {
    if (!request.wants(name)) return;
    info.section(title);
    own_lines();
    server.info_sections().write(name, info);
  };
  section("server", "Server", [&] { server_section(info, server, now_us); });
  section("clients", "Clients", [] {});
  section("memory", "Memory", [&] { memory_section(info, server); });
  section("persistence", "Persistence", [&] { persistence_section(info, server); });
  section("stats", "Stats", [&] { stats_section(info, server); });
  section("replication", "Replication", [] {});
  section("cpu", "CPU", [&] { cpu_section(info); });
  if (request.wants("module_list") || request.wants("modules")) info.section("Modules");
  section("commandstats", "Commandstats", [&] { commandstats_section(info, server); });
  section("errorstats", "Errorstats", [&] { errorstats_section(info, server); });
  section("latencystats", "Latencystats", [] {});
  section("cluster", "Cluster", [&] { info.field("cluster_enabled", 0); });
  section("keyspace", "Keyspace", [&] { keyspace_section(info, server, ctx.now_ms); });
  if (request.named("locks")) {
    info.section("Locks");
    locks_section(info, server, ctx.now_ms);
  }
  ctx.reply.verbatim(info.text());
}

constexpr CommandSpec kInfoCommands[] = {
    {"info", -1, kLoading | kStale, 0, 0, 0, kAclDangerous, info_command, "server", "1.0.0",
     "Get information and statistics about the server", "O(1)"},
};

}  // namespace

void register_info_commands(CommandTable& table) { table.add(kInfoCommands); }

}  // namespace keywarden
