// Script flags: what a script declares about itself in a `#!lua flags=…` shebang (EVAL) or in
// redis.register_function (functions), and what the server enforces from them.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace keywarden {

enum ScriptFlag : uint32_t {
  kScriptNoWrites = 1u << 0,
  kScriptAllowOom = 1u << 1,
  kScriptAllowStale = 1u << 2,
  kScriptNoCluster = 1u << 3,
  kScriptAllowCrossSlotKeys = 1u << 4,
  // An EVAL script without a shebang: Redis 7's compatibility rules (writes decided per
  // command, OOM checked per command) instead of declared flags.
  kScriptEvalCompatMode = 1u << 5,
};

// Looks a flag up by its shebang/register_function name ("no-writes", "allow-oom", …); 0 when
// unknown.
uint32_t script_flag_by_name(std::string_view name);

struct ScriptShebang {
  uint32_t flags = kScriptEvalCompatMode;
  size_t length = 0;  // bytes of the shebang line, without its newline; 0 when none
};

// Reads the `#!lua [flags=a,b]` first line of an EVAL body. False with `error` set (Redis's
// text, without the "ERR " prefix) when the line is malformed.
bool parse_script_shebang(std::string_view body, ScriptShebang* shebang, std::string* error);

}  // namespace keywarden
