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
#include <cstring>
#include <string>
#include <string_view>

#include "types/value.h"

namespace keywarden {

inline constexpr int64_t kNoExpiry = -1;
inline constexpr uint32_t kNotInExpiryIndex = UINT32_MAX;

// An entry and its key bytes are one allocation: the key follows the fields in memory, so a
// lookup that reaches the entry finds the key in the same cache lines instead of chasing a
// second pointer. 32 bytes of fields (next 8, expiry slot 4, access clock 3, key length 1,
// Value 16), then the key: a key of up to 16 bytes keeps the whole entry in the allocator's
// 48-byte size class, up to 32 in the 64-byte one. A key of kLongKey bytes or more has its
// length in 4 bytes ahead of its bytes instead. Create and destroy entries only through
// create() and destroy().
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
    const char* tail = reinterpret_cast<const char*>(this + 1);
    if (short_key_size_ != kLongKey) return {tail, short_key_size_};
    uint32_t size;
    std::memcpy(&size, tail, sizeof size);
    return {tail + sizeof size, size};
  }
  bool has_expiry() const { return expiry_slot != kNotInExpiryIndex; }

  // Key lengths from here on are stored in 4 bytes ahead of the key.
  static constexpr uint32_t kLongKey = 255;

  Entry* next = nullptr;  // hash chain
  uint32_t expiry_slot = kNotInExpiryIndex;
  // LRU clock (seconds, 24 bits as Redis) or LFU data (16-bit minutes, 8-bit counter).
  uint32_t access_clock : 24;
 private:
  uint32_t short_key_size_ : 8;  // the key's length, or kLongKey

 public:
  Value value;

 private:
  Entry(size_t key_size, Value v)
      : access_clock(0),
        short_key_size_(key_size < kLongKey ? static_cast<uint32_t>(key_size) : kLongKey),
        value(std::move(v)) {}
  ~Entry() = default;
};

static_assert(sizeof(Entry) == 32, "Entry: 32 bytes of fields, then the key");

inline size_t Entry::allocation_bytes(size_t key_size) {
  return sizeof(Entry) + (key_size < kLongKey ? key_size : sizeof(uint32_t) + key_size);
}

}  // namespace keywarden
