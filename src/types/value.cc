#include "types/value.h"

#include <charconv>

#include "common/number.h"
#include "types/hash_value.h"

namespace keywarden {

std::string_view value_type_name(ValueType type) {
  switch (type) {
    case ValueType::kString: return "string";
    case ValueType::kList: return "list";
    case ValueType::kSet: return "set";
    case ValueType::kZSet: return "zset";
    case ValueType::kHash: return "hash";
  }
  return "none";
}

std::string_view encoding_name(Encoding encoding) {
  switch (encoding) {
    case Encoding::kInt: return "int";
    case Encoding::kEmbStr: return "embstr";
    case Encoding::kRaw: return "raw";
    case Encoding::kListpack: return "listpack";
    case Encoding::kHashTable: return "hashtable";
    case Encoding::kQuicklist: return "quicklist";
    case Encoding::kIntset: return "intset";
    case Encoding::kSkiplist: return "skiplist";
  }
  return "unknown";
}

Value::Value(const Value& other)
    : type_(other.type_), encoding_(other.encoding_), int_(other.int_), bytes_(other.bytes_),
      aggregate_(other.aggregate_ == nullptr ? nullptr : other.aggregate_->clone()) {}

Value& Value::operator=(const Value& other) {
  if (this != &other) *this = Value(other);
  return *this;
}

Value Value::make_hash() {
  return make_aggregate(ValueType::kHash, std::make_unique<HashValue>());
}

Value Value::make_aggregate(ValueType type, std::unique_ptr<Aggregate> payload) {
  Value value;
  value.type_ = type;
  value.aggregate_ = std::move(payload);
  return value;
}

Value Value::make_string(std::string_view bytes) {
  int64_t number;
  if (bytes.size() <= kMaxIntEncodedLength && parse_int64(bytes, &number)) return make_int(number);
  return make_plain_string(bytes);
}

Value Value::make_plain_string(std::string_view bytes) {
  Value value;
  value.encoding_ = bytes.size() <= kEmbStrMaxLength ? Encoding::kEmbStr : Encoding::kRaw;
  value.bytes_.assign(bytes);
  return value;
}

Value Value::make_int(int64_t number) {
  Value value;
  value.encoding_ = Encoding::kInt;
  value.int_ = number;
  return value;
}

Value Value::make_raw(std::string bytes) {
  Value value;
  value.encoding_ = Encoding::kRaw;
  value.bytes_ = std::move(bytes);
  return value;
}

void Value::assign_string(std::string_view bytes) {
  int64_t number;
  if (bytes.size() <= kMaxIntEncodedLength && parse_int64(bytes, &number)) {
    *this = make_int(number);
    return;
  }
  const size_t capacity = bytes_.capacity();
  const bool reuse = type_ == ValueType::kString && encoding_ != Encoding::kInt &&
                     capacity >= bytes.size() && capacity <= 2 * bytes.size() + 16;
  if (!reuse) {
    *this = make_plain_string(bytes);
    return;
  }
  encoding_ = bytes.size() <= kEmbStrMaxLength ? Encoding::kEmbStr : Encoding::kRaw;
  bytes_.assign(bytes);
}

std::string_view Value::string_view(char (&scratch)[kInt64BufferSize]) const {
  if (encoding_ != Encoding::kInt) return bytes_;
  auto result = std::to_chars(scratch, scratch + kInt64BufferSize, int_);
  return {scratch, static_cast<size_t>(result.ptr - scratch)};
}

size_t Value::string_length() const {
  if (encoding_ != Encoding::kInt) return bytes_.size();
  char scratch[kInt64BufferSize];
  return string_view(scratch).size();
}

std::string& Value::mutable_raw() {
  if (encoding_ == Encoding::kInt) {
    char scratch[kInt64BufferSize];
    bytes_.assign(string_view(scratch));
  }
  encoding_ = Encoding::kRaw;
  return bytes_;
}

size_t Value::payload_bytes() const {
  if (aggregate_ != nullptr) return aggregate_->payload_bytes();
  if (encoding_ == Encoding::kInt) return 0;
  // std::string keeps up to 15 bytes inline; beyond that it holds one heap block.
  return bytes_.capacity() > 15 ? bytes_.capacity() + 1 : 0;
}

}  // namespace keywarden
