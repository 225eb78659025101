// Blocked clients: the registry of waiters per key, their deadlines, and the ready keys.
#include "commands/blocking.h"

#include <algorithm>
#include <cmath>

#include "commands/client_session.h"
#include "commands/errors.h"
#include "common/number.h"

namespace keywarden {

BlockedCommand::~BlockedCommand() {
  if (registry_ != nullptr) registry_->unblock(*session_);
}

BlockingRegistry::KeyMap& BlockingRegistry::keys_of(int db) {
  if (static_cast<size_t>(db) >= by_db_.size()) by_db_.resize(db + 1);
  return by_db_[db];
}

void BlockingRegistry::block(ClientSession& session, const Command& command,
                             std::span<const std::string_view> args, int db,
                             std::span<const std::string_view> keys, ValueType type,
                             int64_t deadline_ms, int64_t now_ms) {
  BlockedCommand& blocked = session.blocked;
  blocked.registry_ = this;
  blocked.session_ = &session;
  blocked.db_ = db;
  blocked.command_ = &command;
  blocked.args_.assign(args.begin(), args.end());
  blocked.keys_.clear();
  KeyMap& map = keys_of(db);
  for (std::string_view key : keys) {
    // BLPOP k k waits once on k.
    if (std::find(blocked.keys_.begin(), blocked.keys_.end(), key) != blocked.keys_.end()) {
      continue;
    }
    blocked.keys_.emplace_back(key);
    map[std::string(key)].push_back(&session);
  }
  blocked.type_ = type;
  blocked.deadline_ms_ = deadline_ms;
  blocked.since_ms_ = now_ms;
  if (deadline_ms != 0) blocked.deadline_entry_ = deadlines_.emplace(deadline_ms, &session);
  ++blocked_count_;
}

void BlockingRegistry::unblock(ClientSession& session) {
  BlockedCommand& blocked = session.blocked;
  if (blocked.registry_ != this) return;
  KeyMap& map = keys_of(blocked.db_);
  for (const std::string& key : blocked.keys_) {
    auto found = map.find(key);
    if (found == map.end()) continue;
    std::erase(found->second, &session);
    if (found->second.empty()) map.erase(found);
  }
  if (blocked.deadline_ms_ != 0) deadlines_.erase(blocked.deadline_entry_);
  blocked.registry_ = nullptr;
  blocked.reply_on_timeout_ = false;
  blocked.timing_out_ = false;
  blocked.wakes_on_any_change_ = false;
  blocked.args_.clear();
  blocked.keys_.clear();
  --blocked_count_;
}

void BlockingRegistry::signal_slow(int db, std::string_view key) {
  if (static_cast<size_t>(db) >= by_db_.size()) return;
  const KeyMap& map = by_db_[db];
  if (map.find(std::string(key)) == map.end()) return;
  for (const ReadyKey& ready : ready_) {
    if (ready.db == db && ready.key == key) return;
  }
  ready_.push_back({db, std::string(key)});
}

void BlockingRegistry::signal_all_in_db(int db) {
  if (static_cast<size_t>(db) >= by_db_.size()) return;
  for (const auto& [key, waiters] : by_db_[db]) signal_slow(db, key);
}

std::vector<BlockingRegistry::ReadyKey> BlockingRegistry::take_ready() {
  std::vector<ReadyKey> taken;
  taken.swap(ready_);
  return taken;
}

std::vector<ClientSession*> BlockingRegistry::waiters(int db, std::string_view key) const {
  if (static_cast<size_t>(db) >= by_db_.size()) return {};
  auto found = by_db_[db].find(std::string(key));
  if (found == by_db_[db].end()) return {};
  return found->second;
}

std::vector<ClientSession*> BlockingRegistry::timed_out(int64_t now_ms) const {
  std::vector<ClientSession*> due;
  for (auto it = deadlines_.begin(); it != deadlines_.end() && it->first < now_ms; ++it) {
    due.push_back(it->second);
  }
  return due;
}

bool parse_block_timeout(std::string_view text, int64_t now_ms, int64_t* deadline_ms,
                         std::string_view* error) {
  long double seconds;
  if (!parse_long_double(text, &seconds)) {
    *error = errors::kTimeoutNotFloat;
    return false;
  }
  // Redis 7.0 rounds seconds × 1000 up to whole milliseconds (ceill), so any positive
  // fraction, however small, waits at least a millisecond: "0.001" is 0.99999... ms in binary
  // and must not become 0, which means "forever". A tiny negative value rounds up to 0 and
  // waits forever, as in Redis. A value beyond the range of int64 becomes INT64_MIN on x86-64,
  // hence "negative" for 1e400 or inf.
  const long double ms = std::ceil(seconds * 1000.0L);
  constexpr long double kLimit = 9223372036854775808.0L;
  const int64_t whole = (std::isnan(ms) || ms >= kLimit || ms < -kLimit)
                            ? INT64_MIN
                            : static_cast<int64_t>(ms);
  if (whole < 0) {
    *error = errors::kTimeoutNegative;
    return false;
  }
  if (whole == 0) {
    *deadline_ms = 0;
  } else {
    // Saturates where Redis would wrap; either way the client waits practically forever.
    *deadline_ms = whole > INT64_MAX - now_ms ? INT64_MAX : whole + now_ms;
  }
  return true;
}

}  // namespace keywarden
