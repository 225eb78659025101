#include "server/inert_config.h"

#include <climits>
#include <cstdint>
#include <string_view>
#include <utility>

#include "commands/config_registry.h"
#include "common/ascii.h"
#include "common/number.h"
#include "resp/split_arguments.h"

namespace keywarden {
namespace {

enum class Kind {
  kBool, kInteger, kMemory, kEnum, kString, kShutdownFlags, kProcTitleTemplate
};

// One directive as Redis 7.0's config.c declares it: its type, its default as CONFIG GET shows
// it, its range or choices, and — for settings of a feature keywarden lacks — that feature.
struct Row {
  const char* name;
  const char* alias = nullptr;
  Kind kind = Kind::kBool;
  const char* default_value = "";
  int64_t min = 0;
  int64_t max = 0;
  const char* choices = "";  // for kEnum, space separated, in Redis's order
  uint32_t flags = 0;
  const char* feature = nullptr;  // null: accepted without effect
};

constexpr int64_t kIntMax = INT_MAX;
constexpr int64_t kLongMax = INT64_MAX;
constexpr uint32_t kImmutable = kConfigImmutable;

constexpr const char* kCluster = "Redis Cluster";

const Row kRows[] = {
    // Tunables of internals keywarden does not have: no effect.
    {"activerehashing", nullptr, Kind::kBool, "yes"},
    {"always-show-logo", nullptr, Kind::kBool, "no", 0, 0, "", kImmutable},
    {"set-proc-title", nullptr, Kind::kBool, "yes", 0, 0, "", kImmutable},
    {"proc-title-template", nullptr, Kind::kProcTitleTemplate, "{title} {listen-addr} {server-mode}"},
    {"rdb-del-sync-files", nullptr, Kind::kBool, "no"},
    {"rdb-save-incremental-fsync", nullptr, Kind::kBool, "yes"},
    {"disable-thp", nullptr, Kind::kBool, "yes"},
    {"aof-disable-auto-gc", nullptr, Kind::kBool, "no"},
    {"crash-log-enabled", nullptr, Kind::kBool, "yes"},
    {"crash-memcheck-enabled", nullptr, Kind::kBool, "yes"},
    {"server_cpulist", nullptr, Kind::kString, "", 0, 0, "", kImmutable},
    {"bio_cpulist", nullptr, Kind::kString, "", 0, 0, "", kImmutable},
    {"aof_rewrite_cpulist", nullptr, Kind::kString, "", 0, 0, "", kImmutable},
    {"bgsave_cpulist", nullptr, Kind::kString, "", 0, 0, "", kImmutable},
    {"ignore-warnings", nullptr, Kind::kString, ""},
    {"syslog-enabled", nullptr, Kind::kBool, "no", 0, 0, "", kImmutable},
    {"syslog-ident", nullptr, Kind::kString, "redis", 0, 0, "", kImmutable},
    {"syslog-facility", nullptr, Kind::kEnum, "local0", 0, 0,
     "user local0 local1 local2 local3 local4 local5 local6 local7", kImmutable},
    {"supervised", nullptr, Kind::kEnum, "no", 0, 0, "upstart systemd auto no", kImmutable},
    {"shutdown-on-sigint", nullptr, Kind::kShutdownFlags, "default"},
    {"shutdown-on-sigterm", nullptr, Kind::kShutdownFlags, "default"},
    {"shutdown-timeout", nullptr, Kind::kInteger, "10", 0, kIntMax},
    {"socket-mark-id", nullptr, Kind::kInteger, "0", 0, UINT_MAX},
    {"enable-protected-configs", nullptr, Kind::kEnum, "no", 0, 0, "no yes local", kImmutable},
    {"enable-module-command", nullptr, Kind::kEnum, "no", 0, 0, "no yes local", kImmutable},
    {"propagation-error-behavior", nullptr, Kind::kEnum, "ignore", 0, 0,
     "ignore panic panic-on-replicas"},
    {"active-defrag-cycle-min", nullptr, Kind::kInteger, "1", 1, 99},
    {"active-defrag-cycle-max", nullptr, Kind::kInteger, "25", 1, 99},
    {"active-defrag-threshold-lower", nullptr, Kind::kInteger, "10", 0, 1000},
    {"active-defrag-threshold-upper", nullptr, Kind::kInteger, "100", 0, 1000},
    {"active-defrag-ignore-bytes", nullptr, Kind::kMemory, "104857600", 1, kLongMax},
    {"active-defrag-max-scan-fields", nullptr, Kind::kInteger, "1000", 1, kLongMax},

    // Settings of features keywarden does not have yet: the default value only.
    {"activedefrag", nullptr, Kind::kBool, "no", 0, 0, "", 0, "active defragmentation"},
    {"cluster-enabled", nullptr, Kind::kBool, "no", 0, 0, "", kImmutable, kCluster},
    {"cluster-config-file", nullptr, Kind::kString, "nodes.conf", 0, 0, "", kImmutable, kCluster},
    {"cluster-node-timeout", nullptr, Kind::kInteger, "15000", 0, kLongMax, "", 0, kCluster},
    {"cluster-port", nullptr, Kind::kInteger, "0", 0, 65535, "", kImmutable, kCluster},
    {"cluster-announce-ip", nullptr, Kind::kString, "", 0, 0, "", 0, kCluster},
    {"cluster-announce-hostname", nullptr, Kind::kString, "", 0, 0, "", 0, kCluster},
    {"cluster-announce-port", nullptr, Kind::kInteger, "0", 0, 65535, "", 0, kCluster},
    {"cluster-announce-bus-port", nullptr, Kind::kInteger, "0", 0, 65535, "", 0, kCluster},
    {"cluster-announce-tls-port", nullptr, Kind::kInteger, "0", 0, 65535, "", 0, kCluster},
    {"cluster-require-full-coverage", nullptr, Kind::kBool, "yes", 0, 0, "", 0, kCluster},
    {"cluster-allow-reads-when-down", nullptr, Kind::kBool, "no", 0, 0, "", 0, kCluster},
    {"cluster-allow-pubsubshard-when-down", nullptr, Kind::kBool, "yes", 0, 0, "", 0, kCluster},
    {"cluster-allow-replica-migration", nullptr, Kind::kBool, "yes", 0, 0, "", 0, kCluster},
    {"cluster-migration-barrier", nullptr, Kind::kInteger, "1", 0, kIntMax, "", 0, kCluster},
    {"cluster-replica-validity-factor", "cluster-slave-validity-factor", Kind::kInteger, "10", 0,
     kIntMax, "", 0, kCluster},
    {"cluster-replica-no-failover", "cluster-slave-no-failover", Kind::kBool, "no", 0, 0, "", 0,
     kCluster},
    {"cluster-link-sendbuf-limit", nullptr, Kind::kMemory, "0", 0, kLongMax, "", 0, kCluster},
    {"cluster-preferred-endpoint-type", nullptr, Kind::kEnum, "ip", 0, 0,
     "ip hostname unknown-endpoint", 0, kCluster},
    {"tls-cluster", nullptr, Kind::kBool, "no", 0, 0, "", 0, kCluster},
};

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  if (!split_arguments(text, words)) words.clear();
  return words;
}

// shutdown-on-sigint/-sigterm: a set of flags ("save now"), or "default".
ConfigDirective shutdown_flags_directive(const Row& row, std::string* target) {
  return {row.name, {}, row.flags | kConfigMultiArg, [target] { return *target; },
          [target](std::string_view value, bool) -> std::string {
            static const char* const kFlags[] = {"default", "save", "nosave", "now", "force"};
            std::string normalized;
            for (const std::string& word : split_words(value)) {
              const char* known = nullptr;
              for (const char* flag : kFlags) {
                if (equals_ignore_case(word, flag)) known = flag;
              }
              if (known == nullptr) {
                return "argument(s) must be one of the following: default, save, nosave, now, "
                       "force";
              }
              if (!normalized.empty()) normalized += ' ';
              normalized += known;
            }
            *target = normalized.empty() ? "default" : normalized;
            return "";
          }};
}

// proc-title-template as Redis checks it: every {variable} known, braces balanced, and the
// title not empty once expanded with an empty {title} (blanks trimmed; {server-mode} is empty
// on a plain server, {unixsocket} and {config-file} may be).
bool valid_proc_title_template(std::string_view text) {
  static const std::string_view kVariables[] = {"title",   "listen-addr", "server-mode", "port",
                                                "tls-port", "unixsocket", "config-file"};
  bool expands_to_something = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '}') return false;
    if (text[i] != '{') {
      expands_to_something = expands_to_something || text[i] != ' ';
      continue;
    }
    const size_t end = text.find('}', i + 1);
    if (end == std::string_view::npos) return false;
    const std::string_view name = text.substr(i + 1, end - i - 1);
    bool known = false;
    for (std::string_view variable : kVariables) known = known || name == variable;
    if (!known) return false;
    expands_to_something = expands_to_something || name == "listen-addr" || name == "port" ||
                           name == "tls-port";
    i = end;
  }
  return expands_to_something;
}

}  // namespace

void InertDirectives::register_all(ConfigRegistry& registry) {
  for (const Row& row : kRows) {
    switch (row.kind) {
      case Kind::kBool:
        registry.add_bool(row.name, &bools_.emplace_back(), row.flags);
        break;
      case Kind::kInteger:
        registry.add_integer(row.name, &integers_.emplace_back(), row.min, row.max, row.flags);
        break;
      case Kind::kMemory:
        registry.add_memory(row.name, &integers_.emplace_back(), row.min, row.max, row.flags);
        break;
      case Kind::kEnum: {
        std::vector<std::pair<std::string, int>> choices;
        for (std::string& word : split_words(row.choices)) {
          choices.emplace_back(std::move(word), static_cast<int>(choices.size()));
        }
        registry.add_enum(row.name, &enums_.emplace_back(), std::move(choices), row.flags);
        break;
      }
      case Kind::kString:
        registry.add_string(row.name, &strings_.emplace_back(), row.flags);
        break;
      case Kind::kProcTitleTemplate: {
        registry.add_string(row.name, &strings_.emplace_back(), row.flags);
        ConfigDirective* directive = registry.find(row.name);
        directive->set = [inner = directive->set](std::string_view value, bool starting) {
          if (!valid_proc_title_template(value)) {
            return std::string("template format is invalid or contains unknown variables");
          }
          return inner(value, starting);
        };
        break;
      }
      case Kind::kShutdownFlags:
        registry.add(shutdown_flags_directive(row, &strings_.emplace_back()));
        break;
    }
    if (row.alias != nullptr) registry.add_alias(row.name, row.alias);
    ConfigDirective* directive = registry.find(row.name);
    directive->set(row.default_value, true);
    if (row.feature == nullptr) {
      without_effect_.emplace_back(row.name);
      continue;
    }
    // Parsed and validated as Redis does; then anything but the default is refused.
    directive->set = [inner = directive->set, get = directive->get,
                      default_value = std::string(row.default_value),
                      feature = std::string(row.feature)](std::string_view value,
                                                          bool starting) -> std::string {
      const std::string previous = get();
      std::string problem = inner(value, starting);
      if (!problem.empty() || get() == default_value) return problem;
      inner(previous, starting);
      return feature + " is not supported by keywarden yet: only the default value '" +
             default_value + "' is accepted";
    };
  }
}

std::vector<std::string> InertDirectives::changed_without_effect(ConfigRegistry& registry) const {
  std::vector<std::string> changed;
  for (const std::string& name : without_effect_) {
    const ConfigDirective* directive = registry.find(name);
    if (directive != nullptr && directive->get() != directive->default_value) {
      changed.push_back(name);
    }
  }
  return changed;
}

}  // namespace keywarden
