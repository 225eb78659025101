// The directives of redis-server 7.0 that keywarden knows but does not act on, so that a
// redis.conf written for Redis (Debian's stock file, an operator's own) loads unchanged.
//
// Two kinds, listed in docs/configuration.md:
// - tunables of internals keywarden does not have (process title, THP, incremental rehash,
//   active defrag thresholds, syslog…): accepted with Redis's validation, shown by CONFIG GET,
//   and without effect; those set to other than their default are named once in the log at
//   start-up;
// - settings of features keywarden does not have (cluster mode, tls-cluster, active
//   defragmentation): accepted at Redis's default value only; any other value is refused with
//   a reason naming the feature, in the file as in CONFIG SET.
// Each is validated as Redis validates it (type, range, choices), so a typo gets Redis's error
// first. The values live here; nothing else reads them.
#pragma once

#include <deque>
#include <string>
#include <vector>

namespace keywarden {

class ConfigRegistry;

class InertDirectives {
 public:
  // Adds every directive to `registry` (before ConfigRegistry::seal()).
  void register_all(ConfigRegistry& registry);
  // The no-effect directives whose value differs from Redis's default, for the start-up log.
  std::vector<std::string> changed_without_effect(ConfigRegistry& registry) const;

 private:
  // Stable storage for the values (the registry binds to their addresses).
  std::deque<bool> bools_;
  std::deque<int64_t> integers_;
  std::deque<int> enums_;
  std::deque<std::string> strings_;
  std::vector<std::string> without_effect_;  // names of the first kind
};

}  // namespace keywarden
