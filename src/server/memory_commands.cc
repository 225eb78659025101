// MEMORY USAGE | STATS | DOCTOR | MALLOC-STATS | PURGE | HELP.
//
// USAGE reports what a key costs keywarden itself (Database::memory_usage: the entry's
// allocation, the value's payload, its share of the table and the expiry index), not an
// imitation of Redis's object sizes: the point of the figure is to compare keys and servers.
// Payload sizes are computed exactly, so SAMPLES is parsed and checked as Redis does but needs
// no sampling. STATS, DOCTOR, MALLOC-STATS and PURGE read the allocator through
// storage/memory_accounting.h, with INFO memory's formulas.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "commands/command_table.h"
#include "commands/context.h"
#include "commands/errors.h"
#include "common/ascii.h"
#include "common/number.h"
#include "scripting/script_engine.h"
#include "server/connection.h"
#include "server/server.h"
#include "storage/memory_accounting.h"

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

// The figures MEMORY STATS and MEMORY DOCTOR share, computed as INFO memory computes them.
struct MemoryFigures {
  struct DbOverhead {
    int index;
    size_t main;
    size_t expires;
  };
  size_t used = 0;
  size_t peak = 0;
  size_t startup = 0;
  size_t clients = 0;
  size_t client_count = 0;
  size_t lua_caches = 0;
  size_t functions_caches = 0;
  std::vector<DbOverhead> dbs;
  size_t overhead = 0;
  size_t keys = 0;
  size_t rss = 0;
  memory::AllocatorStats allocator;
};

MemoryFigures memory_figures(CommandContext& ctx) {
  Server& server = Server::from(ctx);
  Keyspace& keyspace = ctx.server.keyspace();
  MemoryFigures figures;
  figures.allocator = memory::allocator_stats();
  figures.rss = memory::process_rss();
  figures.used = server.used_memory();
  figures.peak = std::max(server.peak_memory(), figures.used);
  figures.startup = server.startup_memory();
  for (const auto& [id, connection] : server.clients().connections()) {
    if (connection->closed()) continue;
    ++figures.client_count;
    figures.clients += sizeof(Connection) + connection->query_buffer_capacity() +
                       connection->output_capacity();
  }
  figures.lua_caches = server.scripting().cache_bytes();
  figures.functions_caches = server.scripting().functions_bytes();
  figures.overhead =
      figures.startup + figures.clients + figures.lua_caches + figures.functions_caches;
  for (int i = 0; i < keyspace.database_count(); ++i) {
    Database& db = keyspace.db(i);
    if (db.size() == 0) continue;
    MemoryFigures::DbOverhead row{i, db.table().bucket_memory(),
                                  db.expiry_index().memory_bytes()};
    figures.overhead += row.main + row.expires;
    figures.keys += db.size();
    figures.dbs.push_back(row);
  }
  return figures;
}

std::string format_fixed2(double value) {
  char text[32];
  snprintf(text, sizeof(text), "%.2f", value);
  return text;
}

double ratio(size_t a, size_t b) {
  return b == 0 ? 0.0 : static_cast<double>(static_cast<float>(a) / static_cast<float>(b));
}

int64_t difference(size_t a, size_t b) { return static_cast<int64_t>(a) - static_cast<int64_t>(b); }

void memory_stats_command(CommandContext& ctx) {
  const MemoryFigures m = memory_figures(ctx);
  const size_t dataset = m.used > m.overhead ? m.used - m.overhead : 0;
  const size_t net = m.used > m.startup ? m.used - m.startup : 0;

  ctx.reply.map_header(27 + m.dbs.size());
  auto field = [&](std::string_view name, int64_t value) {
    ctx.reply.bulk(name);
    ctx.reply.integer(value);
  };
  auto real = [&](std::string_view name, double value) {
    ctx.reply.bulk(name);
    ctx.reply.double_value(value);
  };
  field("peak.allocated", static_cast<int64_t>(m.peak));
  field("total.allocated", static_cast<int64_t>(m.used));
  field("startup.allocated", static_cast<int64_t>(m.startup));
  field("replication.backlog", 0);
  field("clients.slaves", 0);
  field("clients.normal", static_cast<int64_t>(m.clients));
  field("cluster.links", 0);
  field("aof.buffer", 0);
  field("lua.caches", static_cast<int64_t>(m.lua_caches));
  field("functions.caches", static_cast<int64_t>(m.functions_caches));
  for (const MemoryFigures::DbOverhead& row : m.dbs) {
    ctx.reply.bulk("db." + std::to_string(row.index));
    ctx.reply.map_header(3);
    field("overhead.hashtable.main", static_cast<int64_t>(row.main));
    field("overhead.hashtable.expires", static_cast<int64_t>(row.expires));
    field("overhead.hashtable.slot-to-keys", 0);
  }
  field("overhead.total", static_cast<int64_t>(m.overhead));
  field("keys.count", static_cast<int64_t>(m.keys));
  field("keys.bytes-per-key", m.keys == 0 ? 0 : static_cast<int64_t>(net / m.keys));
  field("dataset.bytes", static_cast<int64_t>(dataset));
  real("dataset.percentage", net == 0 ? 0.0 : 100.0 * static_cast<double>(dataset) / net);
  real("peak.percentage", m.peak == 0 ? 0.0 : 100.0 * static_cast<double>(m.used) / m.peak);
  field("allocator.allocated", static_cast<int64_t>(m.allocator.allocated));
  field("allocator.active", static_cast<int64_t>(m.allocator.active));
  field("allocator.resident", static_cast<int64_t>(m.allocator.resident));
  real("allocator-fragmentation.ratio", ratio(m.allocator.active, m.allocator.allocated));
  field("allocator-fragmentation.bytes", difference(m.allocator.active, m.allocator.allocated));
  real("allocator-rss.ratio", ratio(m.allocator.resident, m.allocator.active));
  field("allocator-rss.bytes", difference(m.allocator.resident, m.allocator.active));
  real("rss-overhead.ratio", ratio(m.rss, m.allocator.resident));
  field("rss-overhead.bytes", difference(m.rss, m.allocator.resident));
  real("fragmentation", ratio(m.rss, m.used));
  field("fragmentation.bytes", difference(m.rss, m.used));
}

// Redis's diagnosis, on the same figures: each finding needs both a ratio and an absolute
// amount (10 MB) to be worth reporting.
void memory_doctor_command(CommandContext& ctx) {
  const MemoryFigures m = memory_figures(ctx);
  constexpr int64_t kWorthReporting = 10 << 20;
  const double peak_ratio = ratio(m.peak, m.used);
  const double fragmentation = ratio(m.rss, m.used);
  const double allocator_fragmentation = ratio(m.allocator.active, m.allocator.allocated);
  const double allocator_rss = ratio(m.allocator.resident, m.allocator.active);
  const double rss_overhead = ratio(m.rss, m.allocator.resident);
  auto mb = [](int64_t bytes) { return std::to_string(bytes / (1 << 20)) + " MB"; };

  if (m.used < (5u << 20)) {
    ctx.reply.verbatim("This instance is empty or holds very little data (" +
                       std::to_string(m.used) +
                       " bytes allocated): a memory diagnosis would mean nothing yet. Load "
                       "some data and ask again.");
    return;
  }
  std::string report;
  auto finding = [&](const std::string& text) { report += " * " + text + "\n\n"; };
  if (peak_ratio > 1.5) {
    finding("Peak memory: at some point " + std::to_string(m.peak) +
            " bytes were allocated, " + format_fixed2(peak_ratio) +
            " times what is allocated now. RSS and the fragmentation figures below reflect "
            "that peak as long as the allocator keeps the pages; MEMORY PURGE hands back "
            "what it can.");
  }
  if (allocator_fragmentation > 1.1 && difference(m.allocator.active, m.allocator.allocated) >
                                           kWorthReporting) {
    finding("Allocator fragmentation: the pages holding data are " +
            format_fixed2(allocator_fragmentation) + " times the data (" +
            mb(difference(m.allocator.active, m.allocator.allocated)) +
            " of holes), typically after many keys of mixed sizes were deleted.");
  }
  if (allocator_rss > 1.1 &&
      difference(m.allocator.resident, m.allocator.active) > kWorthReporting) {
    finding("Allocator RSS overhead: " +
            mb(difference(m.allocator.resident, m.allocator.active)) +
            " of freed pages are still resident (ratio " + format_fixed2(allocator_rss) +
            "); MEMORY PURGE returns them.");
  }
  if (rss_overhead > 1.1 && difference(m.rss, m.allocator.resident) > kWorthReporting) {
    finding("Non-allocator RSS: the process holds " + mb(difference(m.rss, m.allocator.resident)) +
            " beyond what the allocator has (ratio " + format_fixed2(rss_overhead) + ").");
  }
  if (fragmentation > 1.4 && difference(m.rss, m.used) > kWorthReporting) {
    finding("High total RSS: the RSS is " + format_fixed2(fragmentation) +
            " times used_memory (" + mb(difference(m.rss, m.used)) + " more).");
  }
  if (m.client_count > 0 && m.clients / m.client_count > (200u << 10)) {
    finding("Big client buffers: clients hold " + std::to_string(m.clients / m.client_count) +
            " bytes each on average (CLIENT LIST shows which; big pipelines or slow readers).");
  }
  if (m.lua_caches > (1u << 20)) {
    finding("Many scripts: the EVAL script cache holds " + std::to_string(m.lua_caches) +
            " bytes; scripts built with literal arguments instead of KEYS/ARGV fill it "
            "(SCRIPT FLUSH empties it).");
  }
  if (report.empty()) {
    report = "No memory problems detected: " + std::to_string(m.used) + " bytes allocated, " +
             std::to_string(m.rss) + " bytes resident (ratio " + format_fixed2(fragmentation) +
             ").";
  } else {
    report = "Memory findings:\n\n" + report;
  }
  ctx.reply.verbatim(report);
}

void memory_malloc_stats_command(CommandContext& ctx) {
  ctx.reply.verbatim(memory::malloc_stats_text());
}

void memory_purge_command(CommandContext& ctx) {
  if (!memory::purge()) return ctx.error(errors::kPurgeFailed);
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
