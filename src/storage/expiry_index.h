// The volatile keys of one database ordered by deadline, so that the active expiry cycle can
// take exactly the keys that are due from the front instead of sampling the whole keyspace the
// way Redis does. Redis's sampling leaves due keys alive for seconds when they are sparse
// among long-lived ones; a deadline order makes reclaim prompt and its cost proportional to
// the keys actually expiring.
//
// It is a binary min-heap of (deadline, entry) pairs. Each entry records its own slot so that
// a TTL change, PERSIST or DEL can fix the heap in O(log n) without searching.
//
// The deadline lives in the heap slot only (the entry records where its slot is), so the index
// costs a volatile key 16 bytes here plus the 4-byte slot number in the entry. The array grows
// by doubling and shrinks by half when a quarter full, through memory::resize_block(): a big
// heap is remapped rather than copied, and a mass expiry gives its pages back.
//
// A database has two: one of its volatile keys by key deadline, and one of the hashes that have
// volatile fields by their earliest field deadline (Kind::kHashFields), which is how active
// expiry finds due hash fields by deadline with the same slices and budget as keys. The second
// kind records an entry's slot in its HashValue (HashValue::index_slot) instead of the entry,
// so that Entry stays 32 bytes; the entry must hold a hash for as long as it is indexed there.
//
// Invariants: slot_of(heap_[i].entry) == i for every i < size_; the parent of every slot
// has a deadline no later than its children.
#pragma once

#include <cstdint>
#include <cstddef>

#include "storage/entry.h"
#include "types/hash_value.h"

namespace keywarden {

class ExpiryIndex {
 public:
  enum class Kind : uint8_t { kKeys, kHashFields };
  explicit ExpiryIndex(Kind kind = Kind::kKeys) : kind_(kind) {}
  ~ExpiryIndex();
  ExpiryIndex(const ExpiryIndex&) = delete;
  ExpiryIndex& operator=(const ExpiryIndex&) = delete;
  ExpiryIndex(ExpiryIndex&& other) noexcept;
  ExpiryIndex& operator=(ExpiryIndex&& other) noexcept;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Adds the entry, or moves it if it is already indexed.
  void set(Entry* entry, int64_t deadline_ms);
  void remove(Entry* entry);
  void clear();

  // The entry with the earliest deadline; nullptr when empty.
  Entry* front() const { return size_ == 0 ? nullptr : heap_[0].entry; }
  int64_t front_deadline() const { return size_ == 0 ? INT64_MAX : heap_[0].deadline_ms; }
  // The deadline of an indexed entry; kNoExpiry for one that is not indexed.
  int64_t deadline_of(const Entry* entry) const {
    if (!indexable(entry)) return kNoExpiry;
    const uint32_t slot = slot_of(entry);
    return slot == kNotInExpiryIndex ? kNoExpiry : heap_[slot].deadline_ms;
  }
  bool contains(const Entry* entry) const {
    return indexable(entry) && slot_of(entry) != kNotInExpiryIndex;
  }
  // Empties the index without touching its entries (they are being freed elsewhere).
  void abandon() {
    release();
    deadline_sum_ = 0;
  }
  // The entry in heap slot `index` (< size()): eviction samples volatile keys uniformly here.
  Entry* at(size_t index) const { return heap_[index].entry; }

  // How many entries have a deadline before `now_ms`, counting at most `limit`. The heap
  // order lets the walk skip every subtree whose root is not due, so the cost is the count.
  int64_t count_due(int64_t now_ms, int64_t limit) const;

  // Sum of all deadlines, for the exact average TTL INFO reports.
  __int128 deadline_sum() const { return deadline_sum_; }

  // Bytes held by the index itself.
  size_t memory_bytes() const { return capacity_ * sizeof(Slot); }

 private:
  struct Slot {
    int64_t deadline_ms;
    Entry* entry;
  };
  static constexpr size_t kMinCapacity = 16;

  static_assert(kNotInExpiryIndex == kHashNotIndexed);
  // Whether `entry` can be in this index at all: any key for the key index, only hashes for
  // the field index (whose slot lives in the hash).
  bool indexable(const Entry* entry) const {
    return kind_ == Kind::kKeys || entry->value.type() == ValueType::kHash;
  }
  uint32_t& slot_of(Entry* entry) const {
    return kind_ == Kind::kKeys ? entry->expiry_slot : entry->value.as<HashValue>().index_slot();
  }
  uint32_t slot_of(const Entry* entry) const { return slot_of(const_cast<Entry*>(entry)); }

  void place(size_t index, Slot slot);
  void sift_up(size_t index);
  void sift_down(size_t index);
  // Sets the array's capacity (at least size_). False when out of memory.
  bool reallocate(size_t capacity);
  void release();

  Slot* heap_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  __int128 deadline_sum_ = 0;
  Kind kind_;
};

}  // namespace keywarden
