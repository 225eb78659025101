// A hash value: a map of field → value byte strings, in one of the two encodings Redis 7.0
// reports through OBJECT ENCODING.
//
// "listpack": one flat buffer (a std::string) of (field, value) records, each string preceded
// by its LEB128 length (types/packed_length.h), searched linearly, in insertion order (a new
// field goes to the end, an update stays in place, a deletion closes the gap), which is the
// order Redis's listpack hands fields back in, so HGETALL/HKEYS/HSCAN of a small hash reply
// exactly as Redis does. Cheap for the small hashes that dominate real keyspaces (lock owners,
// session records): one allocation for the whole hash, two bytes of overhead per short pair.
//
// "hashtable": a StringTable (types/string_table.h), for hashes that outgrew the listpack.
// A hash converts once a field or value longer than `max_listpack_value` bytes is stored, or
// once it holds more than `max_listpack_entries` fields after any set (an update included, so
// a lowered limit converts a hash at its next write), and never converts back (as Redis).
// SCAN over the table uses the table's reverse-binary cursor, with Redis's guarantee.
//
// Field deadlines (HEXPIRE and friends, Redis 7.4+). A field may carry an absolute deadline in
// Unix milliseconds; a hash without any pays nothing for the feature. Where it is kept depends
// on the encoding, so that a volatile field costs at most 16 bytes more than a plain one:
//  - listpack: a vector of deadlines parallel to the records (kNoDeadline for a plain field),
//    allocated when the first field gets a deadline and dropped with the last: 8 bytes a field.
//  - hashtable: a binary min-heap of (deadline, field) slots, 12 bytes per volatile field (the
//    deadline and the node pointer packed in 48 bits each), grown by an eighth to the
//    allocator's next size class rather than doubled, and shrunk when a quarter full, so that
//    the heap's slack stays small; each
//    field's slot number lives in its table node's spare aux word (StringTable::aux_of), so a
//    TTL change, HDEL or HSET of a volatile field fixes the heap in O(log n) without a search.
//    Deadlines are below 2^48 ms (kMaxStoredFieldDeadlineMs): commands accept less (Redis's
//    2^46 - 1), loaders refuse more.
// The hash itself knows nothing of time: it stores deadlines, reports the earliest, and removes
// the fields due at a time it is given. Whether an expired field is hidden or deleted is the
// keyspace's decision (storage/database.h). Writing a field's value (set()) drops its deadline
// unless the caller keeps it, as Redis's HSET does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "types/aggregate.h"
#include "types/packed_length.h"
#include "types/string_table.h"

namespace keywarden {

// Redis 7.0's defaults for hash-max-listpack-entries and hash-max-listpack-value.
inline constexpr int64_t kDefaultHashMaxListpackEntries = 512;
inline constexpr int64_t kDefaultHashMaxListpackValue = 64;

// A field without a deadline.
inline constexpr int64_t kNoFieldDeadline = -1;
// The latest field deadline a command accepts (Redis's HFE_MAX_ABS_TIME_MSEC, year 4199) and
// the latest one a hash can store (Redis's EB_EXPIRE_TIME_MAX, what its RDB loader accepts).
inline constexpr int64_t kMaxFieldDeadlineMs = (int64_t{1} << 46) - 1;
inline constexpr int64_t kMaxStoredFieldDeadlineMs = (int64_t{1} << 48) - 1;
// The slot value of a hash that is not in its database's field-deadline index.
inline constexpr uint32_t kHashNotIndexed = UINT32_MAX;

struct HashLimits {
  int64_t max_listpack_entries = kDefaultHashMaxListpackEntries;
  int64_t max_listpack_value = kDefaultHashMaxListpackValue;
};

class HashValue final : public Aggregate {
 public:
  // A hashtable element.
  struct Pair {
    std::string field;
    std::string value;
  };
  // A field and its value as stored; valid until the next change to the hash.
  struct PairView {
    std::string_view field;
    std::string_view value;
  };

  HashValue();
  ~HashValue() override;
  HashValue(const HashValue& other);
  HashValue& operator=(const HashValue& other);
  HashValue(HashValue&&) noexcept;
  HashValue& operator=(HashValue&&) noexcept;

  bool is_listpack() const { return table_ == nullptr; }
  size_t size() const override;
  Encoding encoding() const override {
    // Redis 7.4+ names a small hash with field deadlines "listpackex".
    if (!is_listpack()) return Encoding::kHashTable;
    return listpack_volatile_ > 0 ? Encoding::kListpackEx : Encoding::kListpack;
  }
  std::unique_ptr<Aggregate> clone() const override { return std::make_unique<HashValue>(*this); }
  bool empty() const { return size() == 0; }

  // The value of `field`, or nullopt. The view is valid until the next change to the hash.
  std::optional<std::string_view> find(std::string_view field) const;
  // Sets `field` to `value`; true when the field was new. Converts to the hashtable first when
  // either string is longer than the limit allows, and after insertion when there are too many
  // fields.
  // A field that existed loses its deadline unless `keep_deadline`.
  bool set(std::string_view field, std::string_view value, const HashLimits& limits,
           bool keep_deadline = false);
  // True when the field existed (its deadline goes with it).
  bool remove(std::string_view field);

  // --- Field deadlines ---------------------------------------------------------------------
  // The field's deadline; kNoFieldDeadline when it has none or does not exist.
  int64_t field_deadline(std::string_view field) const;
  // Sets (or, with kNoFieldDeadline, clears) the deadline of an existing field; false when the
  // field does not exist.
  bool set_field_deadline(std::string_view field, int64_t deadline_ms);
  // How many fields have a deadline.
  size_t volatile_count() const;
  // The earliest field deadline; INT64_MAX when no field has one.
  int64_t earliest_deadline() const;
  // Removes fields whose deadline is before `now_ms`, at most `limit` of them, calling
  // on_removed(std::string_view field) just before each goes. Returns how many went.
  template <typename Fn>
  size_t remove_due(int64_t now_ms, size_t limit, Fn&& on_removed);
  // Calls visit(field, value, deadline) for every field with a deadline.
  template <typename Fn>
  void for_each_volatile(Fn&& visit) const;
  // The slot of this hash in its database's field-deadline index (storage/expiry_index.h).
  uint32_t& index_slot() { return index_slot_; }
  uint32_t index_slot() const { return index_slot_; }
  // Converts to the hashtable encoding (no-op when already there).
  void convert_to_table();

  // Calls visit(std::string_view field, std::string_view value) for every pair: insertion order for
  // the listpack, bucket order for the table. The hash must not change during the walk.
  template <typename Fn>
  void for_each(Fn&& visit) const;

  // A uniformly chosen pair (for the table: a random non-empty bucket, then a random chain
  // element, as Redis samples its dict). The hash must not be empty.
  PairView random_pair(std::mt19937_64& rng) const;
  // `count` distinct pairs chosen at random (count < size()), in no particular order.
  std::vector<PairView> random_distinct(size_t count, std::mt19937_64& rng) const;

  // One SCAN step. The listpack returns everything and cursor 0. The table visits the bucket
  // the cursor names (all its chain) and returns the next cursor, 0 when the walk is done.
  template <typename Fn>
  uint64_t scan(uint64_t cursor, Fn&& visit) const;

  // Approximate heap bytes (MEMORY USAGE).
  size_t payload_bytes() const override;
  // DEBUG HTSTATS-KEY: the chain length of every bucket of the hashtable encoding (empty for
  // a listpack).
  std::vector<uint32_t> chain_lengths() const {
    return table_ == nullptr ? std::vector<uint32_t>{} : table_->chain_lengths();
  }

 private:
  struct PairField {
    static std::string_view of(const Pair& pair) { return pair.field; }
  };
  using Table = StringTable<Pair, PairField>;

  static bool fits_listpack(std::string_view text, const HashLimits& limits) {
    return static_cast<int64_t>(text.size()) <= limits.max_listpack_value;
  }

  // One slot of the hashtable encoding's deadline heap: a deadline below 2^48 and a pointer to
  // the pair (user-space addresses have 48 bits on x86-64 and AArch64) in 12 bytes, not 16.
  class DeadlineSlot {
   public:
    DeadlineSlot(int64_t deadline_ms, Pair* pair) {
      const auto deadline = static_cast<uint64_t>(deadline_ms);
      const auto address = reinterpret_cast<uintptr_t>(pair);
      words_[0] = static_cast<uint32_t>(deadline);
      words_[1] = static_cast<uint32_t>((deadline >> 32) & 0xffff) |
                  static_cast<uint32_t>((address & 0xffff) << 16);
      words_[2] = static_cast<uint32_t>(address >> 16);
    }
    int64_t deadline_ms() const {
      return static_cast<int64_t>(words_[0] | (uint64_t{words_[1] & 0xffff} << 32));
    }
    Pair* pair() const {
      return reinterpret_cast<Pair*>((uintptr_t{words_[2]} << 16) | (words_[1] >> 16));
    }

   private:
    uint32_t words_[3];
  };
  static_assert(sizeof(DeadlineSlot) == 12);
  static_assert(sizeof(uintptr_t) == 8, "the slot packs 64-bit pointers");
  // Heap helpers (hashtable encoding).
  static size_t grown_heap_capacity(size_t size);
  void heap_place(size_t index, DeadlineSlot slot);
  void heap_sift_up(size_t index);
  void heap_sift_down(size_t index);
  void heap_set(Pair* pair, int64_t deadline_ms);
  void heap_remove(Pair* pair);
  // The pair's deadline in the heap; kNoFieldDeadline when absent.
  int64_t heap_deadline(const Pair& pair) const;
  // Rebuilds the heap from scratch (after a copy, whose pairs live elsewhere).
  void copy_deadlines_from(const HashValue& other);
  // Forgets the deadline of the record at `index` (listpack), keeping the vector's length.
  void listpack_drop_deadline(size_t index);

  // Listpack helpers. The record at *offset, which moves past it.
  PairView listpack_read(size_t* offset) const {
    const std::string_view bytes = listpack_;
    const size_t field_length = packed::read_length(bytes, offset);
    const std::string_view field = bytes.substr(*offset, field_length);
    *offset += field_length;
    const size_t value_length = packed::read_length(bytes, offset);
    const std::string_view value = bytes.substr(*offset, value_length);
    *offset += value_length;
    return PairView{field, value};
  }
  // Offset of the record whose field is `field`, or npos; its position in *index when given.
  size_t listpack_find(std::string_view field, size_t* index = nullptr) const;
  // The record at `index` (0-based).
  PairView listpack_at(size_t index) const;

  std::string listpack_;  // count_ records: (length, field bytes, length, value bytes)
  uint32_t count_ = 0;    // records in listpack_
  std::unique_ptr<Table> table_;
  // Listpack: empty, or one deadline per record (kNoFieldDeadline for a plain field).
  std::vector<int64_t> listpack_deadlines_;
  size_t listpack_volatile_ = 0;  // records with a deadline
  // Hashtable: the min-heap of volatile fields.
  std::vector<DeadlineSlot> heap_;
  uint32_t index_slot_ = kHashNotIndexed;
};

template <typename Fn>
void HashValue::for_each_volatile(Fn&& visit) const {
  if (table_ == nullptr) {
    if (listpack_volatile_ == 0) return;
    size_t offset = 0;
    for (size_t i = 0; i < count_; ++i) {
      const PairView pair = listpack_read(&offset);
      if (listpack_deadlines_[i] != kNoFieldDeadline) {
        visit(pair.field, pair.value, listpack_deadlines_[i]);
      }
    }
    return;
  }
  for (const DeadlineSlot& slot : heap_) {
    const Pair* pair = slot.pair();
    visit(std::string_view(pair->field), std::string_view(pair->value), slot.deadline_ms());
  }
}

template <typename Fn>
size_t HashValue::remove_due(int64_t now_ms, size_t limit, Fn&& on_removed) {
  size_t removed = 0;
  if (table_ == nullptr) {
    size_t offset = 0;
    size_t index = 0;
    while (index < count_ && listpack_volatile_ > 0 && removed < limit) {
      const size_t record = offset;
      const PairView pair = listpack_read(&offset);
      const int64_t deadline = listpack_deadlines_[index];
      if (deadline == kNoFieldDeadline || deadline >= now_ms) {
        ++index;
        continue;
      }
      on_removed(pair.field);
      listpack_.erase(record, offset - record);
      offset = record;
      --count_;
      listpack_drop_deadline(index);
      listpack_deadlines_.erase(listpack_deadlines_.begin() + static_cast<ptrdiff_t>(index));
      if (listpack_volatile_ == 0) std::vector<int64_t>().swap(listpack_deadlines_);
      ++removed;
    }
    return removed;
  }
  while (!heap_.empty() && heap_[0].deadline_ms() < now_ms && removed < limit) {
    Pair* pair = heap_[0].pair();
    on_removed(std::string_view(pair->field));
    heap_remove(pair);
    // erase() reads its key while unlinking the node that holds it: pass a copy.
    const std::string field(pair->field);
    table_->erase(field);
    ++removed;
  }
  return removed;
}

template <typename Fn>
void HashValue::for_each(Fn&& visit) const {
  if (table_ == nullptr) {
    size_t offset = 0;
    for (size_t i = 0; i < count_; ++i) {
      const PairView pair = listpack_read(&offset);
      visit(pair.field, pair.value);
    }
    return;
  }
  table_->for_each(
      [&](const Pair& pair) { visit(std::string_view(pair.field), std::string_view(pair.value)); });
}

template <typename Fn>
uint64_t HashValue::scan(uint64_t cursor, Fn&& visit) const {
  if (table_ == nullptr) {
    for_each(visit);
    return 0;
  }
  return table_->scan(cursor, [&](const Pair& pair) {
    visit(std::string_view(pair.field), std::string_view(pair.value));
  });
}

}  // namespace keywarden
