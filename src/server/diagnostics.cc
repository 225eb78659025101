// The diagnostics service (diagnostics.h): slow log, latency monitor, latencystats, MONITOR.
#include "server/diagnostics.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <sstream>

#include "commands/command_table.h"
#include "commands/config_registry.h"
#include "commands/info_text.h"
#include "common/ascii.h"
#include "common/number.h"
#include "scripting/script_engine.h"
#include "server/server.h"

namespace keywarden {
namespace {

constexpr size_t kSlowlogMaxArgs = 32;
constexpr size_t kSlowlogMaxArgLength = 128;
constexpr size_t kLatencyHistory = 160;

constexpr std::string_view kRedacted = "(redacted)";

std::string parse_percentiles(std::string_view text, std::vector<double>* out) {
  std::vector<double> values;
  std::istringstream words{std::string(text)};
  std::string word;
  while (words >> word) {
    double value;
    if (!parse_double(word, &value)) return "Invalid latency-tracking-info-percentiles parameters";
    if (!(value >= 0.0 && value <= 100.0)) {
      return "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";
    }
    values.push_back(value);
  }
  *out = std::move(values);
  return "";
}

}  // namespace

// Which arguments Redis 7.0 shows as "(redacted)" in the slow log and the MONITOR feed: every
// argument of AUTH; the user and password after HELLO's AUTH; every argument of ACL SETUSER
// from the username on; MIGRATE's AUTH password and AUTH2 user and password; the values CONFIG
// SET gives sensitive directives (requirepass, masterauth…). Like Redis, options are read as far
// as the command would parse them.
bool Diagnostics::is_redacted(std::span<const std::string_view> args, size_t index) {
  const std::string_view name = args[0];
  if (equals_ignore_case(name, "auth")) return index >= 1;
  if (equals_ignore_case(name, "acl")) {
    return args.size() >= 3 && equals_ignore_case(args[1], "setuser") && index >= 2;
  }
  if (equals_ignore_case(name, "config")) {
    if (args.size() < 4 || !equals_ignore_case(args[1], "set") || index < 3) return false;
    for (size_t i = 2; i + 1 < args.size(); i += 2) {
      if (index != i + 1) continue;
      const ConfigDirective* directive = server_.config().find(args[i]);
      return directive != nullptr && (directive->flags & kConfigSensitive) != 0;
    }
    return false;
  }
  if (equals_ignore_case(name, "migrate")) {
    for (size_t i = 6; i < args.size(); ++i) {
      const size_t more = args.size() - 1 - i;
      if (equals_ignore_case(args[i], "copy") || equals_ignore_case(args[i], "replace")) continue;
      if (equals_ignore_case(args[i], "auth") && more >= 1) {
        if (index == i + 1) return true;
        i += 1;
      } else if (equals_ignore_case(args[i], "auth2") && more >= 2) {
        if (index == i + 1 || index == i + 2) return true;
        i += 2;
      } else {
        break;  // KEYS (the rest are keys) or a syntax error
      }
    }
    return false;
  }
  if (!equals_ignore_case(name, "hello")) return false;
  for (size_t i = 2; i < args.size(); ++i) {
    const size_t more = args.size() - 1 - i;
    if (equals_ignore_case(args[i], "auth") && more >= 2) {
      if (index == i + 1 || index == i + 2) return true;
      i += 2;
    } else if (equals_ignore_case(args[i], "setname") && more >= 1) {
      i += 1;
    } else {
      break;  // HELLO stops at a bad option; what follows was never read
    }
  }
  return false;
}

Diagnostics::Diagnostics(Server& server) : server_(server) {
  server_.state().services().provide<Diagnostics>(this);
}

Diagnostics::~Diagnostics() {
  if (server_.state().services().find<Diagnostics>() == this) {
    server_.state().services().provide<Diagnostics>(nullptr);
  }
}

void Diagnostics::install(ServiceSetup& setup) {
  register_diagnostics_commands(setup.commands);
  register_config(setup.config);
  setup.info.add("latencystats", 0, [this](InfoText& info) {
    if (!settings_.latency_tracking) return;
    const std::vector<double>& percentiles = settings_.latency_tracking_percentiles;
    server_.state().commands().for_each([&](const Command& command) {
      auto it = command_latency_.find(&command);
      if (it == command_latency_.end()) return;
      std::string text = "latency_percentiles_usec_" + safe_info_name(command.full_name) + ":";
      for (size_t i = 0; i < percentiles.size(); ++i) {
        if (i > 0) text += ',';
        char value[48];
        snprintf(value, sizeof(value), "=%.3f",
                 static_cast<double>(it->second.value_at_percentile(percentiles[i])) / 1000.0);
        text += "p" + format_percentile(percentiles[i]) + value;
      }
      info.line(text);
    });
  });
}

void Diagnostics::register_config(ConfigRegistry& c) {
  constexpr int64_t kMax = INT64_MAX;
  c.add_integer("slowlog-log-slower-than", &settings_.slowlog_log_slower_than, -1, kMax);
  c.add_integer("slowlog-max-len", &settings_.slowlog_max_len, 0, kMax);
  c.add_integer("latency-monitor-threshold", &settings_.latency_monitor_threshold, 0, kMax);
  c.add_bool("latency-tracking", &settings_.latency_tracking);
  c.add({"latency-tracking-info-percentiles", {}, kConfigMultiArg,
         [this] {
           std::string text;
           for (double value : settings_.latency_tracking_percentiles) {
             if (!text.empty()) text += ' ';
             text += format_percentile(value);
           }
           return text;
         },
         [this](std::string_view value, bool) {
           return parse_percentiles(value, &settings_.latency_tracking_percentiles);
         },
         ""});
}

void Diagnostics::reset_stats() {
  command_latency_.clear();
  latency_events_.clear();
}

void Diagnostics::after_command(Connection& connection, std::span<const std::string_view> args,
                                const Command& command, int64_t duration_us) {
  if (settings_.latency_tracking) command_latency_[&command].record(duration_us * 1000);
  record_command_duration(command, args, duration_us, connection.peer(),
                          connection.session().name);
  // After the command, as Redis feeds MONITOR: the line shows the database it left selected.
  if (monitors_.empty() || command.has(kSkipMonitor) || command.has(kAdmin)) return;
  write_monitor_line(connection.session().db, monitor_source(connection), args);
}

void Diagnostics::after_nested_command(const ClientSession& session,
                                       std::span<const std::string_view> args,
                                       const Command& command, int64_t duration_us) {
  if (session.script_client) {
    // Only for a client's script: one the AOF loader replays stays out, as Redis keeps
    // loading out of the slow log.
    const ClientSession* caller = server_.scripting().running_caller();
    if (caller == nullptr || server_.clients().connection(caller->id) == nullptr) return;
    // Redis logs a script's commands for its Lua client, which has no address and no name,
    // and shows them to MONITOR as "lua", admin commands excepted.
    record_command_duration(command, args, duration_us, "?:0", "");
    if (!monitors_.empty() && !command.has(kAdmin)) write_monitor_line(session.db, "lua", args);
    return;
  }
  // A command of EXEC's queue: logged and shown for the client that sent it, in the database
  // it left selected, before the EXEC itself (which comes after its queue).
  const Connection* client = server_.clients().connection(session.id);
  if (client == nullptr) return;
  record_command_duration(command, args, duration_us, client->peer(), session.name);
  if (!monitors_.empty() && !command.has(kSkipMonitor) && !command.has(kAdmin)) {
    write_monitor_line(session.db, monitor_source(*client), args);
  }
}

void Diagnostics::record_command_duration(const Command& command,
                                          std::span<const std::string_view> args,
                                          int64_t duration_us, std::string_view peer,
                                          std::string_view name) {
  if (settings_.slowlog_log_slower_than >= 0 && duration_us >= settings_.slowlog_log_slower_than &&
      !command.has(kSkipSlowlog)) {
    SlowlogEntry entry;
    entry.id = slowlog_next_id_++;
    entry.time_sec = server_.clock().wall_ms() / 1000;
    entry.duration_us = duration_us;
    size_t shown = std::min(args.size(), kSlowlogMaxArgs);
    for (size_t i = 0; i < shown; ++i) {
      if (i == kSlowlogMaxArgs - 1 && args.size() > kSlowlogMaxArgs) {
        entry.args.push_back("... (" + std::to_string(args.size() - kSlowlogMaxArgs + 1) +
                             " more arguments)");
        break;
      }
      std::string_view arg = is_redacted(args, i) ? kRedacted : args[i];
      if (arg.size() > kSlowlogMaxArgLength) {
        entry.args.push_back(std::string(arg.substr(0, kSlowlogMaxArgLength)) + "... (" +
                             std::to_string(arg.size() - kSlowlogMaxArgLength) +
                             " more bytes)");
      } else {
        entry.args.emplace_back(arg);
      }
    }
    entry.peer = peer;
    entry.name = name;
    slowlog_.push_front(std::move(entry));
    while (slowlog_.size() > static_cast<size_t>(settings_.slowlog_max_len)) slowlog_.pop_back();
  }
  if (settings_.latency_monitor_threshold > 0 &&
      duration_us / 1000 >= settings_.latency_monitor_threshold) {
    const bool fast = command.has(kFast);
    record_latency(fast ? "fast-command" : "command", duration_us / 1000);
  }
}

void Diagnostics::record_latency(const std::string& event, int64_t latency_ms) {
  LatencyEvent& record = latency_events_[event];
  int64_t now_sec = server_.clock().wall_ms() / 1000;
  if (!record.history.empty() && record.history.back().time_sec == now_sec) {
    record.history.back().latency_ms = std::max(record.history.back().latency_ms, latency_ms);
  } else {
    record.history.push_back({now_sec, latency_ms});
    if (record.history.size() > kLatencyHistory) record.history.pop_front();
  }
  record.max_ms = std::max(record.max_ms, latency_ms);
}

void Diagnostics::feed_monitors_from_script(const ClientSession& client,
                                            std::span<const std::string_view> args) {
  if (monitors_.empty()) return;
  // EVAL and FCALL skip the usual feed after running: they are shown before they run.
  if (const Connection* caller = server_.clients().connection(client.id)) {
    write_monitor_line(client.db, monitor_source(*caller), args);
  }
}

std::string Diagnostics::monitor_source(const Connection& client) const {
  // A unix-socket client shows as the socket's path (its peer name carries a ":0" suffix).
  return client.unix_socket() ? "unix:" + server_.network().unixsocket : client.peer();
}

void Diagnostics::write_monitor_line(int db, std::string_view source,
                                     std::span<const std::string_view> args) {
  // +<seconds>.<micros> [<db> <peer>] "arg" "arg"
  int64_t now_us = server_.clock().wall_us();
  char stamp[48];
  snprintf(stamp, sizeof(stamp), "+%lld.%06lld [%d ", static_cast<long long>(now_us / 1000000),
           static_cast<long long>(now_us % 1000000), db);
  std::string line = stamp;
  line += source;
  line += "]";
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = is_redacted(args, i) ? kRedacted : args[i];
    line += " \"";
    for (unsigned char c : arg) {
      switch (c) {
        case '\\': line += "\\\\"; break;
        case '"': line += "\\\""; break;
        case '\n': line += "\\n"; break;
        case '\r': line += "\\r"; break;
        case '\t': line += "\\t"; break;
        case '\a': line += "\\a"; break;
        case '\b': line += "\\b"; break;
        default:
          if (isprint(c)) {
            line += static_cast<char>(c);
          } else {
            char hex[5];
            snprintf(hex, sizeof(hex), "\\x%02x", c);
            line += hex;
          }
      }
    }
    line += '"';
  }
  line += "\r\n";
  for (uint64_t id : monitors_) {
    Connection* monitor = server_.clients().connection(id);
    // A monitor sees its own commands too, as in Redis.
    if (monitor != nullptr) monitor->send_raw(line);
  }
}

void Diagnostics::add_monitor(Connection& connection) {
  connection.set_monitor(true);
  monitors_.push_back(connection.id());
}

void LatencyHistogram::record(int64_t nanoseconds) {
  // Redis clamps to the histogram's range: 1 ns to 1 s.
  const int64_t value = std::clamp<int64_t>(nanoseconds, 1, 1'000'000'000);
  const int shift = std::max(0, static_cast<int>(std::bit_width(static_cast<uint64_t>(value))) - 8);
  ++buckets[(value >> shift) << shift];
  ++total;
}

int64_t LatencyHistogram::value_at_percentile(double percentile) const {
  if (total == 0) return 0;
  const double wanted = std::min(percentile, 100.0);
  const auto rank = std::max<int64_t>(
      1, static_cast<int64_t>(wanted / 100 * static_cast<double>(total) + 0.5));
  int64_t seen = 0;
  int64_t lowest = 0;
  for (const auto& [bucket, count] : buckets) {
    lowest = bucket;
    seen += static_cast<int64_t>(count);
    if (seen >= rank) break;
  }
  if (percentile == 0.0) return lowest;
  const int shift =
      std::max(0, static_cast<int>(std::bit_width(static_cast<uint64_t>(lowest))) - 8);
  return lowest + (int64_t{1} << shift) - 1;
}

std::string format_percentile(double value) {
  char text[64];
  int length = snprintf(text, sizeof(text), "%f", value);
  // Trailing zeros and a bare decimal point go, as Redis's trimDoubleString does.
  while (length > 0 && text[length - 1] == '0') --length;
  if (length > 0 && text[length - 1] == '.') --length;
  return std::string(text, static_cast<size_t>(length));
}


}  // namespace keywarden
