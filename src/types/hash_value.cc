// The hash value's two encodings and the conversion between them (see hash_value.h).
#include "types/hash_value.h"

#include <algorithm>

#include "types/packed_buffer.h"

namespace keywarden {
namespace {

size_t string_heap_bytes(const std::string& text) {
  return text.capacity() > 15 ? text.capacity() + 1 : 0;
}

}  // namespace

HashValue::HashValue() = default;
HashValue::~HashValue() = default;
HashValue::HashValue(HashValue&&) noexcept = default;
HashValue& HashValue::operator=(HashValue&&) noexcept = default;

HashValue::HashValue(const HashValue& other)
    : listpack_(other.listpack_),
      count_(other.count_),
      table_(other.table_ == nullptr ? nullptr : std::make_unique<Table>(*other.table_)) {}

HashValue& HashValue::operator=(const HashValue& other) {
  if (this != &other) *this = HashValue(other);
  return *this;
}

size_t HashValue::size() const { return table_ == nullptr ? count_ : table_->size(); }

size_t HashValue::listpack_find(std::string_view field) const {
  const std::string_view bytes = listpack_;
  size_t offset = 0;
  for (size_t i = 0; i < count_; ++i) {
    const size_t record = offset;
    const size_t field_length = packed::read_length(bytes, &offset);
    if (field_length == field.size() && bytes.compare(offset, field_length, field) == 0) {
      return record;
    }
    offset += field_length;
    offset += packed::read_length(bytes, &offset);
  }
  return std::string::npos;
}

HashValue::PairView HashValue::listpack_at(size_t index) const {
  const std::string_view bytes = listpack_;
  size_t offset = 0;
  for (size_t i = 0; i < index; ++i) {
    offset += packed::read_length(bytes, &offset);
    offset += packed::read_length(bytes, &offset);
  }
  return listpack_read(&offset);
}

std::optional<std::string_view> HashValue::find(std::string_view field) const {
  if (table_ == nullptr) {
    size_t offset = listpack_find(field);
    if (offset == std::string::npos) return std::nullopt;
    return listpack_read(&offset).value;
  }
  const Pair* pair = table_->find(field);
  if (pair == nullptr) return std::nullopt;
  return std::string_view(pair->value);
}

void HashValue::convert_to_table() {
  if (table_ != nullptr) return;
  auto table = std::make_unique<Table>();
  table->reserve(count_);
  for_each([&](std::string_view field, std::string_view value) {
    table->insert_new(Pair{std::string(field), std::string(value)});
  });
  table_ = std::move(table);
  std::string().swap(listpack_);
  count_ = 0;
}

bool HashValue::set(std::string_view field, std::string_view value, const HashLimits& limits) {
  if (table_ == nullptr && (!fits_listpack(field, limits) || !fits_listpack(value, limits))) {
    convert_to_table();
  }
  if (table_ == nullptr) {
    size_t offset = listpack_find(field);
    if (offset != std::string::npos) {
      // Replace the value's (length, bytes) in place; the record keeps its position.
      offset += packed::length_size(field.size()) + field.size();
      size_t end = offset;
      end += packed::read_length(listpack_, &end);
      std::string encoded;
      encoded.reserve(packed::length_size(value.size()) + value.size());
      packed::append_length(encoded, value.size());
      encoded.append(value);
      if (encoded.size() > end - offset) {
        packed::reserve_more(listpack_, encoded.size() - (end - offset));
      }
      listpack_.replace(offset, end - offset, encoded);
      // An update converts too when the entries limit was lowered below the size (Redis checks
      // the length after every set).
      if (static_cast<int64_t>(count_) > limits.max_listpack_entries) convert_to_table();
      return false;
    }
    packed::reserve_more(listpack_, packed::length_size(field.size()) + field.size() +
                                        packed::length_size(value.size()) + value.size());
    packed::append_length(listpack_, field.size());
    listpack_.append(field);
    packed::append_length(listpack_, value.size());
    listpack_.append(value);
    ++count_;
    if (static_cast<int64_t>(count_) > limits.max_listpack_entries) convert_to_table();
    return true;
  }
  if (Pair* pair = table_->find(field)) {
    pair->value.assign(value);
    return false;
  }
  table_->insert_new(Pair{std::string(field), std::string(value)});
  return true;
}

bool HashValue::remove(std::string_view field) {
  if (table_ == nullptr) {
    const size_t record = listpack_find(field);
    if (record == std::string::npos) return false;
    size_t end = record;
    listpack_read(&end);
    listpack_.erase(record, end - record);
    --count_;
    return true;
  }
  return table_->erase(field);
}

HashValue::PairView HashValue::random_pair(std::mt19937_64& rng) const {
  if (table_ == nullptr) {
    return listpack_at(std::uniform_int_distribution<size_t>(0, count_ - 1)(rng));
  }
  const Pair& pair = table_->random(rng);
  return PairView{pair.field, pair.value};
}

std::vector<HashValue::PairView> HashValue::random_distinct(size_t count,
                                                            std::mt19937_64& rng) const {
  std::vector<PairView> chosen;
  if (table_ != nullptr) {
    for (const Pair* pair : table_->random_distinct(count, rng)) {
      chosen.push_back(PairView{pair->field, pair->value});
    }
    return chosen;
  }
  const size_t total = count_;
  count = std::min(count, total);
  // A partial shuffle of the (small) listpack.
  chosen.reserve(total);
  for_each([&](std::string_view field, std::string_view value) {
    chosen.push_back(PairView{field, value});
  });
  for (size_t i = 0; i < count; ++i) {
    std::swap(chosen[i], chosen[std::uniform_int_distribution<size_t>(i, total - 1)(rng)]);
  }
  chosen.resize(count);
  return chosen;
}

size_t HashValue::payload_bytes() const {
  size_t bytes = sizeof(HashValue);
  if (table_ == nullptr) return bytes + string_heap_bytes(listpack_);
  bytes += sizeof(Table) + table_->structure_bytes();
  table_->for_each([&](const Pair& pair) {
    bytes += string_heap_bytes(pair.field) + string_heap_bytes(pair.value);
  });
  return bytes;
}

}  // namespace keywarden
