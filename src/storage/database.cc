#include "storage/database.h"

#include <utility>

namespace keywarden {

Database::Database(int index, KeyspaceListener* listener) : index_(index), listener_(listener) {}

Database::~Database() { clear(); }

Entry* Database::find_raw(std::string_view key) { return table_.find(key); }

Entry* Database::lookup(std::string_view key, int64_t now_ms) {
  Entry* entry = table_.find(key);
  if (entry != nullptr && is_expired(entry, now_ms)) {
    expire(entry);
    return nullptr;
  }
  return entry;
}

Entry* Database::add(std::string_view key, Value value) {
  auto* entry = new Entry(key, std::move(value));
  table_.insert(entry);
  return entry;
}

void Database::overwrite(Entry* entry, Value value, bool keep_ttl) {
  entry->value = std::move(value);
  if (!keep_ttl) set_expiry(entry, kNoExpiry);
}

void Database::set_expiry(Entry* entry, int64_t deadline_ms) {
  entry->expire_at_ms = deadline_ms;
  if (deadline_ms == kNoExpiry) {
    expiry_.remove(entry);
  } else {
    expiry_.set(entry, deadline_ms);
  }
}

bool Database::remove(std::string_view key) {
  Entry* entry = table_.find(key);
  if (entry == nullptr) return false;
  remove(entry);
  return true;
}

void Database::remove(Entry* entry) {
  expiry_.remove(entry);
  table_.remove(entry);
  delete entry;
}

void Database::expire(Entry* entry) {
  expiry_.remove(entry);
  table_.remove(entry);
  if (listener_ != nullptr) listener_->key_expired(index_, entry->key);
  delete entry;
}

void Database::move_entry(Entry* entry, Database& target, std::string_view new_key) {
  int64_t deadline = entry->expire_at_ms;
  expiry_.remove(entry);
  table_.remove(entry);
  entry->key.assign(new_key);
  entry->next = nullptr;
  target.table_.insert(entry);
  if (deadline != kNoExpiry) target.expiry_.set(entry, deadline);
}

size_t Database::clear() {
  size_t count = table_.size();
  expiry_.clear();
  table_.clear([](Entry* entry) { delete entry; });
  return count;
}

void Database::swap_contents(Database& other) {
  std::swap(table_, other.table_);
  std::swap(expiry_, other.expiry_);
}

uint64_t Database::scan(uint64_t cursor, const std::function<void(Entry*)>& visit) {
  return table_.scan(cursor, visit);
}

Entry* Database::random_entry(std::mt19937_64& rng) { return table_.random_node(rng); }

}  // namespace keywarden
