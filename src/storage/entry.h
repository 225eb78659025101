// One key of a database: the key bytes, the value, the eviction bits, and the links the two
// indexes need (the hash chain and the position in the expiry index). Entries are owned by
// their Database and reached through its hash table; the expiry index points at them without
// owning them.
//
// The deadline of a volatile key lives in its expiry index slot, not in the entry: the entry
// only records where that slot is (expiry_slot, kNotInExpiryIndex when the key has no TTL), so
// a key pays for its deadline once, and a key without one does not pay for it at all. Reading
// a deadline is one load from the index array (Database::deadline_of), where Redis looks the
// key up a second time in its expires table.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "types/value.h"

namespace keywarden {

inline constexpr int64_t kNoExpiry = -1;
inline constexpr uint32_t kNotInExpiryIndex = UINT32_MAX;

// An entry and its key bytes are one allocation: the key follows the fields in memory, so a
// lookup that reaches the entry finds the key in the same cache lines instead of chasing a
// second pointer. The key starts right after key_size_, in what would be the struct's tail
// padding: 36 bytes of fields (next 8, expiry slot 4, access clock 4, Value 16, key size 4),
// then the key, so that a key of up to 12 bytes keeps the whole entry in the allocator's
// 48-byte size class. Create and destroy entries only through create() and destroy().
struct Entry {
  static Entry* create(std::string_view key, Value value);
  static void destroy(Entry* entry);
  // A new entry with another key that takes over this one's value and access clock (RENAME,
  // MOVE); this entry, which must have left the expiry index, is destroyed. The caller re-links
  // the result and gives it the deadline.
  static Entry* rekey(Entry* entry, std::string_view new_key);
  // Bytes requested from the allocator for an entry whose key is `key_size` bytes long.
  static size_t allocation_bytes(size_t key_size);

  std::string_view key() const {
    return {reinterpret_cast<const char*>(&key_size_ + 1), key_size_};
  }
  bool has_expiry() const { return expiry_slot != kNotInExpiryIndex; }

  Entry* next = nullptr;  // hash chain
  uint32_t expiry_slot = kNotInExpiryIndex;
  uint32_t access_clock = 0;  // LRU clock (seconds resolution, 24 bits as Redis) or LFU data
  Value value;

 private:
  Entry(uint32_t key_size, Value v) : value(std::move(v)), key_size_(key_size) {}
  ~Entry() = default;

  uint32_t key_size_;
};

static_assert(sizeof(Entry) == 40, "Entry: 36 bytes of fields, the key in the tail padding on");
// Where the key bytes start: just after key_size_, the last field.
inline constexpr size_t kEntryKeyOffset = sizeof(Entry) - sizeof(uint32_t);

inline size_t Entry::allocation_bytes(size_t key_size) {
  // Never less than the struct itself, so that a short key leaves the whole object allocated.
  return kEntryKeyOffset + key_size < sizeof(Entry) ? sizeof(Entry) : kEntryKeyOffset + key_size;
}

}  // namespace keywarden
