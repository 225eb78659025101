#include "commands/context.h"

#include "commands/errors.h"

namespace keywarden {

Entry* CommandContext::lookup_read(std::string_view key, uint8_t flags) {
  Entry* entry = db().lookup(key, now_ms);
  if (entry == nullptr) {
    ++server.stats().keyspace_misses;
    if ((flags & kLookupNoNotify) == 0) notify(kNotifyKeyMiss, "keymiss", key);
  } else {
    ++server.stats().keyspace_hits;
    touch_if_allowed(entry, flags);
  }
  return entry;
}

const Entry* CommandContext::lookup_read_typed(std::string_view key, ValueType type,
                                              bool* wrong_type) {
  *wrong_type = false;
  const Entry* entry = lookup_read(key);
  if (entry == nullptr || entry->value.type() == type) return entry;
  *wrong_type = true;
  error(errors::kWrongType);
  return nullptr;
}

Entry* CommandContext::lookup_write(Database& database, std::string_view key, uint8_t flags) {
  Entry* entry = database.lookup(key, now_ms);
  if (entry != nullptr) touch_if_allowed(entry, flags);
  return entry;
}

void CommandContext::touch_if_allowed(Entry* entry, uint8_t flags) {
  if ((flags & kLookupTouchAlways) == 0 && ((flags & kLookupNoTouch) != 0 || session.no_touch)) {
    return;
  }
  record_access(entry);
}

void CommandContext::record_access(Entry* entry) {
  const CommandSettings& settings = server.settings();
  if (policy_uses_lfu(settings.maxmemory_policy)) {
    entry->access_clock =
        access_clock::lfu_accessed(entry->access_clock, now_ms, settings.lfu_log_factor,
                                   settings.lfu_decay_time, server.keyspace().rng());
  } else {
    entry->access_clock = access_clock::lru_stamp(now_ms);
  }
}

void CommandContext::stamp_new_entries() {
  server.keyspace().set_new_entry_access_clock(
      policy_uses_lfu(server.settings().maxmemory_policy) ? access_clock::lfu_initial(now_ms)
                                                          : access_clock::lru_stamp(now_ms));
}

void CommandContext::error(std::string_view text) {
  failed_ = true;
  server.count_error(text);
  reply.error(text);
}

}  // namespace keywarden
