// A set value: distinct byte strings, in one of three layouts: Redis 7.2's three set encodings,
// whose compact listpack keeps small sets of strings cheap. What OBJECT ENCODING reports
// (encoding()) is Redis 7.0's name, which has no listpack for sets: a set in the listpack
// layout reports "hashtable", as the same set is one in Redis 7.0 (layout() tells the truth).
// The reported encoding therefore follows 7.0's rules exactly: intset while every member is an
// integer and there are at most set-max-intset-entries of them, hashtable otherwise, never back.
//
// "intset": while every member is a canonical 64-bit integer (as Redis's string2ll reads it)
// and there are at most `max_intset_entries` of them, a sorted array of integers stored at the
// narrowest width (2, 4 or 8 bytes) that holds them all, widened when a member needs it and
// never narrowed. Members come back in ascending numeric order, exactly as Redis replies.
//
// "listpack": a small set holding a non-integer member, up to `max_listpack_entries` members
// of at most `max_listpack_value` bytes each: one flat buffer of length-prefixed members in
// insertion order, searched linearly.
//
// "hashtable": a StringTable of members (types/string_table.h), for everything larger.
//
// Conversions follow Redis 7.2 and only go one way, intset → listpack → hashtable:
//  - an intset that receives a non-integer becomes a listpack when it holds fewer than
//    `max_listpack_entries` members and both the new member and the decimal text of every
//    integer fit `max_listpack_value` bytes; a hashtable otherwise;
//  - an intset that grows past `max_intset_entries` becomes a hashtable (not a listpack);
//  - a listpack that would get a member beyond `max_listpack_entries`, or a member longer
//    than `max_listpack_value`, becomes a hashtable.
// A set never converts back on removal. New sets built by a command (SINTERSTORE, SUNIONSTORE,
// SDIFFSTORE, SMOVE's destination, SPOP's rebuilt remainder) start as an empty intset and
// convert as members arrive, which gives each the encoding Redis 7.0 gives it for integers.
//
// Both flat encodings live in one malloc'd buffer (FlatBytes: a pointer and a length, grown to
// the allocator's size classes), which shares its place with the hashtable pointer: a small
// set costs a 32-byte SetValue and one buffer sized to its members, as Redis's intset does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "types/aggregate.h"
#include "types/packed_length.h"
#include "types/string_table.h"

namespace keywarden {

// Redis 7.2's defaults for set-max-intset-entries, set-max-listpack-entries and
// set-max-listpack-value.
inline constexpr int64_t kDefaultSetMaxIntsetEntries = 512;
inline constexpr int64_t kDefaultSetMaxListpackEntries = 128;
inline constexpr int64_t kDefaultSetMaxListpackValue = 64;

struct SetLimits {
  int64_t max_intset_entries = kDefaultSetMaxIntsetEntries;
  int64_t max_listpack_entries = kDefaultSetMaxListpackEntries;
  int64_t max_listpack_value = kDefaultSetMaxListpackValue;
};

class SetValue final : public Aggregate {
 public:
  SetValue();
  ~SetValue() override;
  SetValue(const SetValue& other);
  SetValue& operator=(const SetValue& other);
  SetValue(SetValue&&) noexcept;
  SetValue& operator=(SetValue&&) noexcept;

  std::unique_ptr<Aggregate> clone() const override { return std::make_unique<SetValue>(*this); }
  // Redis 7.0's name for the set's encoding: the listpack layout reports kHashTable.
  Encoding encoding() const override {
    return encoding_ == Encoding::kListpack ? Encoding::kHashTable : encoding_;
  }
  // The layout the members are kept in: kIntset, kListpack or kHashTable.
  Encoding layout() const { return encoding_; }
  size_t size() const override { return is_table() ? table_->size() : count_; }
  bool empty() const { return size() == 0; }
  size_t payload_bytes() const override;
  // DEBUG HTSTATS-KEY: the chain length of every bucket of the hashtable encoding (empty for
  // the others).
  std::vector<uint32_t> chain_lengths() const {
    return is_table() ? table_->chain_lengths() : std::vector<uint32_t>{};
  }

  bool contains(std::string_view member) const;
  // Adds `member`; true when it was not there. Converts as the header describes.
  bool add(std::string_view member, const SetLimits& limits);
  // True when the member was there.
  bool remove(std::string_view member);

  // Calls visit(std::string_view member) for every member: ascending for an intset, insertion
  // order for a listpack, bucket order for a hashtable; a visitor returning bool stops the walk
  // with false. The set must not change meanwhile; the view is valid only during the call.
  template <typename Fn>
  void for_each(Fn&& visit) const;

  // One SSCAN step. The flat encodings return everything and cursor 0; the hashtable visits
  // the bucket the cursor names and returns the next cursor (0 when done), with the SCAN
  // guarantee across resizes.
  template <typename Fn>
  uint64_t scan(uint64_t cursor, Fn&& visit) const;

  // A uniformly chosen member (the set must not be empty; the hashtable samples as Redis's
  // dict does: a random non-empty bucket, then a random chain element).
  std::string random_member(std::mt19937_64& rng) const;
  // `count` distinct members chosen at random (count <= size()), in no particular order.
  std::vector<std::string> random_distinct(size_t count, std::mt19937_64& rng) const;
  // Removes a random member and returns it (the set must not be empty).
  std::string pop_random(std::mt19937_64& rng);
  // Removes `count` random members (0 < count < size()) and returns them. Like Redis, when
  // few would remain it draws the survivors instead, moves them into a new set built as a
  // command builds one, and hands back everything else in the old set's order.
  std::vector<std::string> pop_random(size_t count, std::mt19937_64& rng,
                                      const SetLimits& limits);

 private:
  // A growable byte buffer in 16 bytes (a std::string takes 32): its capacity is whatever the
  // allocator handed out, read back with malloc_usable_size when it must grow; under 1 KiB it
  // asks for exactly what it needs (the size class is its room), beyond for a quarter more.
  class FlatBytes {
   public:
    FlatBytes() = default;
    FlatBytes(const FlatBytes& other);
    FlatBytes& operator=(const FlatBytes&) = delete;
    FlatBytes(FlatBytes&& other) noexcept;
    FlatBytes& operator=(FlatBytes&& other) noexcept;
    ~FlatBytes() { std::free(data_); }

    const char* data() const { return data_; }
    char* data() { return data_; }
    size_t size() const { return size_; }
    operator std::string_view() const { return {data_, size_}; }
    // Bytes the allocator holds for the buffer.
    size_t heap_bytes() const;

    // Opens `count` zeroed bytes at `offset`.
    void insert(size_t offset, size_t count);
    void append(std::string_view bytes);
    void push_back(char byte) { append(std::string_view(&byte, 1)); }
    void erase(size_t offset, size_t count);

   private:
    void reserve_for(size_t size);

    char* data_ = nullptr;
    size_t size_ = 0;
  };

  bool is_table() const { return encoding_ == Encoding::kHashTable; }
  // Frees the storage (the set is then unusable until take() or construction).
  void release_storage();
  // Takes other's encoding and storage, leaving it an empty intset.
  void take(SetValue& other) noexcept;

  // Intset helpers: members are count_ little-endian integers of int_width_ bytes in flat_.
  int64_t int_at(size_t index) const;
  // Index of `value` if present, else where it would be inserted; *found says which.
  size_t int_position(int64_t value, bool* found) const;
  void widen_ints(uint8_t width);
  void insert_int(size_t index, int64_t value);
  bool add_int(int64_t value, const SetLimits& limits);
  // Listpack helpers: members are (LEB128 length, bytes) records in flat_, in order.
  // Offset of the record holding `member`, or npos.
  size_t listpack_find(std::string_view member) const;
  void listpack_append(std::string_view member);
  // The member at `index` (0-based) and the offset/length of its whole record.
  std::string_view listpack_at(size_t index, size_t* record_offset, size_t* record_length) const;

  void convert_to_listpack();
  void convert_to_table();

  // The flat encodings' bytes or the hashtable, as encoding_ says: a set needs only one.
  union {
    FlatBytes flat_;
    StringSet* table_;  // owned
  };
  uint32_t count_ = 0;  // members of the flat encodings
  Encoding encoding_ = Encoding::kIntset;
  uint8_t int_width_ = 2;
};

namespace set_value_detail {

// Decimal text of `value` into `buffer` (at least 20 bytes); returns the view.
std::string_view int_text(int64_t value, char* buffer);

}  // namespace set_value_detail

template <typename Fn>
void SetValue::for_each(Fn&& visit) const {
  // A visitor that returns bool ends the walk by returning false.
  auto call = [&visit](std::string_view member) -> bool {
    if constexpr (std::is_same_v<std::invoke_result_t<Fn&, std::string_view>, bool>) {
      return visit(member);
    } else {
      visit(member);
      return true;
    }
  };
  switch (encoding_) {
    case Encoding::kIntset: {
      char buffer[24];
      for (size_t i = 0; i < count_; ++i) {
        if (!call(set_value_detail::int_text(int_at(i), buffer))) return;
      }
      return;
    }
    case Encoding::kListpack: {
      const std::string_view bytes(flat_);
      size_t offset = 0;
      for (size_t i = 0; i < count_; ++i) {
        const size_t length = packed::read_length(bytes, &offset);
        if (!call(bytes.substr(offset, length))) return;
        offset += length;
      }
      return;
    }
    default:
      for (const std::string& member : *table_) {
        if (!call(member)) return;
      }
  }
}

template <typename Fn>
uint64_t SetValue::scan(uint64_t cursor, Fn&& visit) const {
  if (!is_table()) {
    for_each(visit);
    return 0;
  }
  return table_->scan(cursor, [&](const std::string& member) { visit(std::string_view(member)); });
}

}  // namespace keywarden
