// The volatile keys of one database ordered by deadline, so that the active expiry cycle can
// take exactly the keys that are due from the front instead of sampling the whole keyspace the
// way Redis does. Redis's sampling leaves due keys alive for seconds when they are sparse
// among long-lived ones; a deadline order makes reclaim prompt and its cost proportional to
// the keys actually expiring.
//
// It is a min-heap of entries ordered by deadline, each entry recording its own slot so that
// a TTL change, PERSIST or DEL can fix the heap in O(log n) without searching.
//
// Two kinds share the code. The key index (Kind::kKeys) holds only entry pointers, 8 bytes a
// volatile key: the deadline and the slot number live in the entry's volatile prefix
// (entry.h), and every comparison reads the deadline through the pointer. To keep those reads
// few it is a 4-ary heap: half the levels of a binary one, and the four children of a slot are
// fetched side by side (their loads are independent, so their cache misses overlap) where a
// binary heap would take two levels one after the other. The field index (Kind::kHashFields)
// orders the hashes that have volatile fields by their earliest field deadline; it keeps
// (deadline, entry) pairs, 16 bytes, in a binary heap, because a hash's deadline is not in its
// entry, and records a hash's slot in its HashValue (HashValue::index_slot); the entry must hold
// a hash for as long as it is indexed there. That is how active expiry finds due hash fields by
// deadline with the same slices and budget as keys.
//
// The array grows by doubling and shrinks by half when a quarter full, through
// memory::resize_block(): a big heap is remapped rather than copied, and a mass expiry gives
// its pages back.
//
// Invariants: slot_of(entry_at(i)) == i for every i < size_; the parent of every slot has a
// deadline no later than its children.
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

  // Adds the entry, or moves it if it is already indexed. In the key index the entry must
  // have the volatile prefix, where the deadline is stored.
  void set(Entry* entry, int64_t deadline_ms);
  void remove(Entry* entry);
  // Points the slot of `entry` at `replacement`, which took over its value (and so, in the
  // field index, its hash's slot) at a new address. Nothing if `entry` is not indexed.
  void replace(Entry* entry, Entry* replacement);
  void clear();

  // The entry with the earliest deadline; nullptr when empty.
  Entry* front() const { return size_ == 0 ? nullptr : entry_at(0); }
  int64_t front_deadline() const { return size_ == 0 ? INT64_MAX : deadline_at(0); }
  // The deadline of an indexed entry; kNoExpiry for one that is not indexed.
  int64_t deadline_of(const Entry* entry) const {
    if (!contains(entry)) return kNoExpiry;
    return kind_ == Kind::kKeys ? entry->deadline() : fields()[slot_of(entry)].deadline_ms;
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
  Entry* at(size_t index) const { return entry_at(index); }

  // How many entries have a deadline before `now_ms`, counting at most `limit`. The heap
  // order lets the walk skip every subtree whose root is not due, so the cost is the count.
  int64_t count_due(int64_t now_ms, int64_t limit) const;

  // Sum of all deadlines, for the exact average TTL INFO reports.
  __int128 deadline_sum() const { return deadline_sum_; }

  // Bytes held by the index itself.
  size_t memory_bytes() const { return capacity_ * slot_bytes(); }

 private:
  struct FieldSlot {
    int64_t deadline_ms;
    Entry* entry;
  };
  static constexpr size_t kMinCapacity = 16;

  static_assert(kNotInExpiryIndex == kHashNotIndexed);
  // Whether `entry` can be in this index at all: a key with the volatile prefix for the key
  // index, only hashes for the field index (whose slot lives in the hash).
  bool indexable(const Entry* entry) const {
    return kind_ == Kind::kKeys ? entry->has_expiry()
                                : entry->value.type() == ValueType::kHash;
  }
  uint32_t& slot_of(Entry* entry) const {
    return kind_ == Kind::kKeys ? entry->expiry_slot()
                                : entry->value.as<HashValue>().index_slot();
  }
  uint32_t slot_of(const Entry* entry) const { return slot_of(const_cast<Entry*>(entry)); }

  size_t slot_bytes() const { return kind_ == Kind::kKeys ? sizeof(Entry*) : sizeof(FieldSlot); }
  size_t arity() const { return kind_ == Kind::kKeys ? 4 : 2; }
  Entry** keys() const { return static_cast<Entry**>(heap_); }
  FieldSlot* fields() const { return static_cast<FieldSlot*>(heap_); }
  Entry* entry_at(size_t index) const {
    return kind_ == Kind::kKeys ? keys()[index] : fields()[index].entry;
  }
  int64_t deadline_at(size_t index) const {
    return kind_ == Kind::kKeys ? keys()[index]->deadline() : fields()[index].deadline_ms;
  }

  // Stores `entry` (whose deadline is `deadline_ms`) in slot `index` and records the slot.
  void place(size_t index, Entry* entry, int64_t deadline_ms);
  // Moves `entry`, bound for slot `index`, up or down to where its deadline belongs.
  void sift_up(size_t index, Entry* entry, int64_t deadline_ms);
  void sift_down(size_t index, Entry* entry, int64_t deadline_ms);
  // Sets the array's capacity (at least size_). False when out of memory.
  bool reallocate(size_t capacity);
  void release();

  void* heap_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  __int128 deadline_sum_ = 0;
  Kind kind_;
};

}  // namespace keywarden
