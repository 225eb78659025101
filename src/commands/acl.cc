// ACL users: the rule language, the descriptions ACL LIST / GETUSER print, the checks and the
// log (see acl.h).
#include "commands/acl.h"

#include <fcntl.h>
#include <openssl/sha.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "commands/client_session.h"
#include "common/ascii.h"
#include "common/glob.h"
#include "resp/split_arguments.h"

namespace keywarden {
namespace {

constexpr std::string_view kCategoryNames[] = {
    "keyspace", "read",  "write",    "set",       "sortedset",  "list",        "hash",
    "string",   "bitmap", "hyperloglog", "geo",   "stream",     "pubsub",      "admin",
    "fast",     "slow",  "blocking", "dangerous", "connection", "transaction", "scripting",
};
static_assert(std::size(kCategoryNames) == 21, "one name per AclCategory bit, in order");

constexpr std::string_view kFlagNames[] = {"on", "off", "nopass", "skip-sanitize-payload",
                                           "sanitize-payload"};

// Redis's reasons for a refused rule (ACLSetUserStringError), by what went wrong.
constexpr std::string_view kUnknownName = "Unknown command or category name in ACL";
constexpr std::string_view kSyntaxError = "Syntax error";
constexpr std::string_view kKeysAfterAll =
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not "
    "have any effect. Try 'resetkeys' to start with an empty list of patterns";
constexpr std::string_view kChannelsAfterAll =
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does "
    "not have any effect. Try 'resetchannels' to start with an empty list of channels";
constexpr std::string_view kNoSuchPassword =
    "The password you are trying to remove from the user does not exist";
constexpr std::string_view kBadHash =
    "The password hash must be exactly 64 characters and contain only lowercase hexadecimal "
    "characters";
constexpr std::string_view kFirstArgOfSubcommand =
    "Allowing first-arg of a subcommand is not supported";

// Usernames, key and channel patterns may hold no blanks nor NULs, so that ACL LIST lines
// read back unambiguously (Redis's ACLStringHasSpaces, with C's isspace).
bool has_spaces(std::string_view text) {
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' || c == 0) {
      return true;
    }
  }
  return false;
}

bool valid_hash(std::string_view hash) {
  if (hash.size() != 64) return false;
  for (char c : hash) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// Compares two hashes in time that does not depend on where they differ.
bool same_hash(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string pattern_text(const AclKeyPattern& pattern) {
  std::string out;
  if (pattern.permissions == (kAclKeyRead | kAclKeyWrite)) {
    out = "~";
  } else if (pattern.permissions == kAclKeyRead) {
    out = "%R~";
  } else {
    out = "%W~";
  }
  return out + pattern.pattern;
}

// The commands whose arguments are channels, and how (Redis recognises them by procedure).
enum class ChannelArgs : uint8_t { kNone, kFirst, kAll, kAllLiteral };
ChannelArgs channel_args(const Command& command) {
  const std::string& name = command.full_name;
  if (name == "publish" || name == "spublish") return ChannelArgs::kFirst;
  if (name == "subscribe" || name == "ssubscribe") return ChannelArgs::kAll;
  if (name == "psubscribe") return ChannelArgs::kAllLiteral;
  return ChannelArgs::kNone;
}

bool channel_in(const std::vector<std::string>& patterns, std::string_view channel, bool literal) {
  for (const std::string& pattern : patterns) {
    if (literal ? pattern == channel : glob_match(pattern, channel)) return true;
  }
  return false;
}

}  // namespace

uint32_t acl_category_by_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kCategoryNames); ++i) {
    if (equals_ignore_case(name, kCategoryNames[i])) return 1u << i;
  }
  return 0;
}

std::span<const std::string_view> acl_category_names() { return kCategoryNames; }

std::string acl_hash_password(std::string_view password) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(password.data()), password.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(SHA256_DIGEST_LENGTH * 2, '0');
  for (size_t i = 0; i < SHA256_DIGEST_LENGTH; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return hex;
}

void AclSelector::set_bit(size_t id, bool value) {
  if (id >= kCommandBits) return;
  if (value) {
    allowed[id / 64] |= uint64_t{1} << (id % 64);
  } else {
    allowed[id / 64] &= ~(uint64_t{1} << (id % 64));
    all_commands = false;
  }
}

AclStore::AclStore(CommandTable& commands) : commands_(commands) {
  auto user = std::make_shared<AclUser>();
  user->name = "default";
  user->selectors.push_back(new_selector(true));
  for (std::string_view rule : {"+@all", "~*", "&*", "on", "nopass"}) apply_rule(*user, rule);
  default_user_ = user;
  users_.emplace("default", user);
}

AclSelector AclStore::new_selector(bool root) const {
  AclSelector selector;
  selector.root = root;
  // acl-pubsub-default allchannels: new selectors may use every channel.
  selector.all_channels = pubsub_default_all != 0;
  return selector;
}

std::shared_ptr<AclUser> AclStore::find(std::string_view name) const {
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : it->second;
}

Command* AclStore::lookup(std::string_view name) const {
  const size_t bar = name.find('|');
  if (bar == std::string_view::npos) {
    std::string_view args[] = {name};
    return commands_.find_original_for_args(std::span<const std::string_view>(args, 1));
  }
  std::string_view args[] = {name.substr(0, bar), name.substr(bar + 1)};
  Command* base = commands_.find_original_for_args(std::span<const std::string_view>(args, 1));
  if (base == nullptr || !base->is_container()) return nullptr;
  // "config|get|x" names nothing: a subcommand's own name holds no bar.
  if (args[1].find('|') != std::string_view::npos) return nullptr;
  return commands_.find_original_for_args(args);
}

void AclStore::change_permission(AclSelector& selector, const Command& command,
                                 bool allow) const {
  selector.set_bit(command.acl_id, allow);
  selector.first_args.erase(command.acl_id);
  for (const auto& [name, sub] : command.subcommands) selector.set_bit(sub->acl_id, allow);
}

void AclStore::set_category(AclSelector& selector, uint32_t category, bool allow) const {
  commands_.for_each([&](const Command& command) {
    if (command.acl_categories & category) change_permission(selector, command, allow);
  });
}

void AclStore::count_category(const AclSelector& selector, uint32_t category, unsigned long* on,
                              unsigned long* off) const {
  *on = *off = 0;
  commands_.for_each([&](const Command& command) {
    if (command.acl_categories & category) ++(selector.bit(command.acl_id) ? *on : *off);
  });
}

std::string AclStore::apply_selector_rule(AclSelector& selector, std::string_view rule) const {
  if (rule.empty()) return std::string(kSyntaxError);  // an empty word inside a selector
  if (equals_ignore_case(rule, "allkeys") || rule == "~*") {
    selector.all_keys = true;
    selector.keys.clear();
  } else if (equals_ignore_case(rule, "resetkeys")) {
    selector.all_keys = false;
    selector.keys.clear();
  } else if (equals_ignore_case(rule, "allchannels") || rule == "&*") {
    selector.all_channels = true;
    selector.channels.clear();
  } else if (equals_ignore_case(rule, "resetchannels")) {
    selector.all_channels = false;
    selector.channels.clear();
  } else if (equals_ignore_case(rule, "allcommands") || equals_ignore_case(rule, "+@all")) {
    selector.allowed.fill(~uint64_t{0});
    selector.all_commands = true;
    selector.first_args.clear();
  } else if (equals_ignore_case(rule, "nocommands") || equals_ignore_case(rule, "-@all")) {
    selector.allowed.fill(0);
    selector.all_commands = false;
    selector.first_args.clear();
  } else if (rule[0] == '~' || rule[0] == '%') {
    if (selector.all_keys) return std::string(kKeysAfterAll);
    uint8_t permissions = 0;
    size_t offset = 1;
    if (rule[0] == '%') {
      for (; offset < rule.size(); ++offset) {
        const char c = static_cast<char>(rule[offset] & ~0x20);  // ASCII toupper for R and W
        if (c == 'R' && !(permissions & kAclKeyRead)) {
          permissions |= kAclKeyRead;
        } else if (c == 'W' && !(permissions & kAclKeyWrite)) {
          permissions |= kAclKeyWrite;
        } else if (rule[offset] == '~') {
          ++offset;
          break;
        } else {
          return std::string(kSyntaxError);
        }
      }
      if (permissions == 0) return std::string(kSyntaxError);
    } else {
      permissions = kAclKeyRead | kAclKeyWrite;
    }
    std::string_view pattern = rule.substr(std::min(offset, rule.size()));
    if (has_spaces(pattern)) return std::string(kSyntaxError);
    auto same = std::find_if(selector.keys.begin(), selector.keys.end(),
                             [&](const AclKeyPattern& key) { return key.pattern == pattern; });
    if (same == selector.keys.end()) {
      selector.keys.push_back({std::string(pattern), permissions});
    } else {
      same->permissions |= permissions;
    }
    selector.all_keys = false;
  } else if (rule[0] == '&') {
    if (selector.all_channels) return std::string(kChannelsAfterAll);
    std::string_view pattern = rule.substr(1);
    if (has_spaces(pattern)) return std::string(kSyntaxError);
    if (std::find(selector.channels.begin(), selector.channels.end(), pattern) ==
        selector.channels.end()) {
      selector.channels.emplace_back(pattern);
    }
    selector.all_channels = false;
  } else if ((rule[0] == '+' || rule[0] == '-') && rule.size() > 1 && rule[1] == '@') {
    const uint32_t category = acl_category_by_name(rule.substr(2));
    if (category == 0) return std::string(kUnknownName);
    set_category(selector, category, rule[0] == '+');
  } else if (rule[0] == '+') {
    std::string_view name = rule.substr(1);
    const size_t bar = name.rfind('|');
    if (bar == std::string_view::npos) {
      Command* command = lookup(name);
      if (command == nullptr) return std::string(kUnknownName);
      change_permission(selector, *command, true);
      return {};
    }
    Command* command = lookup(name.substr(0, bar));
    if (command == nullptr) return std::string(kUnknownName);
    if (command->parent != nullptr) return std::string(kFirstArgOfSubcommand);
    std::string_view first_arg = name.substr(bar + 1);
    if (first_arg.empty()) return std::string(kSyntaxError);
    if (command->is_container()) {
      Command* sub = lookup(name);
      if (sub == nullptr) return std::string(kUnknownName);
      change_permission(selector, *sub, true);
    } else {
      // An otherwise denied command allowed with this first argument (Redis deprecates the
      // form but still takes it: "-select +select|0").
      std::vector<std::string>& allowed = selector.first_args[command->acl_id];
      bool present = false;
      for (const std::string& arg : allowed) present = present || equals_ignore_case(arg, first_arg);
      if (!present) allowed.emplace_back(first_arg);
    }
  } else if (rule[0] == '-') {
    Command* command = lookup(rule.substr(1));
    if (command == nullptr) return std::string(kUnknownName);
    change_permission(selector, *command, false);
  } else {
    return std::string(kSyntaxError);
  }
  return {};
}

std::string AclStore::apply_rule(AclUser& user, std::string_view rule) const {
  if (rule.empty()) return {};
  if (equals_ignore_case(rule, "on")) {
    user.flags = (user.flags | AclUser::kOn) & ~AclUser::kOff;
  } else if (equals_ignore_case(rule, "off")) {
    user.flags = (user.flags | AclUser::kOff) & ~AclUser::kOn;
  } else if (equals_ignore_case(rule, "skip-sanitize-payload")) {
    user.flags = (user.flags | AclUser::kSkipSanitizePayload) & ~AclUser::kSanitizePayload;
  } else if (equals_ignore_case(rule, "sanitize-payload")) {
    user.flags = (user.flags | AclUser::kSanitizePayload) & ~AclUser::kSkipSanitizePayload;
  } else if (equals_ignore_case(rule, "nopass")) {
    user.flags |= AclUser::kNoPass;
    user.passwords.clear();
  } else if (equals_ignore_case(rule, "resetpass")) {
    user.flags &= ~AclUser::kNoPass;
    user.passwords.clear();
  } else if (rule[0] == '>' || rule[0] == '#') {
    std::string hash;
    if (rule[0] == '>') {
      hash = acl_hash_password(rule.substr(1));
    } else {
      if (!valid_hash(rule.substr(1))) return std::string(kBadHash);
      hash = rule.substr(1);
    }
    if (std::find(user.passwords.begin(), user.passwords.end(), hash) == user.passwords.end()) {
      user.passwords.push_back(std::move(hash));
    }
    user.flags &= ~AclUser::kNoPass;
  } else if (rule[0] == '<' || rule[0] == '!') {
    std::string hash;
    if (rule[0] == '<') {
      hash = acl_hash_password(rule.substr(1));
    } else {
      if (!valid_hash(rule.substr(1))) return std::string(kBadHash);
      hash = rule.substr(1);
    }
    auto it = std::find(user.passwords.begin(), user.passwords.end(), hash);
    if (it == user.passwords.end()) return std::string(kNoSuchPassword);
    user.passwords.erase(it);
  } else if (rule.front() == '(' && rule.back() == ')') {
    AclSelector selector = new_selector(false);
    std::vector<std::string> words;
    // Unbalanced quotes inside make no words, hence an empty selector, as sdssplitargs does.
    if (!split_arguments(rule.substr(1, rule.size() - 2), words)) words.clear();
    for (const std::string& word : words) {
      std::string error = apply_selector_rule(selector, word);
      if (!error.empty()) return error;
    }
    user.selectors.push_back(std::move(selector));
  } else if (equals_ignore_case(rule, "clearselectors")) {
    user.selectors.resize(1);
  } else if (equals_ignore_case(rule, "reset")) {
    for (std::string_view step : {"resetpass", "resetkeys", "resetchannels", "off",
                                  "sanitize-payload", "clearselectors", "-@all"}) {
      apply_rule(user, step);
      if (step == "resetchannels" && pubsub_default_all != 0) apply_rule(user, "allchannels");
    }
  } else {
    return apply_selector_rule(user.selectors.front(), rule);
  }
  return {};
}

std::string AclStore::set_user(std::string_view name, std::span<const std::string_view> rules,
                               size_t* failed_index, std::string* reason) {
  if (has_spaces(name)) return "ERR Usernames can't contain spaces or null characters";
  // A selector may come split over several arguments: "(~a" "+get)" is "(~a +get)".
  std::vector<std::string> merged;
  std::string selector;
  bool open = false;
  std::string_view open_at;
  for (std::string_view rule : rules) {
    if (!open && !rule.empty() && rule.front() == '(' && rule.back() != ')') {
      selector.assign(rule);
      open = true;
      open_at = rule;
      continue;
    }
    if (open) {
      selector += ' ';
      selector += rule;
      if (!rule.empty() && rule.back() == ')') {
        merged.push_back(std::move(selector));
        open = false;
      }
      continue;
    }
    merged.emplace_back(rule);
  }
  if (open) {
    return "ERR Unmatched parenthesis in acl selector starting at '" + std::string(open_at) +
           "'.";
  }
  std::shared_ptr<AclUser> existing = find(name);
  AclUser staged;
  if (existing != nullptr) {
    staged = *existing;
  } else {
    staged.name = name;
    staged.selectors.push_back(new_selector(true));
  }
  for (size_t i = 0; i < merged.size(); ++i) {
    std::string error = apply_rule(staged, merged[i]);
    if (!error.empty()) {
      if (failed_index != nullptr) *failed_index = i;
      if (reason != nullptr) *reason = error;
      return "ERR Error in ACL SETUSER modifier '" + merged[i] + "': " + error;
    }
  }
  if (existing != nullptr) {
    if (channels_narrowed) channels_narrowed(*existing, staged);
    // In place: sessions authenticated as the user see the new rules at once.
    *existing = std::move(staged);
  } else {
    users_.emplace(std::string(name), std::make_shared<AclUser>(std::move(staged)));
  }
  return {};
}

bool AclStore::delete_user(std::string_view name) {
  auto it = users_.find(name);
  if (it == users_.end() || it->second == default_user_) return false;
  std::shared_ptr<AclUser> user = it->second;
  users_.erase(it);
  if (user_removed) user_removed(*user);
  return true;
}

void AclStore::set_default_password(std::string_view password) {
  apply_rule(*default_user_, "resetpass");
  if (password.empty()) {
    apply_rule(*default_user_, "nopass");
  } else {
    std::string rule = ">";
    rule += password;
    apply_rule(*default_user_, rule);
  }
}

std::shared_ptr<AclUser> AclStore::authenticate(std::string_view name,
                                                std::string_view password) const {
  std::shared_ptr<AclUser> user = find(name);
  if (user == nullptr || !user->enabled()) return nullptr;
  if (user->nopass()) return user;
  const std::string hash = acl_hash_password(password);
  bool match = false;
  for (const std::string& stored : user->passwords) match = same_hash(hash, stored) || match;
  return match ? user : nullptr;
}

std::string AclStore::describe_commands(const AclSelector& selector) const {
  // Redis's approximation: start from +@all or -@all (by the reserved bit), then apply, one at
  // a time, the category that best fits the bits still unexplained (more commands in common
  // than different, fewest differences), then fix the remaining commands one by one. A fake
  // selector tracks what the emitted rules give, so the result reads back to the same bitmap.
  std::string rules;
  AclSelector fake = new_selector(false);
  const bool additive = !selector.bit(AclSelector::kFutureCommandsBit);
  rules = additive ? "-@all " : "+@all ";
  apply_selector_rule(fake, additive ? "-@all" : "+@all");

  AclSelector temp = new_selector(false);
  temp.allowed = selector.allowed;
  bool applied[std::size(kCategoryNames)] = {};
  while (true) {
    int best = -1;
    unsigned long min_diff = INT_MAX, max_same = 0;
    for (size_t j = 0; j < std::size(kCategoryNames); ++j) {
      if (applied[j]) continue;
      unsigned long on, off;
      count_category(temp, 1u << j, &on, &off);
      const unsigned long diff = additive ? off : on;
      const unsigned long same = additive ? on : off;
      if (same > diff && (diff < min_diff || (diff == min_diff && same > max_same))) {
        best = static_cast<int>(j);
        min_diff = diff;
        max_same = same;
      }
    }
    if (best == -1) break;
    set_category(fake, 1u << best, additive);
    set_category(temp, 1u << best, !additive);
    rules += additive ? "+@" : "-@";
    rules += kCategoryNames[best];
    rules += ' ';
    applied[best] = true;
  }

  commands_.for_each([&](const Command& command) {
    const bool user_bit = selector.bit(command.acl_id);
    if (user_bit != fake.bit(command.acl_id)) {
      rules += user_bit ? '+' : '-';
      rules += command.full_name;
      rules += ' ';
      change_permission(fake, command, user_bit);
    }
    auto first = selector.first_args.find(command.acl_id);
    if (!user_bit && first != selector.first_args.end()) {
      for (const std::string& arg : first->second) {
        rules += '+';
        rules += command.full_name;
        rules += '|';
        rules += arg;
        rules += ' ';
      }
    }
  });
  rules.pop_back();
  return rules;
}

std::string AclStore::describe_keys(const AclSelector& selector) {
  if (selector.all_keys) return "~*";
  std::string out;
  for (const AclKeyPattern& key : selector.keys) {
    if (!out.empty()) out += ' ';
    out += pattern_text(key);
  }
  return out;
}

std::string AclStore::describe_channels(const AclSelector& selector) {
  if (selector.all_channels) return "&*";
  std::string out;
  for (const std::string& channel : selector.channels) {
    if (!out.empty()) out += ' ';
    out += '&';
    out += channel;
  }
  return out;
}

std::string AclStore::describe_user(const AclUser& user) const {
  std::string out;
  for (size_t i = 0; i < std::size(kFlagNames); ++i) {
    if (user.flags & (1u << i)) {
      out += kFlagNames[i];
      out += ' ';
    }
  }
  for (const std::string& hash : user.passwords) {
    out += '#';
    out += hash;
    out += ' ';
  }
  for (const AclSelector& selector : user.selectors) {
    std::string text;
    if (selector.all_keys) {
      text = "~* ";
    } else {
      for (const AclKeyPattern& key : selector.keys) text += pattern_text(key) + ' ';
    }
    if (selector.all_channels) {
      text += "&* ";
    } else {
      text += "resetchannels ";
      for (const std::string& channel : selector.channels) text += "&" + channel + ' ';
    }
    text += describe_commands(selector);
    out += selector.root ? text : " (" + text + ")";
  }
  return out;
}

AclDenial AclStore::check_selector(const AclSelector& selector, const Command& command,
                                   std::span<const std::string_view> args,
                                   const std::vector<KeyReference>* keys, int* position) const {
  if (!selector.all_commands && !command.has(kNoAuth) && !selector.bit(command.acl_id)) {
    auto first = selector.first_args.find(command.acl_id);
    if (args.size() < 2 || first == selector.first_args.end()) return AclDenial::kCommand;
    const size_t index = command.parent != nullptr ? 2 : 1;
    if (index >= args.size()) return AclDenial::kCommand;
    bool match = false;
    for (const std::string& arg : first->second) {
      match = match || equals_ignore_case(arg, args[index]);
    }
    if (!match) return AclDenial::kCommand;
  }
  if (!selector.all_keys && keys != nullptr) {
    for (const KeyReference& key : *keys) {
      uint8_t needed = 0;
      if (key.flags & kKeyAccess) needed |= kAclKeyRead;
      if (key.flags & (kKeyInsert | kKeyDelete | kKeyUpdate)) needed |= kAclKeyWrite;
      bool allowed = false;
      for (const AclKeyPattern& pattern : selector.keys) {
        if ((pattern.permissions & needed) != needed) continue;
        if (glob_match(pattern.pattern, args[key.position])) {
          allowed = true;
          break;
        }
      }
      if (!allowed) {
        *position = key.position;
        return AclDenial::kKey;
      }
    }
  }
  if (!selector.all_channels) {
    const ChannelArgs kind = channel_args(command);
    if (kind != ChannelArgs::kNone) {
      const size_t end = kind == ChannelArgs::kFirst ? std::min<size_t>(2, args.size())
                                                     : args.size();
      for (size_t i = 1; i < end; ++i) {
        if (!channel_in(selector.channels, args[i], kind == ChannelArgs::kAllLiteral)) {
          *position = static_cast<int>(i);
          return AclDenial::kChannel;
        }
      }
    }
  }
  return AclDenial::kNone;
}

AclVerdict AclStore::check(const AclUser& user, const Command& command,
                           std::span<const std::string_view> args) const {
  // The keys are found once for all selectors, and only when some selector needs them.
  std::vector<KeyReference> keys;
  bool keys_found = false;
  AclVerdict verdict{AclDenial::kCommand, 0};
  for (const AclSelector& selector : user.selectors) {
    if (!keys_found && !selector.all_keys && CommandTable::has_keys(command)) {
      keys = CommandTable::keys(command, args);
      keys_found = true;
    }
    int position = 0;
    const AclDenial denial =
        check_selector(selector, command, args, keys_found ? &keys : nullptr, &position);
    if (denial == AclDenial::kNone) return {};
    // The reason reported is the "strongest" any selector gave, and among equals the latest
    // argument, as Redis picks it.
    if (denial > verdict.denial || (denial == verdict.denial && position > verdict.position)) {
      verdict = {denial, position};
    }
  }
  return verdict;
}

bool AclStore::channel_allowed(const AclUser& user, std::string_view channel, bool literal) {
  for (const AclSelector& selector : user.selectors) {
    if (selector.all_channels || channel_in(selector.channels, channel, literal)) return true;
  }
  return false;
}

void AclStore::log(const ClientSession& session, const Command* running, AclDenial reason,
                   std::string_view context,
                   std::string_view object, std::string_view username, int64_t now_ms) {
  constexpr int64_t kGroupingWindowMs = 60000;
  std::string info = client_info ? client_info(session, running) : std::string();
  // Only the ten most recent entries are looked at for one to merge with, as in Redis.
  size_t scanned = 0;
  for (auto it = log_.begin(); it != log_.end() && scanned < 10; ++it, ++scanned) {
    if (it->reason == reason && it->context == context && it->object == object &&
        it->username == username && std::abs(it->created_ms - now_ms) <= kGroupingWindowMs) {
      AclLogEntry entry = std::move(*it);
      log_.erase(it);
      ++entry.count;
      entry.created_ms = now_ms;
      entry.client_info = std::move(info);
      log_.push_front(std::move(entry));
      return;
    }
  }
  log_.push_front(AclLogEntry{1, reason, std::string(context), std::string(object),
                              std::string(username), now_ms, std::move(info)});
  while (static_cast<int64_t>(log_.size()) > log_max_len) log_.pop_back();
}

}  // namespace keywarden

namespace keywarden {
namespace {

// The line's words split at single spaces, as sdssplitlen(line, " ") does: two spaces in a
// row make an empty word.
std::vector<std::string> split_at_spaces(std::string_view line) {
  std::vector<std::string> words;
  size_t start = 0;
  for (;;) {
    const size_t space = line.find(' ', start);
    words.emplace_back(line.substr(start, space == std::string_view::npos ? space : space - start));
    if (space == std::string_view::npos) break;
    start = space + 1;
  }
  return words;
}

std::string_view trim(std::string_view text, std::string_view set) {
  const size_t first = text.find_first_not_of(set);
  if (first == std::string_view::npos) return {};
  const size_t last = text.find_last_not_of(set);
  return text.substr(first, last - first + 1);
}

}  // namespace

std::string AclStore::load_file() {
  std::ifstream in(acl_file, std::ios::binary);
  if (!in) {
    return "Error loading ACLs, opening file '" + acl_file + "': " + std::strerror(errno);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return load_text(text.str());
}

std::string AclStore::load_text(std::string_view text) {
  std::string errors;
  auto where = [&](int line) { return acl_file + ":" + std::to_string(line); };
  // The users the file defines, built aside: nothing changes unless every line is valid.
  std::map<std::string, std::shared_ptr<AclUser>, std::less<>> fresh;
  auto fresh_default = std::make_shared<AclUser>();
  fresh_default->name = "default";
  fresh_default->selectors.push_back(new_selector(true));
  for (std::string_view rule : {"+@all", "~*", "&*", "on", "nopass"}) {
    apply_rule(*fresh_default, rule);
  }
  std::set<std::string, std::less<>> seen;
  AclUser fake;
  fake.name = "__fakeuser__";
  int line_number = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view raw = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    const std::string_view line = trim(raw, " \t\r\n");
    if (line.empty()) continue;
    std::vector<std::string> words = split_at_spaces(line);
    if (words[0] != "user" || words.size() < 2) {
      errors += where(line_number) + " should start with user keyword followed by the username. ";
      continue;
    }
    const std::string& name = words[1];
    if (has_spaces(name)) {
      errors += "'" + where(line_number) + ": username '" + name +
                "' contains invalid characters. ";
      continue;
    }
    if (!seen.insert(name).second) {
      errors += "WARNING: Duplicate user '" + name + "' found on line " +
                std::to_string(line_number) + ". ";
      continue;
    }
    // Selectors split over several words come together again: "(~a" "+get)".
    std::vector<std::string> rules;
    bool open = false;
    for (size_t i = 2; i < words.size(); ++i) {
      const std::string& word = words[i];
      if (open) {
        rules.back() += ' ';
        rules.back() += word;
        if (!word.empty() && word.back() == ')') open = false;
      } else {
        rules.push_back(word);
        open = !word.empty() && word.front() == '(' && word.back() != ')';
      }
    }
    if (open) {
      errors += where(line_number) + ": Unmatched parenthesis in selector definition. ";
      continue;
    }
    for (std::string& rule : rules) rule = std::string(trim(rule, "\t\r\n"));
    // Checked on a scratch user first. Unknown commands and categories are named (they are
    // no secret); of the other errors only the first, since it may explain the rest.
    fake.flags = AclUser::kOff;
    fake.passwords.clear();
    fake.selectors.assign(1, new_selector(true));
    apply_rule(fake, "reset");
    bool syntax_error = false;
    for (const std::string& rule : rules) {
      std::string error = apply_rule(fake, rule);
      if (error.empty()) continue;
      if (error == kUnknownName) {
        errors += where(line_number) + ": Error in applying operation '" + rule + "': " + error +
                  ". ";
      } else if (!syntax_error) {
        errors += where(line_number) + ": " + error + ". ";
        syntax_error = true;
      }
    }
    if (!errors.empty()) continue;
    // A new user, the default one too (as in Redis: its line starts from a new user's state).
    auto user = std::make_shared<AclUser>();
    user->name = name;
    user->selectors.push_back(new_selector(true));
    for (const std::string& rule : rules) apply_rule(*user, rule);
    fresh[name] = std::move(user);
  }
  if (!errors.empty()) {
    return errors +
           "WARNING: ACL errors detected, no change to the previously active ACL rules was "
           "performed";
  }
  // The default user object stays (sessions hold it); it takes the file's definition, or a
  // new default user's when the file has none. Every other former user goes, with its clients.
  auto defined = fresh.find("default");
  *default_user_ = std::move(defined != fresh.end() ? *defined->second : *fresh_default);
  fresh["default"] = default_user_;
  std::map<std::string, std::shared_ptr<AclUser>, std::less<>> old;
  old.swap(users_);
  users_ = std::move(fresh);
  for (const auto& [name, user] : old) {
    if (user != default_user_ && user_removed) user_removed(*user);
  }
  return "";
}

std::vector<std::string> AclStore::user_lines() const {
  std::vector<std::string> lines;
  for (const auto& [name, user] : users_) {
    lines.push_back("user " + name + " " + describe_user(*user));
  }
  return lines;
}

std::string AclStore::save_file() const {
  std::string text;
  for (const std::string& line : user_lines()) text += line + "\n";
  // A temporary file beside the target, renamed over it: the file is never half written.
  const std::string temporary =
      acl_file + ".tmp-" + std::to_string(::getpid()) + "-" +
      std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return "Opening temp ACL file for ACL SAVE: " + std::string(std::strerror(errno));
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t count = ::write(fd, text.data() + written, text.size() - written);
    if (count < 0) {
      if (errno == EINTR) continue;
      const std::string error = std::strerror(errno);
      ::close(fd);
      ::unlink(temporary.c_str());
      return "Writing ACL file for ACL SAVE: " + error;
    }
    written += static_cast<size_t>(count);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string error = std::strerror(errno);
    ::unlink(temporary.c_str());
    return "Failed to fsync ACL file for ACL SAVE: " + error;
  }
  if (::rename(temporary.c_str(), acl_file.c_str()) != 0) {
    const std::string error = std::strerror(errno);
    ::unlink(temporary.c_str());
    return "Renaming ACL file for ACL SAVE: " + error;
  }
  return "";
}

}  // namespace keywarden
