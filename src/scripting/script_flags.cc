#include "scripting/script_flags.h"

#include <vector>

#include "resp/split_arguments.h"

namespace keywarden {
namespace {

struct NamedFlag {
  std::string_view name;
  uint32_t flag;
};

constexpr NamedFlag kFlagNames[] = {
    {"no-writes", kScriptNoWrites},
    {"allow-oom", kScriptAllowOom},
    {"allow-stale", kScriptAllowStale},
    {"no-cluster", kScriptNoCluster},
    {"allow-cross-slot-keys", kScriptAllowCrossSlotKeys},
};

}  // namespace

uint32_t script_flag_by_name(std::string_view name) {
  for (const NamedFlag& named : kFlagNames) {
    if (named.name == name) return named.flag;
  }
  return 0;
}

bool parse_script_shebang(std::string_view body, ScriptShebang* shebang, std::string* error) {
  *shebang = {};
  if (!body.starts_with("#!")) return true;
  // Redis looks for the newline with strchr, so a NUL byte ends the search as well.
  size_t end = body.find_first_of(std::string_view("\n\0", 2));
  if (end == std::string_view::npos || body[end] != '\n') {
    *error = "Invalid script shebang";
    return false;
  }
  std::vector<std::string> parts;
  if (!split_arguments(body.substr(0, end), parts) || parts.empty()) {
    *error = "Invalid engine in script shebang";
    return false;
  }
  if (parts[0] != "#!lua") {
    *error = "Unexpected engine in script shebang: " + parts[0];
    return false;
  }
  uint32_t flags = 0;
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string_view part = parts[i];
    if (!part.starts_with("flags=")) {
      *error = "Unknown lua shebang option: " + parts[i];
      return false;
    }
    part.remove_prefix(6);
    // "flags=" alone declares no flags; "a,,b" and "a," name an empty flag, which is unknown.
    if (part.empty()) continue;
    for (;;) {
      size_t comma = part.find(',');
      std::string_view name = part.substr(0, comma);
      uint32_t flag = script_flag_by_name(name);
      if (flag == 0) {
        *error = "Unexpected flag in script shebang: " + std::string(name);
        return false;
      }
      flags |= flag;
      if (comma == std::string_view::npos) break;
      part.remove_prefix(comma + 1);
    }
  }
  shebang->flags = flags;
  shebang->length = end;
  return true;
}

}  // namespace keywarden
