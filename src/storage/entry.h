// One key of a database: the key bytes, the value, the absolute expiry deadline when the key
// has one, the eviction bits, and the links the two indexes need (the hash chain and the
// position in the expiry index). Entries are owned by their Database and reached through its
// hash table; the expiry index points at them without owning them.
//
// Invariant: expire_at_ms == kNoExpiry exactly when expiry_slot == kNotInExpiryIndex.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "types/value.h"

namespace keywarden {

inline constexpr int64_t kNoExpiry = -1;
inline constexpr uint32_t kNotInExpiryIndex = UINT32_MAX;

struct Entry {
  Entry(std::string_view k, Value v) : key(k), value(std::move(v)) {}

  Entry* next = nullptr;  // hash chain
  int64_t expire_at_ms = kNoExpiry;
  uint32_t expiry_slot = kNotInExpiryIndex;
  uint32_t access_clock = 0;  // LRU clock (seconds resolution, 24 bits as Redis) or LFU data
  std::string key;
  Value value;

  bool has_expiry() const { return expire_at_ms != kNoExpiry; }
};

}  // namespace keywarden
