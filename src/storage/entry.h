// One key of a database: the key bytes, the value, the eviction bits and, for a key with a TTL,
// its deadline and its position in the expiry index. Entries are owned by their Database and
// reached through its hash table (which keeps no link inside the entry); the expiry index
// points at them without owning them.
//
// Only a volatile key pays for its TTL: its deadline and its expiry index slot sit in a
// 16-byte prefix in front of the entry, in the same allocation, and a bit of the entry says
// the prefix is there. So a key without a TTL costs 20 bytes of fields and its key bytes (an
// 11-byte key fits the allocator's 32-byte class), and giving a key a TTL, or taking it away,
// moves the entry to a new allocation of the other shape (Database::set_expiry returns the new
// address). Reading a deadline is a load from the entry the lookup has just reached; the expiry
// index holds only entry pointers and reads deadlines through them.
#pragma once

#include <algorithm>
#include <cassert>
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
// second pointer. 20 bytes of fields (Value 16, access clock 3, key length 7 bits, the
// volatile bit), then the key: a key of up to 12 bytes keeps a non-volatile entry in the
// allocator's 32-byte size class, up to 28 in the 48-byte one; a volatile entry adds its
// 16-byte prefix (12 bytes: 48-byte class). A key of kLongKey bytes or more has its length in
// 4 bytes ahead of its bytes instead. Create and destroy entries only through create() and
// destroy().
struct Entry {
  // `with_expiry`: the entry gets the prefix of a volatile key (deadline kNoExpiry, in no
  // index yet).
  static Entry* create(std::string_view key, Value value, bool with_expiry = false);
  static void destroy(Entry* entry);
  // A new entry with the same key, access clock and value (moved out of `entry`), with or
  // without the volatile prefix. `entry` is left valueless but alive: the caller swaps the new
  // one in wherever the old one is linked, then destroys the old one.
  static Entry* reshape(Entry* entry, bool with_expiry);
  // A new entry with another key that takes over this one's value and access clock (RENAME,
  // MOVE); this entry, which must have left the expiry index, is destroyed. The caller re-links
  // the result and gives it the deadline (it has the prefix when `with_expiry`).
  static Entry* rekey(Entry* entry, std::string_view new_key, bool with_expiry);
  // Bytes requested from the allocator for an entry whose key is `key_size` bytes long.
  static size_t allocation_bytes(size_t key_size, bool with_expiry);
  size_t allocation_bytes() const { return allocation_bytes(key().size(), has_expiry()); }

  std::string_view key() const {
    const char* tail = reinterpret_cast<const char*>(this) + kFieldBytes;
    if (short_key_size_ != kLongKey) return {tail, short_key_size_};
    uint32_t size;
    std::memcpy(&size, tail, sizeof size);
    return {tail + sizeof size, size};
  }

  // Whether the entry has the volatile prefix: in a Database, exactly when the key has a TTL.
  bool has_expiry() const { return volatile_ != 0; }
  // The deadline in Unix milliseconds; only with the prefix.
  int64_t deadline() const { return prefix()->deadline_ms; }
  void set_deadline(int64_t deadline_ms) { prefix()->deadline_ms = deadline_ms; }
  // The entry's slot in the expiry index (kNotInExpiryIndex when not in it); only with the
  // prefix.
  uint32_t& expiry_slot() { return prefix()->slot; }
  uint32_t expiry_slot() const { return prefix()->slot; }

  // Key lengths from here on are stored in 4 bytes ahead of the key.
  static constexpr uint32_t kLongKey = 127;
  // Where the key starts: Value and the 4 bytes of bits, without the struct's tail padding.
  static constexpr size_t kFieldBytes = 20;

  Value value;
  // LRU clock (seconds, 24 bits as Redis) or LFU data (16-bit minutes, 8-bit counter).
  uint32_t access_clock : 24;

 private:
  uint32_t short_key_size_ : 7;  // the key's length, or kLongKey
  uint32_t volatile_ : 1;        // the prefix is there

  // In front of a volatile entry. 16 bytes, so that the entry stays 16-byte aligned.
  struct Prefix {
    int64_t deadline_ms = kNoExpiry;
    uint32_t slot = kNotInExpiryIndex;
    uint32_t unused = 0;
  };
  static_assert(sizeof(Prefix) == 16);

  Prefix* prefix() {
    assert(has_expiry());
    return reinterpret_cast<Prefix*>(this) - 1;
  }
  const Prefix* prefix() const {
    assert(has_expiry());
    return reinterpret_cast<const Prefix*>(this) - 1;
  }

  Entry(size_t key_size, Value v, bool with_expiry)
      : value(std::move(v)),
        access_clock(0),
        short_key_size_(key_size < kLongKey ? static_cast<uint32_t>(key_size) : kLongKey),
        volatile_(with_expiry ? 1 : 0) {}
  ~Entry() = default;
};

static_assert(sizeof(Value) + sizeof(uint32_t) == Entry::kFieldBytes,
              "Entry: 20 bytes of fields, then the key");

// At least sizeof(Entry) (24 with its tail padding, which a key of 4 bytes or more overlays),
// so that the object always lies inside its allocation; that costs nothing, as the smallest
// size class that holds 20 bytes is 32.
inline size_t Entry::allocation_bytes(size_t key_size, bool with_expiry) {
  const size_t fields_and_key =
      kFieldBytes + (key_size < kLongKey ? key_size : sizeof(uint32_t) + key_size);
  return (with_expiry ? sizeof(Prefix) : 0) + std::max(fields_and_key, sizeof(Entry));
}

}  // namespace keywarden
