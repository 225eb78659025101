// The configuration directives: their names, how they parse, where their values live, and the
// four ways values arrive — the config file, `--name value` arguments, CONFIG SET (several at
// once, all or nothing) and CONFIG REWRITE (which writes them back into the file).
//
// Each directive binds to a field owned by the layer that uses it (the dispatcher's settings,
// the keyspace's expiry settings, the server's network settings), so lower layers never look
// anything up by name. Error messages are Redis 7.0's, so that scripts and operators see what
// they would see there.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace keywarden {

enum ConfigFlag : uint32_t {
  kConfigImmutable = 1u << 0,  // only at start-up
  kConfigMultiArg = 1u << 1,   // a file line's several arguments are one value ("save 3600 1")
  kConfigSensitive = 1u << 2,  // hidden from logs (requirepass)
};

struct ConfigDirective {
  std::string name;
  std::vector<std::string> aliases;
  uint32_t flags = 0;
  // The value as CONFIG GET shows it.
  std::function<std::string()> get;
  // Parses and applies a value; returns "" or Redis's reason text ("argument must be 'yes' or
  // 'no'"). `starting` is true while loading the file and arguments.
  std::function<std::string(std::string_view value, bool starting)> set;
  std::string default_value;  // as get() returned it right after registration
  // Run by CONFIG SET once every value of the command is set, once per `apply_group` however
  // many of its directives were set (Redis's apply functions: the tls-* files are loaded
  // together). "" or the reason; on failure every value is restored and applied again.
  std::string apply_group;
  std::function<std::string()> apply;
};

class ConfigRegistry {
 public:
  // Typed registration helpers; `on_change` runs after a successful set.
  void add_bool(std::string name, bool* target, uint32_t flags = 0,
                std::function<void()> on_change = {});
  void add_integer(std::string name, int64_t* target, int64_t min, int64_t max,
                   uint32_t flags = 0, std::function<void()> on_change = {});
  void add_int(std::string name, int* target, int min, int max, uint32_t flags = 0,
               std::function<void()> on_change = {});
  // A byte count accepting Redis memory units (1k, 1kb, 1m, 1gb…).
  void add_memory(std::string name, int64_t* target, int64_t min, int64_t max,
                  uint32_t flags = 0, std::function<void()> on_change = {});
  void add_enum(std::string name, int* target,
                std::vector<std::pair<std::string, int>> choices, uint32_t flags = 0,
                std::function<void()> on_change = {});
  void add_string(std::string name, std::string* target, uint32_t flags = 0,
                  std::function<void()> on_change = {});
  void add(ConfigDirective directive);
  void add_alias(std::string_view name, std::string alias);
  // A directive of the config file (and arguments) only, such as rename-command: unknown to
  // CONFIG GET/SET. `handler` gets the line's arguments after the name and returns "" or the
  // reason for the fatal report. CONFIG REWRITE keeps such lines as they are, unless
  // `rewrite_lines` is given: then they are replaced by the lines it returns (none: dropped),
  // where the first of them was, or at the end.
  void add_file_only(std::string name,
                     std::function<std::string(std::span<const std::string> args)> handler,
                     std::function<std::vector<std::string>()> rewrite_lines = {});
  // Called once every directive is registered: records defaults for CONFIG REWRITE.
  void seal();

  ConfigDirective* find(std::string_view name);

  // Loads a config file's text, then `--name value` arguments. On failure returns Redis's
  // "FATAL CONFIG FILE ERROR" report naming the line and the problem.
  std::string load(std::string_view file_text, std::span<const std::string> arguments);
  // Turns `--port 6380 --save ''` into config text, as redis-server does.
  static std::string arguments_to_text(std::span<const std::string> arguments);

  // CONFIG GET: name/value pairs of every directive matching any pattern, each once.
  std::vector<std::pair<std::string, std::string>> get(std::span<const std::string_view> patterns);
  // CONFIG SET: applies every pair or none. Returns "" or the full error reply text.
  std::string set(std::span<const std::string_view> name_value_pairs);
  // CONFIG REWRITE: rewrites `path` keeping comments and unknown lines, updating directives
  // that differ from their default and dropping those that no longer do. Returns "" or error.
  std::string rewrite(const std::string& path);

  const std::vector<ConfigDirective>& directives() const { return directives_; }

 private:
  std::vector<ConfigDirective> directives_;
  struct FileOnly {
    std::string name;
    std::function<std::string(std::span<const std::string>)> handler;
    std::function<std::vector<std::string>()> rewrite_lines;
  };
  std::vector<FileOnly> file_only_;
};

// Parses a Redis memory value ("100", "1k" = 1000, "1kb" = 1024, "1gb"…); false if malformed.
bool parse_memory(std::string_view text, int64_t* out);

}  // namespace keywarden
