// The set value's three encodings and the one-way conversions between them (see set_value.h).
#include "types/set_value.h"

#include <malloc.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

#include "common/number.h"

namespace keywarden {
namespace set_value_detail {

std::string_view int_text(int64_t value, char* buffer) {
  return std::string_view(buffer, int64_to_chars(value, buffer));
}

}  // namespace set_value_detail

namespace {

using set_value_detail::int_text;
using packed::append_length;
using packed::read_length;

// Flat buffers below this size grow only to the allocator's size class (FlatBytes).
constexpr size_t kExactFitBytes = 1024;

// Redis caps intsets at 2^30 entries whatever set-max-intset-entries says.
constexpr int64_t kIntsetHardLimit = int64_t{1} << 30;

template <typename Narrow>
bool fits(int64_t value) {
  return value >= std::numeric_limits<Narrow>::min() && value <= std::numeric_limits<Narrow>::max();
}

uint8_t width_for(int64_t value) {
  if (fits<int16_t>(value)) return 2;
  if (fits<int32_t>(value)) return 4;
  return 8;
}

size_t decimal_length(int64_t value) {
  char buffer[24];
  return int64_to_chars(value, buffer);
}

void write_int(char* at, uint8_t width, int64_t value) {
  if (width == 2) {
    const auto narrow = static_cast<int16_t>(value);
    std::memcpy(at, &narrow, 2);
  } else if (width == 4) {
    const auto narrow = static_cast<int32_t>(value);
    std::memcpy(at, &narrow, 4);
  } else {
    std::memcpy(at, &value, 8);
  }
}

size_t string_heap_bytes(const std::string& text) {
  return text.capacity() > 15 ? text.capacity() + 1 : 0;
}

}  // namespace

// Every set pays for its SetValue: keep it within jemalloc's 32-byte class.
static_assert(sizeof(SetValue) <= 32);

// --- FlatBytes -----------------------------------------------------------------------------

SetValue::FlatBytes::FlatBytes(const FlatBytes& other) {
  if (other.size_ == 0) return;
  reserve_for(other.size_);
  std::memcpy(data_, other.data_, other.size_);
  size_ = other.size_;
}

SetValue::FlatBytes::FlatBytes(FlatBytes&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

SetValue::FlatBytes& SetValue::FlatBytes::operator=(FlatBytes&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

size_t SetValue::FlatBytes::heap_bytes() const {
  return data_ == nullptr ? 0 : malloc_usable_size(data_);
}

void SetValue::FlatBytes::reserve_for(size_t size) {
  if (size == 0) return;
  if (data_ != nullptr && malloc_usable_size(data_) >= size) return;
  // Below 1 KiB only the allocator's rounding up to its size class is free room (jemalloc's
  // classes are at most 25% apart, so growth stays geometric); beyond, a quarter more. Either
  // way member-by-member growth is amortised O(1), and a small set ends in the size class of
  // its contents, as Redis's intsets and listpacks (reallocated on every insertion) do.
  void* grown = std::realloc(data_, size < kExactFitBytes ? size : size + size / 4);
  if (grown == nullptr) throw std::bad_alloc();
  data_ = static_cast<char*>(grown);
}

void SetValue::FlatBytes::insert(size_t offset, size_t count) {
  if (count == 0) return;
  reserve_for(size_ + count);
  std::memmove(data_ + offset + count, data_ + offset, size_ - offset);
  std::memset(data_ + offset, 0, count);
  size_ += count;
}

void SetValue::FlatBytes::append(std::string_view bytes) {
  if (bytes.empty()) return;
  reserve_for(size_ + bytes.size());
  std::memcpy(data_ + size_, bytes.data(), bytes.size());
  size_ += bytes.size();
}

void SetValue::FlatBytes::erase(size_t offset, size_t count) {
  std::memmove(data_ + offset, data_ + offset + count, size_ - offset - count);
  size_ -= count;
}

// --- storage -------------------------------------------------------------------------------

SetValue::SetValue() : flat_() {}

SetValue::~SetValue() { release_storage(); }

SetValue::SetValue(const SetValue& other)
    : count_(other.count_), encoding_(other.encoding_), int_width_(other.int_width_) {
  if (other.is_table()) {
    table_ = new StringSet(*other.table_);
  } else {
    new (&flat_) FlatBytes(other.flat_);
  }
}

SetValue::SetValue(SetValue&& other) noexcept { take(other); }

SetValue& SetValue::operator=(SetValue&& other) noexcept {
  if (this != &other) {
    release_storage();
    take(other);
  }
  return *this;
}

SetValue& SetValue::operator=(const SetValue& other) {
  if (this != &other) *this = SetValue(other);
  return *this;
}

void SetValue::release_storage() {
  if (is_table()) {
    delete table_;
  } else {
    flat_.~FlatBytes();
  }
}

void SetValue::take(SetValue& other) noexcept {
  count_ = other.count_;
  encoding_ = other.encoding_;
  int_width_ = other.int_width_;
  if (other.is_table()) {
    table_ = other.table_;
  } else {
    new (&flat_) FlatBytes(std::move(other.flat_));
    other.flat_.~FlatBytes();
  }
  new (&other.flat_) FlatBytes();
  other.count_ = 0;
  other.encoding_ = Encoding::kIntset;
  other.int_width_ = 2;
}

// --- intset --------------------------------------------------------------------------------

int64_t SetValue::int_at(size_t index) const {
  const char* at = flat_.data() + index * int_width_;
  if (int_width_ == 2) {
    int16_t value;
    std::memcpy(&value, at, 2);
    return value;
  }
  if (int_width_ == 4) {
    int32_t value;
    std::memcpy(&value, at, 4);
    return value;
  }
  int64_t value;
  std::memcpy(&value, at, 8);
  return value;
}

size_t SetValue::int_position(int64_t value, bool* found) const {
  size_t low = 0;
  size_t high = count_;
  while (low < high) {
    const size_t middle = low + (high - low) / 2;
    const int64_t at = int_at(middle);
    if (at == value) {
      *found = true;
      return middle;
    }
    if (at < value) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  *found = false;
  return low;
}

void SetValue::widen_ints(uint8_t width) {
  FlatBytes wider;
  wider.insert(0, static_cast<size_t>(count_) * width);
  for (size_t i = 0; i < count_; ++i) write_int(wider.data() + i * width, width, int_at(i));
  flat_ = std::move(wider);
  int_width_ = width;
}

void SetValue::insert_int(size_t index, int64_t value) {
  flat_.insert(index * int_width_, int_width_);
  write_int(flat_.data() + index * int_width_, int_width_, value);
  ++count_;
}

bool SetValue::add_int(int64_t value, const SetLimits& limits) {
  const uint8_t width = width_for(value);
  if (width > int_width_) widen_ints(width);
  bool found;
  const size_t index = int_position(value, &found);
  if (found) return false;
  insert_int(index, value);
  if (static_cast<int64_t>(count_) > std::min(limits.max_intset_entries, kIntsetHardLimit)) {
    convert_to_table();
  }
  return true;
}

// --- listpack ------------------------------------------------------------------------------

size_t SetValue::listpack_find(std::string_view member) const {
  const std::string_view bytes(flat_);
  size_t offset = 0;
  for (size_t i = 0; i < count_; ++i) {
    const size_t record = offset;
    const size_t length = read_length(bytes, &offset);
    if (length == member.size() && bytes.compare(offset, length, member) == 0) return record;
    offset += length;
  }
  return std::string::npos;
}

void SetValue::listpack_append(std::string_view member) {
  append_length(flat_, member.size());
  flat_.append(member);
  ++count_;
}

std::string_view SetValue::listpack_at(size_t index, size_t* record_offset,
                                       size_t* record_length) const {
  const std::string_view bytes(flat_);
  size_t offset = 0;
  for (size_t i = 0;; ++i) {
    const size_t record = offset;
    const size_t length = read_length(bytes, &offset);
    if (i == index) {
      *record_offset = record;
      *record_length = offset - record + length;
      return bytes.substr(offset, length);
    }
    offset += length;
  }
}

// --- conversions ---------------------------------------------------------------------------

void SetValue::convert_to_listpack() {
  FlatBytes records;
  char buffer[24];
  for (size_t i = 0; i < count_; ++i) {
    const std::string_view text = int_text(int_at(i), buffer);
    append_length(records, text.size());
    records.append(text);
  }
  flat_ = std::move(records);
  encoding_ = Encoding::kListpack;
}

void SetValue::convert_to_table() {
  auto table = std::make_unique<StringSet>();
  // Room for the member about to be added too, as Redis presizes its dict.
  table->reserve(count_ + 1);
  for_each([&](std::string_view member) { table->insert_new(std::string(member)); });
  flat_.~FlatBytes();
  table_ = table.release();
  count_ = 0;
  encoding_ = Encoding::kHashTable;
}

// --- public operations ---------------------------------------------------------------------

bool SetValue::contains(std::string_view member) const {
  switch (encoding_) {
    case Encoding::kIntset: {
      int64_t value;
      if (!parse_int64(member, &value) || width_for(value) > int_width_) return false;
      bool found;
      int_position(value, &found);
      return found;
    }
    case Encoding::kListpack:
      return listpack_find(member) != std::string::npos;
    default:
      return table_->contains(member);
  }
}

bool SetValue::add(std::string_view member, const SetLimits& limits) {
  switch (encoding_) {
    case Encoding::kIntset: {
      int64_t value;
      if (parse_int64(member, &value)) return add_int(value, limits);
      // A listpack must be able to hold the integers as text too; the longest is the
      // smallest or the largest.
      size_t longest = 0;
      if (count_ > 0) {
        longest = std::max(decimal_length(int_at(0)), decimal_length(int_at(count_ - 1)));
      }
      const auto max_value = static_cast<size_t>(std::max<int64_t>(limits.max_listpack_value, 0));
      if (static_cast<int64_t>(count_) < limits.max_listpack_entries &&
          member.size() <= max_value && longest <= max_value) {
        convert_to_listpack();
        listpack_append(member);
      } else {
        convert_to_table();
        table_->insert_new(std::string(member));
      }
      return true;
    }
    case Encoding::kListpack: {
      if (listpack_find(member) != std::string::npos) return false;
      if (static_cast<int64_t>(count_) < limits.max_listpack_entries &&
          static_cast<int64_t>(member.size()) <= limits.max_listpack_value) {
        listpack_append(member);
      } else {
        convert_to_table();
        table_->insert_new(std::string(member));
      }
      return true;
    }
    default:
      if (table_->contains(member)) return false;
      table_->insert_new(std::string(member));
      return true;
  }
}

bool SetValue::remove(std::string_view member) {
  switch (encoding_) {
    case Encoding::kIntset: {
      int64_t value;
      if (!parse_int64(member, &value) || width_for(value) > int_width_) return false;
      bool found;
      const size_t index = int_position(value, &found);
      if (!found) return false;
      flat_.erase(index * int_width_, int_width_);
      --count_;
      return true;
    }
    case Encoding::kListpack: {
      const size_t record = listpack_find(member);
      if (record == std::string::npos) return false;
      size_t offset = record;
      const size_t length = read_length(std::string_view(flat_), &offset);
      flat_.erase(record, offset - record + length);
      --count_;
      return true;
    }
    default:
      return table_->erase(member);
  }
}

std::string SetValue::random_member(std::mt19937_64& rng) const {
  if (is_table()) return table_->random(rng);
  const size_t index = std::uniform_int_distribution<size_t>(0, count_ - 1)(rng);
  if (encoding_ == Encoding::kIntset) return format_int64(int_at(index));
  size_t record;
  size_t length;
  return std::string(listpack_at(index, &record, &length));
}

std::vector<std::string> SetValue::random_distinct(size_t count, std::mt19937_64& rng) const {
  count = std::min(count, size());
  std::vector<std::string> chosen;
  chosen.reserve(count);
  if (is_table()) {
    for (const std::string* member : table_->random_distinct(count, rng)) {
      chosen.push_back(*member);
    }
    return chosen;
  }
  // Flat sets are small: a partial shuffle of all members.
  std::vector<std::string> all;
  all.reserve(count_);
  for_each([&](std::string_view member) { all.emplace_back(member); });
  for (size_t i = 0; i < count; ++i) {
    std::swap(all[i], all[std::uniform_int_distribution<size_t>(i, all.size() - 1)(rng)]);
  }
  all.resize(count);
  return all;
}

std::string SetValue::pop_random(std::mt19937_64& rng) {
  if (is_table()) {
    std::string member = table_->random(rng);
    table_->erase(member);
    return member;
  }
  const size_t index = std::uniform_int_distribution<size_t>(0, count_ - 1)(rng);
  if (encoding_ == Encoding::kIntset) {
    const int64_t value = int_at(index);
    flat_.erase(index * int_width_, int_width_);
    --count_;
    return format_int64(value);
  }
  size_t record;
  size_t length;
  std::string member(listpack_at(index, &record, &length));
  flat_.erase(record, length);
  --count_;
  return member;
}

std::vector<std::string> SetValue::pop_random(size_t count, std::mt19937_64& rng,
                                              const SetLimits& limits) {
  std::vector<std::string> popped;
  popped.reserve(count);
  const size_t remaining = size() - count;
  // Redis's SPOP_MOVE_STRATEGY_MUL: drawing the popped members one by one is cheaper while
  // the survivors are more than a fifth of the popped.
  if (remaining * 5 > count) {
    for (size_t i = 0; i < count; ++i) popped.push_back(pop_random(rng));
    return popped;
  }
  SetValue survivors;
  for (size_t i = 0; i < remaining; ++i) survivors.add(pop_random(rng), limits);
  for_each([&](std::string_view member) { popped.emplace_back(member); });
  *this = std::move(survivors);
  return popped;
}

size_t SetValue::payload_bytes() const {
  if (!is_table()) return sizeof(SetValue) + flat_.heap_bytes();
  size_t bytes = sizeof(SetValue) + sizeof(StringSet) + table_->structure_bytes();
  table_->for_each([&](const std::string& member) { bytes += string_heap_bytes(member); });
  return bytes;
}

}  // namespace keywarden
