#include "storage/database.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <new>
#include <utility>

#include "storage/lazy_free.h"
#include "storage/memory_accounting.h"

namespace keywarden {

namespace access_clock {
namespace {
constexpr uint32_t kLfuMinutesMask = 0xffff;
constexpr uint32_t kLfuMaxCount = 255;

uint32_t minutes_now(int64_t now_ms) {
  return static_cast<uint32_t>(now_ms / 60'000) & kLfuMinutesMask;
}
}  // namespace

uint32_t lru_stamp(int64_t now_ms) { return static_cast<uint32_t>(now_ms / 1000) & kLruMax; }

int64_t lru_idle_ms(uint32_t stamp, int64_t now_ms) {
  const uint32_t now = lru_stamp(now_ms);
  stamp &= kLruMax;
  const int64_t seconds = now >= stamp ? now - stamp : int64_t{now} + (kLruMax - stamp);
  return seconds * 1000;
}

uint32_t lfu_initial(int64_t now_ms) { return (minutes_now(now_ms) << 8) | kLfuInitialCount; }

uint32_t lfu_decayed_count(uint32_t stamp, int64_t now_ms, int64_t decay_minutes) {
  const uint32_t last = (stamp >> 8) & kLfuMinutesMask;
  const uint32_t count = stamp & 0xff;
  if (decay_minutes <= 0) return count;
  const uint32_t now = minutes_now(now_ms);
  const uint32_t elapsed = now >= last ? now - last : kLfuMinutesMask - last + now;
  const uint64_t periods = elapsed / static_cast<uint64_t>(decay_minutes);
  return periods >= count ? 0 : count - static_cast<uint32_t>(periods);
}

uint32_t lfu_accessed(uint32_t stamp, int64_t now_ms, int64_t log_factor, int64_t decay_minutes,
                      std::mt19937_64& rng) {
  uint32_t count = lfu_decayed_count(stamp, now_ms, decay_minutes);
  if (count < kLfuMaxCount) {
    // The chance of an increment is 1 / (excess * log_factor + 1), where the excess is how far
    // the counter is above its starting value.
    const double excess = count > kLfuInitialCount ? count - kLfuInitialCount : 0;
    const double chance = 1.0 / (excess * static_cast<double>(log_factor) + 1.0);
    const double draw = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    if (draw < chance) ++count;
  }
  return (minutes_now(now_ms) << 8) | count;
}
}  // namespace access_clock


size_t Database::memory_usage(const Entry* entry) const {
  size_t bytes = memory::allocation_size(entry->allocation_bytes());
  bytes += entry->value.payload_bytes();
  // Its share of the bucket words and of the crowded buckets' arrays at the current load.
  const size_t keys = std::max<size_t>(1, table_.size());
  bytes += (table_.bucket_memory() + keys - 1) / keys;
  if (entry->has_expiry()) bytes += expiry_.memory_bytes() / std::max<size_t>(1, expiry_.size());
  return bytes;
}

Entry* Entry::create(std::string_view key, Value value, bool with_expiry) {
  char* memory = static_cast<char*>(::operator new(allocation_bytes(key.size(), with_expiry)));
  if (with_expiry) {
    new (memory) Prefix();
    memory += sizeof(Prefix);
  }
  auto* entry = new (memory) Entry(key.size(), std::move(value), with_expiry);
  char* tail = memory + kFieldBytes;
  if (key.size() >= kLongKey) {
    const auto size = static_cast<uint32_t>(key.size());
    std::memcpy(tail, &size, sizeof size);
    tail += sizeof size;
  }
  std::memcpy(tail, key.data(), key.size());
  assert(entry->key() == key);
  return entry;
}

void Entry::destroy(Entry* entry) {
  const size_t bytes = entry->allocation_bytes();
  void* memory = entry->has_expiry() ? static_cast<void*>(entry->prefix()) : entry;
  entry->~Entry();
  ::operator delete(memory, bytes);
}

Entry* Entry::reshape(Entry* entry, bool with_expiry) {
  Entry* fresh = create(entry->key(), Value(), with_expiry);
  fresh->value = std::move(entry->value);
  fresh->access_clock = entry->access_clock;
  return fresh;
}

Entry* Entry::rekey(Entry* entry, std::string_view new_key, bool with_expiry) {
  assert(!entry->has_expiry() || entry->expiry_slot() == kNotInExpiryIndex);
  Entry* renamed = create(new_key, std::move(entry->value), with_expiry);
  renamed->access_clock = entry->access_clock;
  destroy(entry);
  return renamed;
}

Database::Database(int index, KeyspaceListener* listener, const uint32_t* new_entry_access_clock,
                   LazyFree* lazy_free)
    : index_(index),
      listener_(listener),
      new_entry_access_clock_(new_entry_access_clock),
      lazy_free_(lazy_free) {}

Database::~Database() { clear(); }

Entry* Database::find_raw(std::string_view key) { return table_.find(key); }

Entry* Database::lookup(std::string_view key, int64_t now_ms) {
  Entry* entry = table_.find(key);
  if (entry == nullptr) return nullptr;
  if (is_expired(entry, now_ms)) {
    if (expired_visible_) return entry;
    expire(entry);
    return nullptr;
  }
  // The field index is empty unless some hash has field deadlines: one load for everyone else.
  if (!field_expiry_.empty() && !expiry_held_ && has_due_fields(entry, now_ms)) {
    bool key_deleted = false;
    expire_fields(entry, now_ms, SIZE_MAX, &key_deleted);
    if (key_deleted) return nullptr;
  }
  return entry;
}

void Database::refresh_field_expiry(Entry* entry) {
  if (entry->value.type() != ValueType::kHash) return;
  const int64_t earliest = entry->value.as<HashValue>().earliest_deadline();
  if (earliest == INT64_MAX) {
    field_expiry_.remove(entry);
  } else {
    field_expiry_.set(entry, earliest);
  }
}

size_t Database::expire_fields(Entry* entry, int64_t now_ms, size_t limit, bool* key_deleted) {
  *key_deleted = false;
  if (expiry_held_) return 0;
  HashValue& hash = entry->value.as<HashValue>();
  std::vector<std::string> fields;
  hash.remove_due(now_ms, limit,
                  [&](std::string_view field) { fields.emplace_back(field); });
  if (hash.empty()) {
    // The key goes with its last field; the key string must outlive the entry for the
    // listener, which hears of it after the entry left the indexes, as for key expiry.
    const std::string key(entry->key());
    remove(entry, lazy_free_ != nullptr && lazy_free_->settings().lazy_expire);
    *key_deleted = true;
    if (listener_ != nullptr && !fields.empty()) {
      listener_->hash_fields_expired(index_, key, fields, true);
    }
    return fields.size();
  }
  refresh_field_expiry(entry);
  if (listener_ != nullptr && !fields.empty()) {
    listener_->hash_fields_expired(index_, entry->key(), fields, false);
  }
  return fields.size();
}

void Database::drop_hidden_expired(std::string_view key) {
  if (Entry* hidden = table_.find(key)) expire_now(hidden);
}

Entry* Database::add(std::string_view key, Value value, int64_t deadline_ms) {
  if (expiry_held_) drop_hidden_expired(key);
  Entry* entry = Entry::create(key, std::move(value), deadline_ms != kNoExpiry);
  if (new_entry_access_clock_ != nullptr) entry->access_clock = *new_entry_access_clock_;
  table_.insert(entry);
  if (deadline_ms != kNoExpiry) expiry_.set(entry, deadline_ms);
  // A hash restored, loaded or copied with field deadlines.
  refresh_field_expiry(entry);
  return entry;
}

Entry* Database::overwrite(Entry* entry, Value value, bool keep_ttl, bool lazy) {
  // The old value leaves the entry before it is released, so that it is unreachable from the
  // keyspace by the time another thread may free it.
  field_expiry_.remove(entry);
  Value old = std::exchange(entry->value, std::move(value));
  release_value(std::move(old), lazy);
  if (!keep_ttl) entry = set_expiry(entry, kNoExpiry);
  refresh_field_expiry(entry);
  return entry;
}

Entry* Database::reshape(Entry* entry, bool with_expiry) {
  Entry* fresh = Entry::reshape(entry, with_expiry);
  table_.replace(entry, fresh);
  // A hash's slot in the field index lives in the hash, which moved with the value.
  field_expiry_.replace(entry, fresh);
  Entry::destroy(entry);
  return fresh;
}

Entry* Database::set_expiry(Entry* entry, int64_t deadline_ms) {
  if (deadline_ms == kNoExpiry) {
    if (!entry->has_expiry()) return entry;
    expiry_.remove(entry);
    return reshape(entry, false);
  }
  if (!entry->has_expiry()) entry = reshape(entry, true);
  expiry_.set(entry, deadline_ms);
  return entry;
}

bool Database::remove(std::string_view key) {
  Entry* entry = table_.find(key);
  if (entry == nullptr) return false;
  remove(entry);
  return true;
}

void Database::release_value(Value&& value, bool lazy) {
  if (lazy_free_ != nullptr) {
    lazy_free_->release(std::move(value), lazy);
  } else {
    Value doomed = std::move(value);
  }
}

void Database::remove(Entry* entry, bool lazy) {
  expiry_.remove(entry);
  field_expiry_.remove(entry);
  table_.remove(entry);
  if (lazy) release_value(std::move(entry->value), true);
  Entry::destroy(entry);
}

void Database::expire(Entry* entry) {
  if (!expiry_held_) expire_now(entry);
}

void Database::expire_now(Entry* entry) {
  expiry_.remove(entry);
  field_expiry_.remove(entry);
  table_.remove(entry);
  if (listener_ != nullptr) listener_->key_expired(index_, entry->key());
  if (lazy_free_ != nullptr && lazy_free_->settings().lazy_expire) {
    release_value(std::move(entry->value), true);
  }
  Entry::destroy(entry);
}

Entry* Database::move_entry(Entry* entry, Database& target, std::string_view new_key) {
  if (target.expiry_held_) {
    Entry* hidden = target.table_.find(new_key);
    if (hidden != nullptr && hidden != entry) target.expire_now(hidden);
  }
  const int64_t deadline_ms = deadline_of(entry);
  expiry_.remove(entry);
  field_expiry_.remove(entry);
  table_.remove(entry);
  Entry* moved = Entry::rekey(entry, new_key, deadline_ms != kNoExpiry);
  target.table_.insert(moved);
  if (deadline_ms != kNoExpiry) target.expiry_.set(moved, deadline_ms);
  target.refresh_field_expiry(moved);
  return moved;
}

size_t Database::clear(bool lazy) {
  size_t count = table_.size();
  if (lazy && lazy_free_ != nullptr && count > 0) {
    // The database starts over with fresh, empty indexes; the old ones belong to the thread.
    // The field index only points at entries that are going: drop it without visiting them.
    field_expiry_.abandon();
    lazy_free_->release_entries(std::exchange(table_, EntryTable()),
                                std::exchange(expiry_, ExpiryIndex()));
    return count;
  }
  expiry_.clear();
  field_expiry_.clear();
  table_.clear([](Entry* entry) { Entry::destroy(entry); });
  return count;
}

void Database::swap_contents(Database& other) {
  std::swap(table_, other.table_);
  std::swap(expiry_, other.expiry_);
  std::swap(field_expiry_, other.field_expiry_);
}

uint64_t Database::scan(uint64_t cursor, const std::function<void(Entry*)>& visit) {
  return table_.scan(cursor, visit);
}

Entry* Database::random_entry(std::mt19937_64& rng) { return table_.random_node(rng); }

}  // namespace keywarden
