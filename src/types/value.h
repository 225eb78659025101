// A keyspace value: its Redis type, the encoding OBJECT ENCODING reports, and the payload.
//
// Strings follow Redis's three encodings. A string that parses as a 64-bit integer and is at
// most 20 bytes long is stored as the integer itself ("int"); other strings keep their bytes
// and report "embstr" when created in one piece at 44 bytes or less, "raw" otherwise or once
// modified in place (APPEND, SETRANGE), because that is what Redis clients and tests observe.
//
// Aggregates hold their payload behind one Aggregate pointer (types/aggregate.h), so that a
// string value stays as small and as fast as before: a hash is a HashValue, a list a ListValue,
// a set a SetValue, a sorted set a ZSetValue, each in its own file and reached through as<T>().
// Copying a Value copies the payload deeply (COPY); moving it moves the pointer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "types/aggregate.h"

namespace keywarden {

enum class ValueType : uint8_t { kString, kList, kSet, kZSet, kHash };

// Redis's OBJECT_ENCODING_EMBSTR_SIZE_LIMIT: the longest string created as "embstr".
inline constexpr size_t kEmbStrMaxLength = 44;
// Longest decimal text that may become an "int" encoded string ("-9223372036854775808").
inline constexpr size_t kMaxIntEncodedLength = 20;
// Enough room for any int64 in decimal.
inline constexpr size_t kInt64BufferSize = 24;

std::string_view value_type_name(ValueType type);
std::string_view encoding_name(Encoding encoding);

class Value {
 public:
  Value() = default;
  Value(const Value& other);
  Value& operator=(const Value& other);
  Value(Value&&) noexcept = default;
  Value& operator=(Value&&) noexcept = default;

  // A string as SET stores it: integer-encoded when possible, else embstr/raw by length.
  static Value make_string(std::string_view bytes);
  // A string that is never integer-encoded, created in one piece (embstr/raw by length).
  static Value make_plain_string(std::string_view bytes);
  static Value make_int(int64_t number);
  // A raw string: what Redis holds after an in-place modification.
  static Value make_raw(std::string bytes);
  // An empty hash in the listpack encoding.
  static Value make_hash();
  // A collection of `type` holding `payload` (whose class must match the type).
  static Value make_aggregate(ValueType type, std::unique_ptr<Aggregate> payload);

  // Becomes `bytes` stored exactly as make_string() stores them, reusing this value's string
  // buffer when it is large enough and not more than about twice the need: overwriting a key
  // with a value of similar size (the common SET) then costs no allocation.
  void assign_string(std::string_view bytes);

  ValueType type() const { return type_; }
  Encoding encoding() const {
    return aggregate_ != nullptr ? aggregate_->encoding() : encoding_;
  }
  bool is_int() const { return encoding_ == Encoding::kInt; }
  int64_t int_value() const { return int_; }

  // The string's bytes; an integer is formatted into `scratch`.
  std::string_view string_view(char (&scratch)[kInt64BufferSize]) const;
  size_t string_length() const;
  // Converts to "raw" (as Redis does before an in-place change) and exposes the bytes.
  std::string& mutable_raw();

  // The collection payload as its concrete class; only for the matching type().
  template <typename T>
  T& as() { return static_cast<T&>(*aggregate_); }
  template <typename T>
  const T& as() const { return static_cast<const T&>(*aggregate_); }
  // Elements of a collection (0 for a string).
  size_t aggregate_size() const { return aggregate_ != nullptr ? aggregate_->size() : 0; }

  // Approximate heap bytes held beyond the entry itself (MEMORY USAGE, later accounting).
  size_t payload_bytes() const;

 private:
  ValueType type_ = ValueType::kString;
  Encoding encoding_ = Encoding::kRaw;
  int64_t int_ = 0;
  std::string bytes_;
  std::unique_ptr<Aggregate> aggregate_;
};

}  // namespace keywarden
