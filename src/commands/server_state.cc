#include "commands/server_state.h"

#include "commands/notifications.h"

namespace keywarden {

ServerState::ServerState(const Clock& clock, int database_count)
    : clock_(clock), keyspace_(database_count, clock) {
  keyspace_.set_listener(this);
}

void ServerState::count_error(std::string_view text) {
  ++stats_.total_error_replies;
  // Redis takes the code from before the first space within 32 bytes, else calls it ERR.
  size_t space = text.substr(0, 32).find(' ');
  std::string_view code = space == std::string_view::npos ? "ERR" : text.substr(0, space);
  auto it = stats_.error_counts.find(code);
  if (it == stats_.error_counts.end()) {
    stats_.error_counts.emplace(std::string(code), 1);
  } else {
    ++it->second;
  }
}

void ServerState::key_expired(int db, std::string_view key) {
  propagator_.add(db, {keyspace_.lazy_free().settings().lazy_expire ? "UNLINK" : "DEL", key});
  // A deletion by expiry is a change for WATCH, as in Redis 7.0.
  watches_.touch(keyspace_.db(db), key);
  blocking_.signal(db, key);
  locks_.expired(db, key);
  tracking_.invalidate(key);
  notify_keyspace_event(kNotifyExpired, "expired", key, db);
}

void ServerState::hash_fields_expired(int db, std::string_view key,
                                      const std::vector<std::string>& fields, bool key_deleted) {
  // One HDEL per field, as Redis 8 propagates fields it expired, so that replicas and the AOF
  // delete exactly what this side deleted (a replica never expires fields itself).
  for (const std::string& field : fields) propagator_.add(db, {"HDEL", key, field});
  watches_.touch(keyspace_.db(db), key);
  tracking_.invalidate(key);
  notify_keyspace_event(kNotifyHash, "hexpired", key, db);
  if (key_deleted) notify_keyspace_event(kNotifyGeneric, "del", key, db);
}

void ServerState::key_evicted(int db, std::string_view key, bool lazy) {
  propagator_.add(db, {lazy ? "UNLINK" : "DEL", key});
  watches_.touch(keyspace_.db(db), key);
  blocking_.signal(db, key);
  locks_.released(db, key);
  tracking_.invalidate(key);
  notify_keyspace_event(kNotifyEvicted, "evicted", key, db);
}

void ServerState::publish_keyspace_event(std::string_view event, std::string_view key, int db) {
  // Nobody listening: nothing to build (the usual case even with notifications on).
  if (pubsub_.idle()) return;
  uint32_t flags = settings_.notify_keyspace_events;
  std::string channel;
  if (flags & kNotifyKeyspace) {
    channel = "__keyspace@" + std::to_string(db) + "__:";
    channel += key;
    pubsub_.publish(channel, event);
  }
  if (flags & kNotifyKeyevent) {
    channel = "__keyevent@" + std::to_string(db) + "__:";
    channel += event;
    pubsub_.publish(channel, key);
  }
}

}  // namespace keywarden
