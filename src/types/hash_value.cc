// The hash value's two encodings and the conversion between them (see hash_value.h).
#include "types/hash_value.h"

#include <algorithm>

namespace keywarden {

HashValue::HashValue() = default;
HashValue::~HashValue() = default;
HashValue::HashValue(HashValue&&) noexcept = default;
HashValue& HashValue::operator=(HashValue&&) noexcept = default;

HashValue::HashValue(const HashValue& other)
    : listpack_(other.listpack_),
      table_(other.table_ == nullptr ? nullptr : std::make_unique<Table>(*other.table_)) {}

HashValue& HashValue::operator=(const HashValue& other) {
  if (this != &other) *this = HashValue(other);
  return *this;
}

size_t HashValue::size() const { return table_ == nullptr ? listpack_.size() : table_->size(); }

const std::string* HashValue::find(std::string_view field) const {
  if (table_ == nullptr) {
    for (const Pair& pair : listpack_) {
      if (pair.field == field) return &pair.value;
    }
    return nullptr;
  }
  const Pair* pair = table_->find(field);
  return pair == nullptr ? nullptr : &pair->value;
}

void HashValue::convert_to_table() {
  if (table_ != nullptr) return;
  table_ = std::make_unique<Table>();
  table_->reserve(listpack_.size());
  for (Pair& pair : listpack_) table_->insert_new(std::move(pair));
  std::vector<Pair>().swap(listpack_);
}

bool HashValue::set(std::string_view field, std::string_view value, const HashLimits& limits) {
  if (table_ == nullptr && (!fits_listpack(field, limits) || !fits_listpack(value, limits))) {
    convert_to_table();
  }
  if (table_ == nullptr) {
    for (Pair& pair : listpack_) {
      if (pair.field == field) {
        pair.value.assign(value);
        return false;
      }
    }
    listpack_.push_back(Pair{std::string(field), std::string(value)});
    if (static_cast<int64_t>(listpack_.size()) > limits.max_listpack_entries) convert_to_table();
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
    auto it = std::find_if(listpack_.begin(), listpack_.end(),
                           [field](const Pair& pair) { return pair.field == field; });
    if (it == listpack_.end()) return false;
    listpack_.erase(it);
    return true;
  }
  return table_->erase(field);
}

const HashValue::Pair& HashValue::random_pair(std::mt19937_64& rng) const {
  if (table_ == nullptr) {
    return listpack_[std::uniform_int_distribution<size_t>(0, listpack_.size() - 1)(rng)];
  }
  return table_->random(rng);
}

std::vector<const HashValue::Pair*> HashValue::random_distinct(size_t count,
                                                               std::mt19937_64& rng) const {
  if (table_ != nullptr) return table_->random_distinct(count, rng);
  const size_t total = listpack_.size();
  count = std::min(count, total);
  // A partial shuffle of the (small) listpack.
  std::vector<const Pair*> all;
  all.reserve(total);
  for (const Pair& pair : listpack_) all.push_back(&pair);
  for (size_t i = 0; i < count; ++i) {
    std::swap(all[i], all[std::uniform_int_distribution<size_t>(i, total - 1)(rng)]);
  }
  all.resize(count);
  return all;
}

size_t HashValue::payload_bytes() const {
  auto string_bytes = [](const std::string& text) {
    return text.capacity() > 15 ? text.capacity() + 1 : 0;
  };
  size_t bytes = sizeof(HashValue);
  if (table_ == nullptr) {
    bytes += listpack_.capacity() * sizeof(Pair);
    for (const Pair& pair : listpack_) bytes += string_bytes(pair.field) + string_bytes(pair.value);
    return bytes;
  }
  bytes += sizeof(Table) + table_->structure_bytes();
  table_->for_each(
      [&](const Pair& pair) { bytes += string_bytes(pair.field) + string_bytes(pair.value); });
  return bytes;
}

}  // namespace keywarden
