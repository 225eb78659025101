// Value: the 16-byte tagged payload of a keyspace value (layout in value.h).
#include "types/value.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <new>

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
    case ValueType::kStream: return "stream";
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
    case Encoding::kListpackEx: return "listpackex";
    case Encoding::kStream: return "stream";
  }
  return "unknown";
}

namespace {

// Room for a string about to grow in place to `size` bytes: double it while small, then add
// 1 MiB at a time (as Redis's sds does), so that a run of APPENDs is amortised linear.
size_t grown_capacity(size_t size) {
  constexpr size_t kLinearGrowthFrom = 1024 * 1024;
  return size < kLinearGrowthFrom ? size * 2 : size + kLinearGrowthFrom;
}

}  // namespace

Value::Value(const Value& other) {
  switch (other.kind()) {
    case Kind::kInt:
    case Kind::kInline:
      std::memcpy(payload_, other.payload_, sizeof(payload_));
      inline_size_ = other.inline_size_;
      tag_ = other.tag_;
      break;
    case Kind::kHeap: {
      HeapString* block = other.heap();
      store_string({block->data(), block->size},
                   (other.tag_ & kRawBit) != 0, block->size);
      break;
    }
    case Kind::kAggregate:
      store(other.aggregate()->clone().release());
      tag_ = other.tag_;
      break;
  }
}

Value& Value::operator=(const Value& other) {
  if (this != &other) *this = Value(other);
  return *this;
}

Value& Value::operator=(Value&& other) noexcept {
  if (this != &other) {
    release();
    take(other);
  }
  return *this;
}

void Value::release() {
  switch (kind()) {
    case Kind::kHeap: StringBlockHeader::destroy(heap()); break;
    case Kind::kAggregate: delete aggregate(); break;
    case Kind::kInt:
    case Kind::kInline: break;
  }
  inline_size_ = 0;
  set_tag(ValueType::kString, Kind::kInline, /*raw=*/true);
}

void Value::take(Value& other) noexcept {
  std::memcpy(payload_, other.payload_, sizeof(payload_));
  inline_size_ = other.inline_size_;
  tag_ = other.tag_;
  other.inline_size_ = 0;
  other.set_tag(ValueType::kString, Kind::kInline, /*raw=*/true);
}

void Value::store_string(std::string_view bytes, bool raw, size_t capacity) {
  if (bytes.size() <= kInlineStringCapacity) {
    if (!bytes.empty()) std::memcpy(payload_, bytes.data(), bytes.size());
    inline_size_ = static_cast<uint8_t>(bytes.size());
    set_tag(ValueType::kString, Kind::kInline, raw);
    return;
  }
  HeapString* block = StringBlockHeader::create(capacity);
  std::memcpy(block->data(), bytes.data(), bytes.size());
  block->size = bytes.size();
  store(block);
  inline_size_ = 0;
  set_tag(ValueType::kString, Kind::kHeap, raw);
}

Encoding Value::encoding() const {
  switch (kind()) {
    case Kind::kInt: return Encoding::kInt;
    case Kind::kInline:
    case Kind::kHeap: return (tag_ & kRawBit) != 0 ? Encoding::kRaw : Encoding::kEmbStr;
    case Kind::kAggregate: return aggregate()->encoding();
  }
  return Encoding::kRaw;
}

Value Value::make_hash() {
  return make_aggregate(ValueType::kHash, std::make_unique<HashValue>());
}

Value Value::make_aggregate(ValueType type, std::unique_ptr<Aggregate> payload) {
  Value value;
  value.store(payload.release());
  value.set_tag(type, Kind::kAggregate, /*raw=*/false);
  return value;
}

Value Value::make_string(std::string_view bytes) {
  int64_t number;
  if (bytes.size() <= kMaxIntEncodedLength && parse_int64(bytes, &number)) return make_int(number);
  return make_plain_string(bytes);
}

Value Value::make_plain_string(std::string_view bytes) {
  Value value;
  value.store_string(bytes, bytes.size() > kEmbStrMaxLength, bytes.size());
  return value;
}

Value Value::make_int(int64_t number) {
  Value value;
  value.store(number);
  value.set_tag(ValueType::kString, Kind::kInt, /*raw=*/false);
  return value;
}

Value Value::adopt_string(StringBlock block) {
  // Small enough for an inline or embstr string: stored as SET would store the bytes.
  if (block.size() <= kEmbStrMaxLength) return make_string(block.view());
  Value value;
  value.store(block.release());
  value.set_tag(ValueType::kString, Kind::kHeap, /*raw=*/true);
  return value;
}

Value Value::make_raw(std::string_view bytes) {
  Value value;
  value.store_string(bytes, /*raw=*/true, bytes.size());
  return value;
}

void Value::assign_string(std::string_view bytes) {
  int64_t number;
  if (bytes.size() <= kMaxIntEncodedLength && parse_int64(bytes, &number)) {
    *this = make_int(number);
    return;
  }
  const bool raw = bytes.size() > kEmbStrMaxLength;
  if (kind() == Kind::kHeap && bytes.size() > kInlineStringCapacity) {
    HeapString* block = heap();
    if (block->capacity >= bytes.size() && block->capacity <= 2 * bytes.size() + 16) {
      std::memmove(block->data(), bytes.data(), bytes.size());
      block->size = bytes.size();
      set_tag(ValueType::kString, Kind::kHeap, raw);
      return;
    }
  }
  // Built aside first: `bytes` may point into this value's own buffer.
  *this = make_plain_string(bytes);
}

std::string_view Value::string_view(char (&scratch)[kInt64BufferSize]) const {
  switch (kind()) {
    case Kind::kInline: return {payload_, inline_size_};
    case Kind::kHeap: {
      HeapString* block = heap();
      return {block->data(), block->size};
    }
    case Kind::kInt: {
      auto result = std::to_chars(scratch, scratch + kInt64BufferSize, load<int64_t>());
      return {scratch, static_cast<size_t>(result.ptr - scratch)};
    }
    case Kind::kAggregate: break;
  }
  return {};
}

size_t Value::string_length() const {
  switch (kind()) {
    case Kind::kInline: return inline_size_;
    case Kind::kHeap: return heap()->size;
    case Kind::kInt: {
      char scratch[kInt64BufferSize];
      return string_view(scratch).size();
    }
    case Kind::kAggregate: break;
  }
  return 0;
}

char* Value::make_writable(size_t size) {
  if (kind() == Kind::kInt) {
    char scratch[kInt64BufferSize];
    const std::string_view text = string_view(scratch);
    store_string(text, /*raw=*/true, text.size());
  }
  set_raw();
  if (kind() == Kind::kInline) {
    if (size <= kInlineStringCapacity) return payload_;
    HeapString* block = StringBlockHeader::create(grown_capacity(size));
    std::memcpy(block->data(), payload_, inline_size_);
    block->size = inline_size_;
    store(block);
    inline_size_ = 0;
    set_tag(ValueType::kString, Kind::kHeap, /*raw=*/true);
    return block->data();
  }
  HeapString* block = heap();
  if (block->capacity < size) {
    block = StringBlockHeader::resize(block, grown_capacity(size));
    store(block);
  }
  return block->data();
}

size_t Value::append(std::string_view suffix) {
  const size_t old_size = string_length();
  const size_t new_size = old_size + suffix.size();
  char* bytes = make_writable(new_size);
  if (!suffix.empty()) std::memcpy(bytes + old_size, suffix.data(), suffix.size());
  if (kind() == Kind::kInline) {
    inline_size_ = static_cast<uint8_t>(new_size);
  } else {
    heap()->size = new_size;
  }
  return new_size;
}

size_t Value::write_at(size_t offset, std::string_view patch) {
  const size_t old_size = string_length();
  const size_t new_size = std::max(old_size, offset + patch.size());
  char* bytes = make_writable(new_size);
  if (offset > old_size) std::memset(bytes + old_size, 0, offset - old_size);
  if (!patch.empty()) std::memcpy(bytes + offset, patch.data(), patch.size());
  if (kind() == Kind::kInline) {
    inline_size_ = static_cast<uint8_t>(new_size);
  } else {
    heap()->size = new_size;
  }
  return new_size;
}

char* Value::zero_extend(size_t min_length) {
  const size_t old_size = string_length();
  char* bytes = extend_for_overwrite(min_length);
  if (min_length > old_size) std::memset(bytes + old_size, 0, min_length - old_size);
  return bytes;
}

char* Value::extend_for_overwrite(size_t min_length) {
  const size_t new_size = std::max(string_length(), min_length);
  char* bytes = make_writable(new_size);
  if (kind() == Kind::kInline) {
    inline_size_ = static_cast<uint8_t>(new_size);
  } else {
    heap()->size = new_size;
  }
  return bytes;
}

size_t Value::payload_bytes() const {
  switch (kind()) {
    case Kind::kHeap: return sizeof(HeapString) + heap()->capacity;
    case Kind::kAggregate: return aggregate()->payload_bytes();
    case Kind::kInt:
    case Kind::kInline: break;
  }
  return 0;
}

}  // namespace keywarden
