// ACL users, as Redis 7.0 has them: the user store, the rule language of ACL SETUSER (and of
// the `user` directive, later), the permission checks the dispatcher and scripts run before a
// command, and the ACL log.
//
// It lives in the command layer because every rule is about commands: a rule names commands,
// subcommands and ACL categories of the command table, and a check needs the command's key
// specifications. The server layer only plugs in what it alone knows (a client's CLIENT LIST
// line for the log, the connections to close when a user goes) through AclStore's hooks.
//
// Model (Redis's): a user has flags (on/off, nopass, sanitize-payload), SHA-256 password
// hashes, and a list of selectors, the first of which (the root selector) holds the rules given
// outside parentheses. A selector allows commands by a bitmap indexed by Command::acl_id, with
// one reserved bit that only +@all sets (it decides whether ACL LIST starts from +@all or
// -@all), first arguments allowed for a command otherwise denied (+select|0), key patterns with
// read/write permissions and channel patterns. A command is allowed when one selector allows
// the command, all its keys and all its channels.
//
// Users are shared_ptrs: a session holds the user it authenticated as, and a deleted user stays
// alive until its clients (which the server disconnects) are gone. A session without a user
// (the AOF, a primary's stream, the server's own calls) is never checked.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commands/command_table.h"

namespace keywarden {

struct ClientSession;

// Why a command was denied. The numbers order them as Redis does when it must pick one reason
// among several selectors' (the highest wins): ACL_DENIED_CMD < KEY < AUTH < CHANNEL.
enum class AclDenial : uint8_t { kNone = 0, kCommand = 1, kKey = 2, kAuth = 3, kChannel = 4 };

// Key pattern permissions (Redis's ACL_READ_PERMISSION / ACL_WRITE_PERMISSION).
inline constexpr uint8_t kAclKeyRead = 1;
inline constexpr uint8_t kAclKeyWrite = 2;

struct AclKeyPattern {
  std::string pattern;
  uint8_t permissions;  // kAclKeyRead | kAclKeyWrite
};

class AclSelector {
 public:
  // Bits of the command bitmap; the last one means "commands added later too" (+@all).
  static constexpr size_t kCommandBits = 1024;
  static constexpr size_t kFutureCommandsBit = kCommandBits - 1;

  bool root = false;
  bool all_keys = false;
  bool all_channels = false;
  bool all_commands = false;  // every bit set by +@all and none cleared since
  std::array<uint64_t, kCommandBits / 64> allowed{};
  // For a command whose bit is clear: the first arguments (the second, for a subcommand) that
  // still allow it, by acl_id. Empty almost always.
  std::map<uint32_t, std::vector<std::string>> first_args;
  std::vector<AclKeyPattern> keys;
  std::vector<std::string> channels;

  bool bit(size_t id) const { return (allowed[id / 64] >> (id % 64)) & 1; }
  void set_bit(size_t id, bool value);
  bool operator==(const AclSelector&) const = default;
};

struct AclUser {
  // Flags, in the order ACL LIST and ACL GETUSER show them.
  enum Flag : uint32_t {
    kOn = 1u << 0,
    kOff = 1u << 1,
    kNoPass = 1u << 2,
    kSkipSanitizePayload = 1u << 3,
    kSanitizePayload = 1u << 4,
  };
  std::string name;
  uint32_t flags = kOff;
  std::vector<std::string> passwords;  // lowercase hex SHA-256, in the order added
  std::vector<AclSelector> selectors;  // [0]: the root selector

  bool enabled() const { return (flags & kOn) != 0; }
  bool nopass() const { return (flags & kNoPass) != 0; }
  // The root selector allows everything, with no other selector to consult: no check needed.
  bool unrestricted() const {
    const AclSelector& root = selectors.front();
    return root.all_commands && root.all_keys && root.all_channels;
  }
};

// What a permission check found: the reason, and for a key or channel the argument's index.
struct AclVerdict {
  AclDenial denial = AclDenial::kNone;
  int position = 0;
  bool allowed() const { return denial == AclDenial::kNone; }
};

// An ACL LOG entry.
struct AclLogEntry {
  uint64_t count = 1;
  AclDenial reason;
  std::string context;  // toplevel, multi, lua
  std::string object;
  std::string username;
  int64_t created_ms;  // the latest occurrence
  std::string client_info;
};

// Lowercase hex SHA-256 of `password` (what a user stores).
std::string acl_hash_password(std::string_view password);

class AclStore {
 public:
  explicit AclStore(CommandTable& commands);

  // --- Users -------------------------------------------------------------------------------
  std::shared_ptr<AclUser> find(std::string_view name) const;
  const std::shared_ptr<AclUser>& default_user() const { return default_user_; }
  const std::map<std::string, std::shared_ptr<AclUser>, std::less<>>& users() const {
    return users_;
  }
  // ACL SETUSER: applies `rules` to a copy of the user (a new one if absent) and replaces it
  // only when every rule is valid. Returns "" or the error reply (without the leading '-');
  // on a refused rule, also its index among the rules (selectors merged) and the bare reason.
  std::string set_user(std::string_view name, std::span<const std::string_view> rules,
                       size_t* failed_index = nullptr, std::string* reason = nullptr);
  // Removes a user (never "default"); its clients are disconnected through the hook.
  bool delete_user(std::string_view name);
  // requirepass: the default user's only password, or nopass when empty.
  void set_default_password(std::string_view password);
  // New clients start authenticated when the default user needs no password.
  bool default_user_open() const {
    return default_user_->nopass() && default_user_->enabled();
  }

  // The user `name` when it is enabled and `password` opens it, else null.
  std::shared_ptr<AclUser> authenticate(std::string_view name, std::string_view password) const;

  // --- Rules -------------------------------------------------------------------------------
  // Applies one rule to `user`; "" or Redis's reason ("Syntax error", …).
  std::string apply_rule(AclUser& user, std::string_view rule) const;
  // ACL LIST's line after "user <name> ", and GETUSER's pieces.
  std::string describe_user(const AclUser& user) const;
  std::string describe_commands(const AclSelector& selector) const;
  static std::string describe_keys(const AclSelector& selector);
  static std::string describe_channels(const AclSelector& selector);

  // --- Checks ------------------------------------------------------------------------------
  // Whether `user` may run `command` with `args` (its name first), as Redis's
  // ACLCheckAllUserCommandPerm.
  AclVerdict check(const AclUser& user, const Command& command,
                   std::span<const std::string_view> args) const;
  // Whether `user` may touch `channel` (literally, for a PUNSUBSCRIBE-like use of a pattern).
  static bool channel_allowed(const AclUser& user, std::string_view channel, bool literal);

  // --- ACL file ----------------------------------------------------------------------------
  // aclfile: the path ACL LOAD reads and ACL SAVE writes ("" when not configured).
  std::string acl_file;
  // acl-pubsub-default: whether new users (and `reset`) start with allchannels (1) or
  // resetchannels (0).
  int pubsub_default_all = 0;
  // ACL LOAD (and the start-up load): replaces every user by the file's, all or nothing, as
  // Redis 7.0's ACLLoadFromFile: lines "user <name> <rule>…" split at spaces, the default
  // user back to `on nopass ~* &* +@all` unless the file defines it, the clients of every
  // other former user disconnected. Returns "" or Redis's error text (no "ERR ").
  std::string load_file();
  // The same from the file's text (what load_file() read).
  std::string load_text(std::string_view text);
  // ACL SAVE: every user as a "user" line, written to a temporary file renamed over aclfile.
  // Returns "" or the reason to log.
  std::string save_file() const;
  // Every user as a "user <name> <rules>" line, in name order (ACL SAVE, CONFIG REWRITE).
  std::vector<std::string> user_lines() const;

  // --- Log ---------------------------------------------------------------------------------
  // Records a denial; entries alike (reason, context, object, user) within a minute are merged.
  // `session` is the client whose CLIENT LIST line is kept (a script's caller), running
  // `running`.
  void log(const ClientSession& session, const Command* running, AclDenial reason,
           std::string_view context,
           std::string_view object, std::string_view username, int64_t now_ms);
  const std::deque<AclLogEntry>& log_entries() const { return log_; }
  void reset_log() { log_.clear(); }
  int64_t log_max_len = 128;  // acllog-max-len

  // --- Hooks from the server layer ---------------------------------------------------------
  // A client's CLIENT LIST line, for the log, while it runs `running`.
  std::function<std::string(const ClientSession&, const Command* running)> client_info;
  // Disconnects the clients authenticated as `user` (deleted).
  std::function<void(const AclUser& user)> user_removed;
  // Before ACL SETUSER replaces `user` with `updated`: disconnects the user's subscribed
  // clients whose subscriptions the updated channel rules no longer allow.
  std::function<void(const AclUser& user, const AclUser& updated)> channels_narrowed;

  // The command a rule names ("get", "config|get"), by original name; null if unknown.
  Command* lookup(std::string_view name) const;

 private:
  std::string apply_selector_rule(AclSelector& selector, std::string_view rule) const;
  void change_permission(AclSelector& selector, const Command& command, bool allow) const;
  void set_category(AclSelector& selector, uint32_t category, bool allow) const;
  void count_category(const AclSelector& selector, uint32_t category, unsigned long* on,
                      unsigned long* off) const;
  AclDenial check_selector(const AclSelector& selector, const Command& command,
                           std::span<const std::string_view> args,
                           const std::vector<KeyReference>* keys, int* position) const;
  AclSelector new_selector(bool root) const;

  CommandTable& commands_;
  std::map<std::string, std::shared_ptr<AclUser>, std::less<>> users_;
  std::shared_ptr<AclUser> default_user_;
  std::deque<AclLogEntry> log_;
};

// The category bit of an ACL category name ("string", case-insensitive), 0 if unknown.
uint32_t acl_category_by_name(std::string_view name);
// The category names in Redis's order.
std::span<const std::string_view> acl_category_names();

}  // namespace keywarden
