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
    return is_listpack() ? Encoding::kListpack : Encoding::kHashTable;
  }
  std::unique_ptr<Aggregate> clone() const override { return std::make_unique<HashValue>(*this); }
  bool empty() const { return size() == 0; }

  // The value of `field`, or nullopt. The view is valid until the next change to the hash.
  std::optional<std::string_view> find(std::string_view field) const;
  // Sets `field` to `value`; true when the field was new. Converts to the hashtable first when
  // either string is longer than the limit allows, and after insertion when there are too many
  // fields.
  bool set(std::string_view field, std::string_view value, const HashLimits& limits);
  // True when the field existed.
  bool remove(std::string_view field);
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
  // Offset of the record whose field is `field`, or npos.
  size_t listpack_find(std::string_view field) const;
  // The record at `index` (0-based).
  PairView listpack_at(size_t index) const;

  std::string listpack_;  // count_ records: (length, field bytes, length, value bytes)
  uint32_t count_ = 0;    // records in listpack_
  std::unique_ptr<Table> table_;
};

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
