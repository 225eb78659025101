// MONITOR, SLOWLOG and LATENCY: the diagnostics service's commands (diagnostics.h).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "commands/context.h"
#include "commands/errors.h"
#include "common/ascii.h"
#include "common/number.h"
#include "server/diagnostics.h"
#include "server/server.h"
#include "server/server_families.h"

namespace keywarden {
namespace {

// --- MONITOR -----------------------------------------------------------------------------------

void monitor_command(CommandContext& ctx) {
  Connection* connection = ctx.service<ClientRegistry>().connection(ctx.session.id);
  // A second MONITOR is ignored without a reply, as Redis ignores it.
  if (connection == nullptr || connection->monitor()) return;
  ctx.service<Diagnostics>().add_monitor(*connection);
  ctx.reply.simple_string("OK");
}

// --- SLOWLOG -----------------------------------------------------------------------------------

void slowlog_get_command(CommandContext& ctx) {
  if (ctx.args.size() > 3) return reply_subcommand_syntax_error(ctx);
  const std::deque<SlowlogEntry>& log = ctx.service<Diagnostics>().slowlog();
  int64_t count = 10;
  if (ctx.args.size() == 3) {
    if (!parse_int64(ctx.args[2], &count) || count < -1) return ctx.error(errors::kSlowlogCount);
    if (count == -1) count = static_cast<int64_t>(log.size());
  }
  const size_t shown = std::min(log.size(), static_cast<size_t>(count));
  ReplyWriter& reply = ctx.reply;
  reply.array_header(shown);
  for (size_t i = 0; i < shown; ++i) {
    const SlowlogEntry& entry = log[i];
    reply.array_header(6);
    reply.integer(static_cast<int64_t>(entry.id));
    reply.integer(entry.time_sec);
    reply.integer(entry.duration_us);
    reply.array_header(entry.args.size());
    for (const std::string& arg : entry.args) reply.bulk(arg);
    reply.bulk(entry.peer);
    reply.bulk(entry.name);
  }
}

void slowlog_len_command(CommandContext& ctx) {
  ctx.reply.integer(static_cast<int64_t>(ctx.service<Diagnostics>().slowlog().size()));
}

void slowlog_reset_command(CommandContext& ctx) {
  ctx.service<Diagnostics>().slowlog().clear();
  ctx.reply.simple_string("OK");
}

void slowlog_help_command(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET [<count>]",
      "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
      "    Entries are made of:",
      "    id, timestamp, time in microseconds, arguments array, client IP and port,",
      "    client name",
      "LEN",
      "    Return the length of the slowlog.",
      "RESET",
      "    Reset the slowlog.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply_status_lines(kLines);
}

// --- LATENCY -----------------------------------------------------------------------------------

int64_t now_seconds(CommandContext& ctx) { return ctx.server.clock().wall_ms() / 1000; }

void latency_latest_command(CommandContext& ctx) {
  const auto& events = ctx.service<Diagnostics>().latency_events();
  ctx.reply.array_header(events.size());
  for (const auto& [name, event] : events) {
    ctx.reply.array_header(4);
    ctx.reply.bulk(name);
    ctx.reply.integer(event.history.empty() ? 0 : event.history.back().time_sec);
    ctx.reply.integer(event.history.empty() ? 0 : event.history.back().latency_ms);
    ctx.reply.integer(event.max_ms);
  }
}

void latency_history_command(CommandContext& ctx) {
  // Event names are matched exactly here (and by GRAPH), but without case by RESET, as in Redis.
  const auto& events = ctx.service<Diagnostics>().latency_events();
  auto it = events.find(std::string(ctx.args[2]));
  if (it == events.end()) return ctx.reply.array_header(0);
  ctx.reply.array_header(it->second.history.size());
  for (const LatencySample& sample : it->second.history) {
    ctx.reply.array_header(2);
    ctx.reply.integer(sample.time_sec);
    ctx.reply.integer(sample.latency_ms);
  }
}

void latency_reset_command(CommandContext& ctx) {
  auto& events = ctx.service<Diagnostics>().latency_events();
  int64_t resets = 0;
  if (ctx.args.size() == 2) {
    resets = static_cast<int64_t>(events.size());
    events.clear();
  } else {
    for (size_t i = 2; i < ctx.args.size(); ++i) {
      for (auto it = events.begin(); it != events.end();) {
        if (equals_ignore_case(it->first, ctx.args[i])) {
          it = events.erase(it);
          ++resets;
        } else {
          ++it;
        }
      }
    }
  }
  ctx.reply.integer(resets);
}

struct LatencyStats {
  int64_t samples = 0;
  int64_t average = 0;
  int64_t mean_deviation = 0;
  int64_t period = 0;  // seconds from the oldest sample to now, at least 1
};

LatencyStats analyze(const LatencyEvent& event, int64_t now_sec) {
  LatencyStats stats;
  if (event.history.empty()) return stats;
  int64_t sum = 0, oldest = event.history.front().time_sec;
  for (const LatencySample& sample : event.history) {
    sum += sample.latency_ms;
    oldest = std::min(oldest, sample.time_sec);
  }
  stats.samples = static_cast<int64_t>(event.history.size());
  stats.average = sum / stats.samples;
  stats.period = std::max<int64_t>(now_sec - oldest, 1);
  int64_t deviation = 0;
  for (const LatencySample& sample : event.history) {
    deviation += std::abs(stats.average - sample.latency_ms);
  }
  stats.mean_deviation = deviation / stats.samples;
  return stats;
}

// Whether the kernel backs this process with transparent huge pages (AnonHugePages in smaps),
// which the doctor warns about as Redis does.
bool uses_anonymous_huge_pages() {
  std::ifstream smaps("/proc/self/smaps_rollup");
  std::string field;
  while (smaps >> field) {
    if (field == "AnonHugePages:") {
      long long kilobytes = 0;
      smaps >> kilobytes;
      return kilobytes > 0;
    }
  }
  return false;
}

// LATENCY DOCTOR's report: the events, then the advice they call for, in Redis's words.
std::string latency_report(Diagnostics& diagnostics, int server_hz, int64_t now_sec) {
  const auto& events = diagnostics.latency_events();
  const DiagnosticsSettings& settings = diagnostics.settings();
  if (events.empty() && settings.latency_monitor_threshold == 0) {
    return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis "
           "instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in "
           "order to enable it. If we weren't in a deep space mission I'd suggest to take a look "
           "at https://redis.io/topics/latency-monitor.\n";
  }
  bool slowlog_enabled = false, slowlog_tuning = false, slowlog_inspect = false;
  bool scheduler = false, local_disk = false, ssd = false, data_writeback = false;
  bool disk_contention = false, no_appendfsync = false, write_load_info = false, hz = false;
  bool large_objects = false, mass_eviction = false, disable_thp = false;
  int advices = 0;
  std::string report;
  int number = 0;
  for (const auto& [name, event] : events) {
    ++number;
    if (number == 1) {
      report += "Dave, I have observed latency spikes in this Redis instance. You don't mind "
                "talking about it, do you Dave?\n\n";
    }
    const LatencyStats stats = analyze(event, now_sec);
    char line[512];
    std::snprintf(line, sizeof(line),
                  "%d. %s: %lld latency spikes (average %lldms, mean deviation %lldms, period "
                  "%.2f sec). Worst all time event %lldms.",
                  number, name.c_str(), static_cast<long long>(stats.samples),
                  static_cast<long long>(stats.average),
                  static_cast<long long>(stats.mean_deviation),
                  stats.samples ? static_cast<double>(stats.period) / stats.samples : 0.0,
                  static_cast<long long>(event.max_ms));
    report += line;
    auto is = [&name = name](std::string_view other) { return equals_ignore_case(name, other); };
    if (is("command")) {
      if (settings.slowlog_log_slower_than < 0) {
        slowlog_enabled = true;
        ++advices;
      } else if (settings.slowlog_log_slower_than / 1000 > settings.latency_monitor_threshold) {
        slowlog_tuning = true;
        ++advices;
      }
      slowlog_inspect = large_objects = true;
      advices += 2;
    }
    if (is("fast-command")) {
      scheduler = true;
      ++advices;
    }
    if (is("aof-write-pending-fsync")) {
      local_disk = disk_contention = ssd = data_writeback = true;
      advices += 4;
    }
    if (is("aof-write-active-child")) {
      no_appendfsync = data_writeback = ssd = true;
      advices += 3;
    }
    if (is("aof-write-alone")) {
      local_disk = data_writeback = ssd = true;
      advices += 3;
    }
    // Redis counts this one but words it only under appendfsync always, which needs an AOF.
    if (is("aof-fsync-always")) ++advices;
    if (is("aof-fstat") || is("rdb-unlink-temp-file")) {
      disk_contention = local_disk = true;
      advices += 2;
    }
    if (is("aof-rewrite-diff-write") || is("aof-rename")) {
      write_load_info = data_writeback = ssd = local_disk = true;
      advices += 4;
    }
    if (is("expire-cycle")) {
      hz = large_objects = true;
      advices += 2;
    }
    if (is("eviction-del")) {
      large_objects = true;
      ++advices;
    }
    if (is("eviction-cycle")) {
      mass_eviction = true;
      ++advices;
    }
    report += '\n';
  }
  if (uses_anonymous_huge_pages()) {
    disable_thp = true;
    ++advices;
  }

  if (number == 0 && advices == 0) {
    report += "Dave, no latency spike was observed during the lifetime of this Redis instance, "
              "not in the slightest bit. I honestly think you ought to sit down calmly, take a "
              "stress pill, and think things over.\n";
    return report;
  }
  if (number > 0 && advices == 0) {
    report += "\nWhile there are latency events logged, I'm not able to suggest any easy fix. "
              "Please use the Redis community to get some help, providing this report in your "
              "help request.\n";
    return report;
  }
  report += "\nI have a few advices for you:\n\n";
  const std::string threshold_us = std::to_string(settings.latency_monitor_threshold * 1000);
  if (slowlog_enabled) {
    report += "- There are latency issues with potentially slow commands you are using. Try to "
              "enable the Slow Log Redis feature using the command 'CONFIG SET "
              "slowlog-log-slower-than " +
              threshold_us +
              "'. If the Slow log is disabled Redis is not able to log slow commands execution "
              "for you.\n";
  }
  if (slowlog_tuning) {
    report += "- Your current Slow Log configuration only logs events that are slower than your "
              "configured latency monitor threshold. Please use 'CONFIG SET "
              "slowlog-log-slower-than " +
              threshold_us + "'.\n";
  }
  if (slowlog_inspect) {
    report += "- Check your Slow Log to understand what are the commands you are running which "
              "are too slow to execute. Please check https://redis.io/commands/slowlog for more "
              "information.\n";
  }
  if (scheduler) {
    report += "- The system is slow to execute Redis code paths not containing system calls. "
              "This usually means the system does not provide Redis CPU time to run for long "
              "periods. You should try to:\n"
              "  1) Lower the system load.\n"
              "  2) Use a computer / VM just for Redis if you are running other software in the "
              "same system.\n"
              "  3) Check if you have a \"noisy neighbour\" problem.\n"
              "  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency "
              "in your system.\n"
              "  5) Check if the problem is allocator-related by recompiling Redis with "
              "MALLOC=libc, if you are using Jemalloc. However this may create fragmentation "
              "problems.\n";
  }
  if (local_disk) {
    report += "- It is strongly advised to use local disks for persistence, especially if you "
              "are using AOF. Remote disks provided by platform-as-a-service providers are known "
              "to be slow.\n";
  }
  if (ssd) {
    report += "- SSD disks are able to reduce fsync latency, and total time needed for "
              "snapshotting and AOF log rewriting (resulting in smaller memory usage and smaller "
              "final AOF rewrite buffer flushes). With extremely high write load SSD disks can "
              "be a good option. However Redis should perform reasonably with high load using "
              "normal disks. Use this advice as a last resort.\n";
  }
  if (data_writeback) {
    report += "- Mounting ext3/4 filesystems with data=writeback can provide a performance "
              "boost compared to data=ordered, however this mode of operation provides less "
              "guarantees, and sometimes it can happen that after a hard crash the AOF file will "
              "have a half-written command at the end and will require to be repaired before "
              "Redis restarts.\n";
  }
  if (disk_contention) {
    report += "- Try to lower the disk contention. This is often caused by other disk intensive "
              "processes running in the same computer (including other Redis instances).\n";
  }
  if (no_appendfsync) {
    report += "- Assuming from the point of view of data safety this is viable in your "
              "environment, you could try to enable the 'no-appendfsync-on-rewrite' option, so "
              "that fsync will not be performed while there is a child rewriting the AOF file or "
              "producing an RDB file (the moment where there is high disk contention).\n";
  }
  if (write_load_info) {
    report += "- Latency during the AOF atomic rename operation or when the final difference is "
              "flushed to the AOF file at the end of the rewrite, sometimes is caused by very "
              "high write load, causing the AOF buffer to get very large. If possible try to "
              "send less commands to accomplish the same work, or use Lua scripts to group "
              "multiple operations into a single EVALSHA call.\n";
  }
  if (hz && server_hz < 100) {
    report += "- In order to make the Redis keys expiring process more incremental, try to set "
              "the 'hz' configuration parameter to 100 using 'CONFIG SET hz 100'.\n";
  }
  if (large_objects) {
    report += "- Deleting, expiring or evicting (because of maxmemory policy) large objects is a "
              "blocking operation. If you have very large objects that are often deleted, "
              "expired, or evicted, try to fragment those objects into multiple smaller "
              "objects.\n";
  }
  if (mass_eviction) {
    report += "- Sudden changes to the 'maxmemory' setting via 'CONFIG SET', or allocation of "
              "large objects via sets or sorted sets intersections, STORE option of SORT, Redis "
              "Cluster large keys migrations (RESTORE command), may create sudden memory "
              "pressure forcing the server to block trying to evict keys. \n";
  }
  if (disable_thp) {
    report += "- I detected a non zero amount of anonymous huge pages used by your process. "
              "This creates very serious latency events in different conditions, especially "
              "when Redis is persisting on disk. To disable THP support use the command 'echo "
              "never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it "
              "into /etc/rc.local so that the command will be executed again after a reboot. "
              "Note that even if you have already disabled THP, you still need to restart the "
              "Redis process to get rid of the huge pages already created.\n";
  }
  return report;
}

void latency_doctor_command(CommandContext& ctx) {
  ctx.reply.verbatim(latency_report(ctx.service<Diagnostics>(), Server::from(ctx).settings().hz,
                                   now_seconds(ctx)));
}

// An ASCII sparkline as LATENCY GRAPH draws it: each sample is one column of `kRows` rows
// (three levels per row, "_o#", with '|' filling the rows below the top), then a blank row and
// the sample's age ("5s", "3m", "2h", "1d") written downwards; over 80 samples wrap.
std::string render_sparkline(const std::vector<int64_t>& values,
                             const std::vector<std::string>& labels) {
  constexpr int kRows = 4;
  constexpr size_t kColumns = 80;
  constexpr std::string_view kLevels = "_o#";
  constexpr int kLevelCount = 3;
  std::string out;
  if (values.empty()) return out;
  double low = static_cast<double>(values[0]), high = low;
  for (int64_t v : values) {
    low = std::min(low, static_cast<double>(v));
    high = std::max(high, static_cast<double>(v));
  }
  double span = high - low;
  if (span == 0) span = 1;
  const int steps = kLevelCount * kRows;
  for (size_t start = 0; start < values.size(); start += kColumns) {
    if (start != 0) out += '\n';
    const size_t width = std::min(kColumns, values.size() - start);
    size_t longest_label = 0;
    for (size_t j = 0; j < width; ++j) {
      longest_label = std::max(longest_label, labels[start + j].size());
    }
    for (int row = 0; row < kRows; ++row) {
      std::string line(width, ' ');
      for (size_t j = 0; j < width; ++j) {
        // Truncate the scaled sample before dividing, as the reference rendering does.
        const double relative = static_cast<double>(values[start + j]) - low;
        int step = static_cast<int>(static_cast<int>(relative * steps) / span);
        step = std::clamp(step, 0, steps - 1);
        const int level = step - (kRows - row - 1) * kLevelCount;
        if (level >= 0 && level < kLevelCount) {
          line[j] = kLevels[level];
        } else if (level >= kLevelCount) {
          line[j] = '|';
        }
      }
      out += line;
      out += '\n';
    }
    // A blank row separates the graph from its labels; every sample has one.
    out += std::string(width, ' ');
    out += '\n';
    for (size_t row = 0; row < longest_label; ++row) {
      std::string line(width, ' ');
      for (size_t j = 0; j < width; ++j) {
        const std::string& label = labels[start + j];
        if (row < label.size()) line[j] = label[row];
      }
      out += line;
      out += '\n';
    }
  }
  return out;
}

void latency_graph_command(CommandContext& ctx) {
  const auto& events = ctx.service<Diagnostics>().latency_events();
  auto it = events.find(std::string(ctx.args[2]));
  if (it == events.end()) {
    return ctx.error("ERR No samples available for event '" + std::string(ctx.args[2]) + "'");
  }
  const LatencyEvent& event = it->second;
  const int64_t now_sec = now_seconds(ctx);
  std::vector<int64_t> values;
  std::vector<std::string> labels;
  int64_t low = 0, high = 0;
  for (const LatencySample& sample : event.history) {
    if (values.empty()) {
      low = high = sample.latency_ms;
    } else {
      low = std::min(low, sample.latency_ms);
      high = std::max(high, sample.latency_ms);
    }
    values.push_back(sample.latency_ms);
    const int64_t age = now_sec - sample.time_sec;
    char label[32];
    if (age < 60) {
      std::snprintf(label, sizeof(label), "%llds", static_cast<long long>(age));
    } else if (age < 3600) {
      std::snprintf(label, sizeof(label), "%lldm", static_cast<long long>(age / 60));
    } else if (age < 86400) {
      std::snprintf(label, sizeof(label), "%lldh", static_cast<long long>(age / 3600));
    } else {
      std::snprintf(label, sizeof(label), "%lldd", static_cast<long long>(age / 86400));
    }
    labels.emplace_back(label);
  }
  char header[256];
  std::snprintf(header, sizeof(header), "%s - high %lld ms, low %lld ms (all time high %lld ms)\n",
                it->first.c_str(), static_cast<long long>(high), static_cast<long long>(low),
                static_cast<long long>(event.max_ms));
  std::string graph = header;
  graph += std::string(80, '-');
  graph += '\n';
  graph += render_sparkline(values, labels);
  ctx.reply.verbatim(graph);
}

// One command's histogram as Redis 7.0 replies it: its sample count, then the cumulative
// count at each power-of-two step from 1024 ns, keyed by the step's upper bound in
// microseconds; steps that add nothing are left out. Redis walks its HDR histogram with a
// logarithmic iterator: a step reports when the walk reaches the first bucket at or above
// the step, that bucket included, and names the bucket's highest value. Our buckets are the
// same as that histogram's (LatencyHistogram), so the walk reduces to sums.
void write_command_cdf(ReplyWriter& reply, const LatencyHistogram& histogram) {
  reply.map_header(2);
  reply.bulk("calls");
  reply.integer(static_cast<int64_t>(histogram.total));
  reply.bulk("histogram_usec");
  std::vector<std::pair<int64_t, uint64_t>> steps;
  uint64_t cumulative = 0;
  auto bucket = histogram.buckets.begin();
  for (int64_t step = 1024; cumulative < histogram.total; step *= 2) {
    const int64_t bucket_end = step + step / 128;  // the first bucket at the step, exclusive
    const uint64_t before = cumulative;
    for (; bucket != histogram.buckets.end() && bucket->first < bucket_end; ++bucket) {
      cumulative += bucket->second;
    }
    if (cumulative > before) steps.emplace_back((bucket_end - 1) / 1000, cumulative);
  }
  reply.map_header(steps.size());
  for (const auto& [micros, count] : steps) {
    reply.integer(micros);
    reply.integer(static_cast<int64_t>(count));
  }
}

// LATENCY HISTOGRAM [command ...]: every command with samples, or the ones named (a container
// brings its subcommands with samples; unknown names are skipped), as a map by full name.
void latency_histogram_command(CommandContext& ctx) {
  const auto& histograms = ctx.service<Diagnostics>().command_latency();
  std::vector<const Command*> chosen;
  auto take = [&](const Command& command) {
    if (histograms.count(&command) != 0) chosen.push_back(&command);
  };
  const CommandTable& table = ctx.server.commands();
  if (ctx.args.size() == 2) {
    table.for_each(take);
  } else {
    for (size_t i = 2; i < ctx.args.size(); ++i) {
      const std::string_view name = ctx.args[i];
      const size_t bar = name.find('|');
      const Command* command = table.find(name.substr(0, bar));
      if (command != nullptr && bar != std::string_view::npos) {
        std::vector<std::string_view> pair{name.substr(0, bar), name.substr(bar + 1)};
        command = command->is_container() ? table.find_for_args(pair) : nullptr;
      }
      if (command == nullptr) continue;
      take(*command);
      for (const auto& [sub_name, sub] : command->subcommands) take(*sub);
    }
  }
  ctx.reply.map_header(chosen.size());
  for (const Command* command : chosen) {
    ctx.reply.bulk(command->full_name);
    write_command_cdf(ctx.reply, histograms.at(command));
  }
}

void latency_help_command(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DOCTOR",
      "    Return a human readable latency analysis report.",
      "GRAPH <event>",
      "    Return an ASCII latency graph for the <event> class.",
      "HISTORY <event>",
      "    Return time-latency samples for the <event> class.",
      "LATEST",
      "    Return the latest latency samples for all events.",
      "RESET [<event> ...]",
      "    Reset latency data of one or more <event> classes.",
      "    (default: reset all data for all event classes)",
      "HISTOGRAM [COMMAND ...]",
      "    Return a cumulative distribution of latencies in the format of a histogram for the "
      "specified command names.",
      "    If no commands are specified then all histograms are replied.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply_status_lines(kLines);
}

// --- Table -------------------------------------------------------------------------------------

constexpr uint32_t kAdminFlags = kAdmin | kNoScript | kLoading | kStale;

constexpr CommandSpec kSlowlogSubcommands[] = {
    {"get", -2, kAdmin | kLoading | kStale, 0, 0, 0, 0, slowlog_get_command, "server", "2.2.12",
     "Get the slow log's entries", "O(N) where N is the number of entries returned"},
    {"help", 2, kLoading | kStale, 0, 0, 0, 0, slowlog_help_command, "server", "6.2.0",
     "Show helpful text about the different subcommands", "O(1)"},
    {"len", 2, kAdmin | kLoading | kStale, 0, 0, 0, 0, slowlog_len_command, "server", "2.2.12",
     "Get the slow log's length", "O(1)"},
    {"reset", 2, kAdmin | kLoading | kStale, 0, 0, 0, 0, slowlog_reset_command, "server",
     "2.2.12", "Clear all entries from the slow log",
     "O(N) where N is the number of entries in the slowlog"},
};

constexpr CommandSpec kLatencySubcommands[] = {
    {"doctor", 2, kAdminFlags, 0, 0, 0, 0, latency_doctor_command, "server", "2.8.13",
     "Return a human readable latency analysis report.", "O(1)"},
    {"graph", 3, kAdminFlags, 0, 0, 0, 0, latency_graph_command, "server", "2.8.13",
     "Return a latency graph for the event.", "O(1)"},
    {"help", 2, kLoading | kStale, 0, 0, 0, 0, latency_help_command, "server", "2.8.13",
     "Show helpful text about the different subcommands.", "O(1)"},
    {"histogram", -2, kAdminFlags, 0, 0, 0, 0, latency_histogram_command, "server", "7.0.0",
     "Return the cumulative distribution of latencies of a subset of commands or all.",
     "O(N) where N is the number of commands with latency information being retrieved."},
    {"history", 3, kAdminFlags, 0, 0, 0, 0, latency_history_command, "server", "2.8.13",
     "Return timestamp-latency samples for the event.", "O(1)"},
    {"latest", 2, kAdminFlags, 0, 0, 0, 0, latency_latest_command, "server", "2.8.13",
     "Return the latest latency samples for all events.", "O(1)"},
    {"reset", -2, kAdminFlags, 0, 0, 0, 0, latency_reset_command, "server", "2.8.13",
     "Reset latency data for one or more events.", "O(1)"},
};

constexpr CommandSpec kDiagnosticsCommands[] = {
    {"monitor", 1, kAdminFlags, 0, 0, 0, 0, monitor_command, "server", "1.0.0",
     "Listen for all requests received by the server in real time", ""},
    {"slowlog", -2, 0, 0, 0, 0, 0, nullptr, "server", "2.2.12", "A container for slow log commands",
     "Depends on subcommand.", kSlowlogSubcommands},
    {"latency", -2, 0, 0, 0, 0, 0, nullptr, "server", "2.8.13",
     "A container for latency diagnostics commands", "Depends on subcommand.",
     kLatencySubcommands},
};

}  // namespace

void register_diagnostics_commands(CommandTable& table) { table.add(kDiagnosticsCommands); }

}  // namespace keywarden
