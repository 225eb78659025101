// A keyspace value: its Redis type, the encoding OBJECT ENCODING reports, and the payload.
//
// Strings follow Redis's three encodings. A string that parses as a 64-bit integer and is at
// most 20 bytes long is stored as the integer itself ("int"); other strings keep their bytes
// and report "embstr" when created in one piece at 44 bytes or less, "raw" otherwise or once
// modified in place (APPEND, SETRANGE), because that is what Redis clients and tests observe.
//
// Layout (16 bytes, so that an Entry stays small): 14 payload bytes, a length byte for inline
// strings and one tag byte (type, which payload, and "raw" for strings). The payload is one of
//  - the int64 itself (int encoding);
//  - up to kInlineStringCapacity string bytes inline, no allocation (most short values);
//  - a pointer to one heap block holding size, capacity and the bytes of a longer string;
//  - a pointer to the Aggregate of a collection.
// Where the bytes live is independent of the encoding Redis shows: an inline string may be
// "raw" after APPEND, a 30-byte heap string is still "embstr" after SET.
//
// Aggregates hold their payload behind one Aggregate pointer (types/aggregate.h): a hash is a
// HashValue, a list a ListValue, a set a SetValue, a sorted set a ZSetValue, each in its own
// file and reached through as<T>(). Copying a Value copies the payload deeply (COPY); moving it
// moves the pointer and leaves the source an empty string.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "common/string_block.h"
#include "types/aggregate.h"

namespace keywarden {

enum class ValueType : uint8_t { kString, kList, kSet, kZSet, kHash, kStream };

// Redis's OBJECT_ENCODING_EMBSTR_SIZE_LIMIT: the longest string created as "embstr".
inline constexpr size_t kEmbStrMaxLength = 44;
// Longest decimal text that may become an "int" encoded string ("-9223372036854775808").
inline constexpr size_t kMaxIntEncodedLength = 20;
// Enough room for any int64 in decimal.
inline constexpr size_t kInt64BufferSize = 24;
// The longest string a Value holds without a heap allocation.
inline constexpr size_t kInlineStringCapacity = 14;

std::string_view value_type_name(ValueType type);
std::string_view encoding_name(Encoding encoding);

class Value {
 public:
  Value() = default;
  Value(const Value& other);
  Value& operator=(const Value& other);
  Value(Value&& other) noexcept { take(other); }
  Value& operator=(Value&& other) noexcept;
  ~Value() { release(); }

  // A string as SET stores it: integer-encoded when possible, else embstr/raw by length.
  static Value make_string(std::string_view bytes);
  // A string that is never integer-encoded, created in one piece (embstr/raw by length).
  static Value make_plain_string(std::string_view bytes);
  static Value make_int(int64_t number);
  // A raw string: what Redis holds after an in-place modification.
  static Value make_raw(std::string_view bytes);
  // The string held in `block`, kept as it is (no copy): "raw", as Redis stores a big argument
  // it read into its own buffer. A block of kEmbStrMaxLength bytes or less is stored as
  // make_string() stores its bytes instead.
  static Value adopt_string(StringBlock block);
  // An empty hash in the listpack encoding.
  static Value make_hash();
  // A collection of `type` holding `payload` (whose class must match the type).
  static Value make_aggregate(ValueType type, std::unique_ptr<Aggregate> payload);

  // Becomes `bytes` stored exactly as make_string() stores them, reusing this value's heap
  // buffer when it is large enough and not more than about twice the need: overwriting a key
  // with a value of similar size (the common SET) then costs no allocation.
  void assign_string(std::string_view bytes);

  ValueType type() const { return static_cast<ValueType>(tag_ & kTypeMask); }
  Encoding encoding() const;
  bool is_int() const { return kind() == Kind::kInt; }
  int64_t int_value() const { return is_int() ? load<int64_t>() : 0; }

  // The string's bytes; an integer is formatted into `scratch`.
  std::string_view string_view(char (&scratch)[kInt64BufferSize]) const;
  size_t string_length() const;
  // In-place edits of a string (APPEND, SETRANGE). Both first convert the value to "raw", as
  // Redis does before an in-place change, and return the new length. write_at() pads with
  // zero bytes up to `offset` when the string is shorter.
  size_t append(std::string_view suffix);
  // The string's bytes, writable in place at their current length (the value becomes "raw",
  // as Redis unshares a string before editing it in place: PFADD, PFCOUNT's cache).
  char* mutable_bytes() { return make_writable(string_length()); }
  size_t write_at(size_t offset, std::string_view patch);
  // The string's bytes, writable for an in-place bit edit (SETBIT, BITFIELD, BITOP's result):
  // converts the value to "raw" as write_at() does, pads it with zero bytes to at least
  // `min_length`, and returns them (valid until the value next changes).
  char* zero_extend(size_t min_length);
  // The same, without the zero fill: the bytes past the old length are unspecified, for a
  // caller that writes every one of them (BITOP's result).
  char* extend_for_overwrite(size_t min_length);

  // The collection payload as its concrete class; only for the matching type().
  template <typename T>
  T& as() { return static_cast<T&>(*aggregate()); }
  template <typename T>
  const T& as() const { return static_cast<const T&>(*aggregate()); }
  // Elements of a collection (0 for a string).
  size_t aggregate_size() const { return kind() == Kind::kAggregate ? aggregate()->size() : 0; }

  // Heap bytes held beyond the entry itself (MEMORY USAGE): 0 for an integer or an inline
  // string, the heap block of a longer string, the collection's own figure.
  size_t payload_bytes() const;

 private:
  enum class Kind : uint8_t { kInt, kInline, kHeap, kAggregate };
  // A string too long to sit inline: one allocation holding this header and then the bytes.
  using HeapString = StringBlockHeader;

  static constexpr uint8_t kTypeMask = 0x07;
  static constexpr int kKindShift = 3;
  static constexpr uint8_t kKindMask = 0x18;
  static constexpr uint8_t kRawBit = 0x20;

  Kind kind() const { return static_cast<Kind>((tag_ & kKindMask) >> kKindShift); }
  void set_tag(ValueType type, Kind kind, bool raw) {
    tag_ = static_cast<uint8_t>(static_cast<uint8_t>(type) |
                                (static_cast<uint8_t>(kind) << kKindShift) | (raw ? kRawBit : 0));
  }
  void set_raw() { tag_ |= kRawBit; }

  // The payload's first 8 bytes as an int64 or a pointer (memcpy: the bytes are shared with
  // the inline string, and compile to one load or store).
  template <typename T>
  T load() const {
    T result;
    std::memcpy(&result, payload_, sizeof(T));
    return result;
  }
  template <typename T>
  void store(T value) { std::memcpy(payload_, &value, sizeof(T)); }

  Aggregate* aggregate() const { return load<Aggregate*>(); }
  HeapString* heap() const { return load<HeapString*>(); }

  // Frees what the payload owns and leaves the value an empty inline string.
  void release();
  // Takes `other`'s 16 bytes (this holds nothing) and leaves `other` an empty string.
  void take(Value& other) noexcept;
  // Stores `bytes` as a string with the given encoding, inline or in a new heap block of
  // exactly `capacity` bytes; this holds nothing.
  void store_string(std::string_view bytes, bool raw, size_t capacity);
  // Makes the string raw and its bytes writable with room for `size` bytes (contents kept,
  // new bytes unspecified); returns them.
  char* make_writable(size_t size);

  alignas(8) char payload_[kInlineStringCapacity] = {};
  uint8_t inline_size_ = 0;
  uint8_t tag_ = static_cast<uint8_t>(static_cast<uint8_t>(Kind::kInline) << kKindShift) | kRawBit;
};

static_assert(sizeof(Value) == 16, "a Value is 16 bytes: Entry's size depends on it");

}  // namespace keywarden
