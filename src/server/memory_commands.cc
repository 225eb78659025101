// MEMORY USAGE | STATS | DOCTOR | MALLOC-STATS | PURGE | HELP.
//
// USAGE reports what a key costs keywarden itself (Database::memory_usage: the entry's
// allocation, the value's payload, its share of the table and the expiry index), not an
// imitation of Redis's object sizes: the point of the figure is to compare keys and servers.
// Payload sizes are computed exactly, so SAMPLES is parsed and checked as Redis does but needs
// no sampling.
#include <malloc.h>

#include <algorithm>
#include <string>

#include "commands/arg_parser.h"
#include "commands/command_table.h"
#include "commands/context.h"
#include "commands/errors.h"
#include "common/number.h"
#include "server/connection.h"
#include "server/server.h"

namespace keywarden {
namespace {

void memory_usage_command(CommandContext& ctx) {
  for (size_t i = 3; i < ctx.args.size(); ++i) {
    if (!equals_ignore_case(ctx.args[i], "samples") || i + 1 >= ctx.args.size()) {
      return ctx.error(errors::kSyntax);
    }
    int64_t samples;
    if (!parse_int64(ctx.args[i + 1], &samples)) return ctx.error(errors::kNotInteger);
    if (samples < 0) return ctx.error(errors::kSyntax);
    ++i;
  }
  // As Redis: the key as stored, whether or not its deadline has passed.
  Entry* entry = ctx.db().find_raw(ctx.args[2]);
  if (entry == nullptr) {
    ctx.reply.null();
    return;
  }
  ctx.reply.integer(static_cast<int64_t>(ctx.db().memory_usage(entry)));
}

// Bytes the allocator has handed out and not taken back (glibc's view of live data).
size_t allocator_allocated() {
  struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

void memory_stats_command(CommandContext& ctx) {
  Server& server = Server::from(ctx);
  Keyspace& keyspace = ctx.server.keyspace();
  const size_t used = server.used_memory();
  const size_t peak = std::max(server.peak_memory(), used);
  const size_t startup = server.startup_memory();
  size_t clients = 0;
  for (const auto& [id, connection] : server.connections()) {
    clients += connection->query_buffer_capacity() + connection->output_size();
  }

  struct DbOverhead {
    int index;
    size_t main;
    size_t expires;
  };
  std::vector<DbOverhead> dbs;
  size_t overhead = startup + clients;
  size_t keys = 0;
  for (int i = 0; i < keyspace.database_count(); ++i) {
    Database& db = keyspace.db(i);
    if (db.size() == 0) continue;
    DbOverhead row{i, db.table().bucket_count() * sizeof(void*), db.expiry_index().memory_bytes()};
    overhead += row.main + row.expires;
    keys += db.size();
    dbs.push_back(row);
  }
  const size_t dataset = used > overhead ? used - overhead : 0;
  const size_t net = used > startup ? used - startup : 0;
  const size_t allocated = allocator_allocated();

  ctx.reply.map_header(27 + dbs.size());
  auto field = [&](std::string_view name, int64_t value) {
    ctx.reply.bulk(name);
    ctx.reply.integer(value);
  };
  auto ratio = [&](std::string_view name, double value) {
    ctx.reply.bulk(name);
    ctx.reply.double_value(value);
  };
  field("peak.allocated", static_cast<int64_t>(peak));
  field("total.allocated", static_cast<int64_t>(used));
  field("startup.allocated", static_cast<int64_t>(startup));
  field("replication.backlog", 0);
  field("clients.slaves", 0);
  field("clients.normal", static_cast<int64_t>(clients));
  field("cluster.links", 0);
  field("aof.buffer", 0);
  field("lua.caches", 0);
  field("functions.caches", 0);
  for (const DbOverhead& row : dbs) {
    ctx.reply.bulk("db." + std::to_string(row.index));
    ctx.reply.map_header(3);
    field("overhead.hashtable.main", static_cast<int64_t>(row.main));
    field("overhead.hashtable.expires", static_cast<int64_t>(row.expires));
    field("overhead.hashtable.slot-to-keys", 0);
  }
  field("overhead.total", static_cast<int64_t>(overhead));
  field("keys.count", static_cast<int64_t>(keys));
  field("keys.bytes-per-key", keys == 0 ? 0 : static_cast<int64_t>(net / keys));
  field("dataset.bytes", static_cast<int64_t>(dataset));
  ratio("dataset.percentage", net == 0 ? 0.0 : 100.0 * static_cast<double>(dataset) / net);
  ratio("peak.percentage", peak == 0 ? 0.0 : 100.0 * static_cast<double>(used) / peak);
  field("allocator.allocated", static_cast<int64_t>(allocated));
  field("allocator.active", static_cast<int64_t>(allocated));
  field("allocator.resident", static_cast<int64_t>(used));
  ratio("allocator-fragmentation.ratio", 1.0);
  field("allocator-fragmentation.bytes", 0);
  ratio("allocator-rss.ratio",
        allocated == 0 ? 1.0 : static_cast<double>(used) / static_cast<double>(allocated));
  field("allocator-rss.bytes", static_cast<int64_t>(used) - static_cast<int64_t>(allocated));
  ratio("rss-overhead.ratio", 1.0);
  field("rss-overhead.bytes", 0);
  ratio("fragmentation",
        allocated == 0 ? 1.0 : static_cast<double>(used) / static_cast<double>(allocated));
  field("fragmentation.bytes", static_cast<int64_t>(used) - static_cast<int64_t>(allocated));
}

void memory_doctor_command(CommandContext& ctx) {
  Server& server = Server::from(ctx);
  const size_t used = server.used_memory();
  std::string report;
  if (used < (5u << 20)) {
    report = "This instance holds too little data (" + std::to_string(used) +
             " bytes resident) for a memory diagnosis to mean anything. Load some data and "
             "ask again.";
  } else if (server.peak_memory() > used + used / 2) {
    report = "Peak memory (" + std::to_string(server.peak_memory()) +
             " bytes) is well above current usage (" + std::to_string(used) +
             " bytes): memory freed since the peak may still be held by the process. "
             "MEMORY PURGE returns what the allocator can give back.";
  } else {
    report = "No memory problems detected: " + std::to_string(used) + " bytes resident.";
  }
  ctx.reply.verbatim(report);
}

void memory_malloc_stats_command(CommandContext& ctx) {
  // What Redis answers when built without jemalloc.
  ctx.reply.verbatim("Stats not supported for the current allocator");
}

void memory_purge_command(CommandContext& ctx) {
  malloc_trim(0);
  ctx.reply.simple_string("OK");
}

void memory_help_command(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DOCTOR",
      "    Return memory problems reports.",
      "MALLOC-STATS",
      "    Return internal statistics report from the memory allocator.",
      "PURGE",
      "    Attempt to purge dirty pages for reclamation by the allocator.",
      "STATS",
      "    Return information about the memory usage of the server.",
      "USAGE <key> [SAMPLES <count>]",
      "    Return memory in bytes used by <key> and its value. Nested values are",
      "    sampled up to <count> times (default: 5, 0 means sample all).",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply_status_lines(kLines);
}

constexpr CommandSpec kMemorySubcommands[] = {
    {"doctor", 2, 0, 0, 0, 0, 0, memory_doctor_command, "server", "4.0.0",
     "Outputs a memory problems report.", "O(1)"},
    {"help", 2, kLoading | kStale, 0, 0, 0, 0, memory_help_command, "server", "4.0.0",
     "Returns helpful text about the different subcommands.", "O(1)"},
    {"malloc-stats", 2, 0, 0, 0, 0, 0, memory_malloc_stats_command, "server", "4.0.0",
     "Returns the allocator statistics.", "Depends on how much memory is allocated, could be "
     "slow"},
    {"purge", 2, 0, 0, 0, 0, 0, memory_purge_command, "server", "4.0.0",
     "Asks the allocator to release memory.", "Depends on how much memory is allocated, could "
     "be slow"},
    {"stats", 2, 0, 0, 0, 0, 0, memory_stats_command, "server", "4.0.0",
     "Returns details about memory usage.", "O(1)"},
    {"usage", -3, kReadonly, 2, 2, 1, kAclRead, memory_usage_command, "server", "4.0.0",
     "Estimates the memory usage of a key.", "O(N) where N is the number of samples."},
};

constexpr CommandSpec kMemoryCommands[] = {
    {"memory", -2, 0, 0, 0, 0, 0, nullptr, "server", "4.0.0",
     "A container for memory diagnostics commands.", "Depends on subcommand.",
     kMemorySubcommands},
};

}  // namespace

void register_memory_commands(CommandTable& table) { table.add(kMemoryCommands); }

}  // namespace keywarden
