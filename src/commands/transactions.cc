#include "commands/transactions.h"

#include <algorithm>

#include "storage/database.h"
#include "storage/keyspace.h"

namespace keywarden {
namespace {

// True when `key` is stored in `database` but past its deadline (Redis's keyIsExpired: no
// deletion, no statistics).
bool stored_but_expired(Database& database, std::string_view key, int64_t now_ms) {
  Entry* entry = database.find_raw(key);
  return entry != nullptr && database.is_expired(entry, now_ms);
}

}  // namespace

size_t ClientTransaction::memory_overhead() const {
  // Sized the way Redis 7.0 sizes it, so CLIENT LIST reads alike: argument bytes plus one
  // pointer per argument, a 24-byte slot per queue entry (the queue starts at 2 and doubles),
  // and 56 bytes per watched key.
  // The argument bytes are counted as commands are queued: client eviction asks after every
  // read, and a walk of a long queue each time would be quadratic.
  size_t bytes = queued_arg_bytes_;
  if (!queue_.empty()) {
    size_t slots = 2;
    while (slots < queue_.size()) slots *= 2;
    bytes += slots * 24;
  }
  return bytes + watched_.size() * 56;
}

std::vector<std::string_view> QueuedCommand::views() const {
  std::vector<std::string_view> out(args.begin(), args.end());
  for (const OwnedArgument& big : owned) out[big.index] = big.block.view();
  return out;
}

void ClientTransaction::queue(Command* command, std::span<const std::string_view> args,
                              OwnedArguments owned) {
  // An aborted transaction will never run: keeping its commands would only waste memory.
  if (dirty_exec_ || dirty_cas_) return;
  QueuedCommand queued{command, {}, {}};
  queued.args.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    auto big = std::find_if(owned.begin(), owned.end(),
                            [i](const OwnedArgument& o) { return o.index == i && o.block; });
    if (big != owned.end()) {
      queued.args.emplace_back();
      queued.owned.push_back({i, std::move(big->block)});
    } else {
      queued.args.emplace_back(args[i]);
    }
    queued_arg_bytes_ += args[i].size() + sizeof(void*);
  }
  queue_.push_back(std::move(queued));
}

void ClientTransaction::discard() {
  in_multi_ = false;
  dirty_exec_ = false;
  dirty_cas_ = false;
  queue_.clear();
  queued_arg_bytes_ = 0;
  unwatch_all();
}

WatchedKey* ClientTransaction::find_watched(int db, std::string_view key) {
  for (WatchedKey& watched : watched_) {
    if (watched.db == db && watched.key == key) return &watched;
  }
  return nullptr;
}

void ClientTransaction::watch(WatchRegistry& registry, int db, std::string_view key,
                              bool expired_now) {
  registry_ = &registry;
  if (find_watched(db, key) != nullptr) return;
  watched_.push_back(WatchedKey{db, std::string(key), expired_now});
  registry.add(db, key, this);
}

void ClientTransaction::unwatch_all() {
  if (watched_.empty()) return;
  for (const WatchedKey& watched : watched_) registry_->remove(watched.db, watched.key, this);
  watched_.clear();
}

bool ClientTransaction::watched_key_expired(Keyspace& keyspace, int64_t now_ms) const {
  for (const WatchedKey& watched : watched_) {
    if (watched.expired_at_watch) continue;
    if (stored_but_expired(keyspace.db(watched.db), watched.key, now_ms)) return true;
  }
  return false;
}

void WatchRegistry::add(int db, std::string_view key, ClientTransaction* client) {
  if (static_cast<size_t>(db) >= by_db_.size()) by_db_.resize(db + 1);
  by_db_[db][std::string(key)].push_back(client);
  ++watch_count_;
}

void WatchRegistry::remove(int db, const std::string& key, ClientTransaction* client) {
  KeyMap& keys = by_db_[db];
  auto it = keys.find(key);
  if (it == keys.end()) return;
  Watchers& watchers = it->second;
  auto position = std::find(watchers.begin(), watchers.end(), client);
  if (position == watchers.end()) return;
  watchers.erase(position);
  --watch_count_;
  if (watchers.empty()) keys.erase(it);
}

void WatchRegistry::mark_dirty(ClientTransaction* client) {
  client->dirty_cas_ = true;
  // EXEC's answer is decided: later touches need not find this client again.
  client->unwatch_all();
}

void WatchRegistry::touch(Database& database, std::string_view key) {
  if (watch_count_ == 0) return;
  const int db = database.index();
  if (static_cast<size_t>(db) >= by_db_.size()) return;
  auto it = by_db_[db].find(std::string(key));
  if (it == by_db_[db].end()) return;
  // Marking a client dirty unwatches it, which edits this list: walk a copy.
  const Watchers watchers = it->second;
  for (ClientTransaction* client : watchers) {
    WatchedKey* watched = client->find_watched(db, key);
    if (watched == nullptr) continue;
    if (watched->expired_at_watch) {
      // Watched when already expired: its deletion changes nothing logically, and from then
      // on it is an absent key like any other. (Redis 7.0 also skips a touch that finds it
      // still stored, which no command path produces: writes delete an expired key first.)
      if (database.find_raw(key) == nullptr) watched->expired_at_watch = false;
      continue;
    }
    mark_dirty(client);
  }
}

void WatchRegistry::touch_all_in_db(Database& emptied, Database* replaced_with, int64_t now_ms) {
  if (watch_count_ == 0) return;
  const int db = emptied.index();
  if (static_cast<size_t>(db) >= by_db_.size() || by_db_[db].empty()) return;
  std::vector<std::string> keys;
  keys.reserve(by_db_[db].size());
  for (const auto& [key, watchers] : by_db_[db]) keys.push_back(key);

  for (const std::string& key : keys) {
    auto it = by_db_[db].find(key);
    if (it == by_db_[db].end()) continue;
    const bool in_emptied = emptied.find_raw(key) != nullptr;
    const bool in_replacement = replaced_with != nullptr && replaced_with->find_raw(key);
    if (!in_emptied && !in_replacement) continue;
    const bool replacement_expired =
        in_replacement && stored_but_expired(*replaced_with, key, now_ms);
    const Watchers watchers = it->second;
    for (ClientTransaction* client : watchers) {
      WatchedKey* watched = client->find_watched(db, key);
      if (watched == nullptr) continue;
      if (watched->expired_at_watch) {
        if (!in_replacement) {
          watched->expired_at_watch = false;  // the expired key is simply gone
          continue;
        }
        if (replacement_expired) continue;  // expired before, expired after
      } else if (!in_emptied && replacement_expired) {
        // An absent key becomes an already expired one: logically still absent.
        watched->expired_at_watch = true;
        continue;
      }
      mark_dirty(client);
    }
  }
}

}  // namespace keywarden
