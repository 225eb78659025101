// The hash value's two encodings and the conversion between them (see hash_value.h).
#include "types/hash_value.h"

#include <algorithm>
#include <bit>
#include <cassert>

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
      table_(other.table_ == nullptr ? nullptr : std::make_unique<Table>(*other.table_)),
      listpack_deadlines_(other.listpack_deadlines_),
      listpack_volatile_(other.listpack_volatile_) {
  // The copy is not in any index; its heap must point at its own pairs.
  if (!other.heap_.empty()) copy_deadlines_from(other);
}

void HashValue::copy_deadlines_from(const HashValue& other) {
  heap_.reserve(other.heap_.size());
  for (const DeadlineSlot& slot : other.heap_) {
    heap_set(table_->find(slot.pair()->field), slot.deadline_ms());
  }
}

HashValue& HashValue::operator=(const HashValue& other) {
  if (this != &other) {
    // The contents are the other hash's; the place in this hash's database index stays (the
    // owner refreshes its deadline there).
    const uint32_t slot = index_slot_;
    *this = HashValue(other);
    index_slot_ = slot;
  }
  return *this;
}

size_t HashValue::size() const { return table_ == nullptr ? count_ : table_->size(); }

size_t HashValue::listpack_find(std::string_view field, size_t* index) const {
  const std::string_view bytes = listpack_;
  size_t offset = 0;
  for (size_t i = 0; i < count_; ++i) {
    const size_t record = offset;
    const size_t field_length = packed::read_length(bytes, &offset);
    if (field_length == field.size() && bytes.compare(offset, field_length, field) == 0) {
      if (index != nullptr) *index = i;
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
  std::vector<std::pair<Pair*, int64_t>> deadlines;
  size_t index = 0;
  for_each([&](std::string_view field, std::string_view value) {
    Pair& pair = table->insert_new(Pair{std::string(field), std::string(value)});
    if (listpack_volatile_ > 0 && listpack_deadlines_[index] != kNoFieldDeadline) {
      deadlines.emplace_back(&pair, listpack_deadlines_[index]);
    }
    ++index;
  });
  table_ = std::move(table);
  std::string().swap(listpack_);
  count_ = 0;
  std::vector<int64_t>().swap(listpack_deadlines_);
  listpack_volatile_ = 0;
  heap_.reserve(deadlines.size());
  for (const auto& [pair, deadline] : deadlines) heap_set(pair, deadline);
}

bool HashValue::set(std::string_view field, std::string_view value, const HashLimits& limits,
                    bool keep_deadline) {
  if (table_ == nullptr && (!fits_listpack(field, limits) || !fits_listpack(value, limits))) {
    convert_to_table();
  }
  if (table_ == nullptr) {
    size_t index = 0;
    size_t offset = listpack_find(field, &index);
    if (offset != std::string::npos) {
      if (!keep_deadline && listpack_volatile_ > 0) {
        listpack_drop_deadline(index);
        if (listpack_volatile_ == 0) std::vector<int64_t>().swap(listpack_deadlines_);
      }
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
    if (listpack_volatile_ > 0) listpack_deadlines_.push_back(kNoFieldDeadline);
    if (static_cast<int64_t>(count_) > limits.max_listpack_entries) convert_to_table();
    return true;
  }
  if (Pair* pair = table_->find(field)) {
    pair->value.assign(value);
    if (!keep_deadline) heap_remove(pair);
    return false;
  }
  table_->insert_new(Pair{std::string(field), std::string(value)});
  return true;
}

bool HashValue::remove(std::string_view field) {
  if (table_ == nullptr) {
    size_t index = 0;
    const size_t record = listpack_find(field, &index);
    if (record == std::string::npos) return false;
    size_t end = record;
    listpack_read(&end);
    listpack_.erase(record, end - record);
    --count_;
    if (listpack_volatile_ > 0) {
      listpack_drop_deadline(index);
      listpack_deadlines_.erase(listpack_deadlines_.begin() + static_cast<ptrdiff_t>(index));
      if (listpack_volatile_ == 0) std::vector<int64_t>().swap(listpack_deadlines_);
    }
    return true;
  }
  Pair* pair = table_->find(field);
  if (pair == nullptr) return false;
  heap_remove(pair);
  return table_->erase(field);
}

void HashValue::listpack_drop_deadline(size_t index) {
  if (listpack_deadlines_[index] != kNoFieldDeadline) {
    listpack_deadlines_[index] = kNoFieldDeadline;
    --listpack_volatile_;
  }
}

int64_t HashValue::field_deadline(std::string_view field) const {
  if (table_ == nullptr) {
    if (listpack_volatile_ == 0) return kNoFieldDeadline;
    size_t index = 0;
    if (listpack_find(field, &index) == std::string::npos) return kNoFieldDeadline;
    return listpack_deadlines_[index];
  }
  if (heap_.empty()) return kNoFieldDeadline;
  const Pair* pair = table_->find(field);
  return pair == nullptr ? kNoFieldDeadline : heap_deadline(*pair);
}

bool HashValue::set_field_deadline(std::string_view field, int64_t deadline_ms) {
  assert(deadline_ms == kNoFieldDeadline ||
         (deadline_ms >= 0 && deadline_ms <= kMaxStoredFieldDeadlineMs));
  if (table_ == nullptr) {
    size_t index = 0;
    if (listpack_find(field, &index) == std::string::npos) return false;
    if (deadline_ms == kNoFieldDeadline) {
      if (listpack_volatile_ > 0) {
        listpack_drop_deadline(index);
        if (listpack_volatile_ == 0) std::vector<int64_t>().swap(listpack_deadlines_);
      }
      return true;
    }
    if (listpack_deadlines_.empty()) listpack_deadlines_.assign(count_, kNoFieldDeadline);
    if (listpack_deadlines_[index] == kNoFieldDeadline) ++listpack_volatile_;
    listpack_deadlines_[index] = deadline_ms;
    return true;
  }
  Pair* pair = table_->find(field);
  if (pair == nullptr) return false;
  if (deadline_ms == kNoFieldDeadline) {
    heap_remove(pair);
  } else {
    heap_set(pair, deadline_ms);
  }
  return true;
}

size_t HashValue::volatile_count() const {
  return table_ == nullptr ? listpack_volatile_ : heap_.size();
}

int64_t HashValue::earliest_deadline() const {
  int64_t earliest = INT64_MAX;
  if (table_ == nullptr) {
    if (listpack_volatile_ == 0) return earliest;
    for (const int64_t deadline : listpack_deadlines_) {
      if (deadline != kNoFieldDeadline) earliest = std::min(earliest, deadline);
    }
    return earliest;
  }
  return heap_.empty() ? earliest : heap_[0].deadline_ms();
}

// --- The hashtable's deadline heap (the same scheme as storage/expiry_index.h) -------------

// The heap's capacity after `size` slots: an eighth more, rounded up to what the allocator
// hands out anyway (jemalloc's size classes are a quarter of a power of two apart). Neither
// the vector's doubling nor the allocator's rounding then leaves a big unused tail, which
// every volatile field pays its share of (with doubling, 12-byte slots cost 16-20 bytes a
// field); growth stays geometric, so a push is still amortised O(1).
size_t HashValue::grown_heap_capacity(size_t size) {
  const size_t wanted = (size + size / 8 + 4) * sizeof(DeadlineSlot);
  const size_t step = std::max<size_t>(16, std::bit_floor(wanted) / 4);
  return (wanted + step - 1) / step * step / sizeof(DeadlineSlot);
}

void HashValue::heap_place(size_t index, DeadlineSlot slot) {
  heap_[index] = slot;
  Table::aux_of(*slot.pair()) = static_cast<uint32_t>(index);
}

void HashValue::heap_sift_up(size_t index) {
  const DeadlineSlot moving = heap_[index];
  while (index > 0) {
    const size_t parent = (index - 1) / 2;
    if (heap_[parent].deadline_ms() <= moving.deadline_ms()) break;
    heap_place(index, heap_[parent]);
    index = parent;
  }
  heap_place(index, moving);
}

void HashValue::heap_sift_down(size_t index) {
  const DeadlineSlot moving = heap_[index];
  const size_t count = heap_.size();
  for (;;) {
    size_t child = 2 * index + 1;
    if (child >= count) break;
    if (child + 1 < count && heap_[child + 1].deadline_ms() < heap_[child].deadline_ms()) {
      ++child;
    }
    if (moving.deadline_ms() <= heap_[child].deadline_ms()) break;
    heap_place(index, heap_[child]);
    index = child;
  }
  heap_place(index, moving);
}

int64_t HashValue::heap_deadline(const Pair& pair) const {
  const uint32_t slot = Table::aux_of(pair);
  return slot == Table::kNoAux ? kNoFieldDeadline : heap_[slot].deadline_ms();
}

void HashValue::heap_set(Pair* pair, int64_t deadline_ms) {
  const uint32_t slot = Table::aux_of(*pair);
  if (slot == Table::kNoAux) {
    if (heap_.size() == heap_.capacity()) heap_.reserve(grown_heap_capacity(heap_.size()));
    heap_.emplace_back(deadline_ms, pair);
    heap_sift_up(heap_.size() - 1);
    return;
  }
  const int64_t old = heap_[slot].deadline_ms();
  heap_[slot] = DeadlineSlot(deadline_ms, pair);
  if (deadline_ms < old) {
    heap_sift_up(slot);
  } else {
    heap_sift_down(slot);
  }
}

void HashValue::heap_remove(Pair* pair) {
  const uint32_t slot = Table::aux_of(*pair);
  if (slot == Table::kNoAux) return;
  Table::aux_of(*pair) = Table::kNoAux;
  const DeadlineSlot last = heap_.back();
  heap_.pop_back();
  if (heap_.empty()) {
    std::vector<DeadlineSlot>().swap(heap_);
    return;
  }
  // A heap that a mass expiry emptied to a quarter gives the rest back.
  if (heap_.size() < heap_.capacity() / 4) heap_.shrink_to_fit();
  if (slot == heap_.size()) return;
  heap_place(slot, last);
  if (slot > 0 && heap_[(slot - 1) / 2].deadline_ms() > last.deadline_ms()) {
    heap_sift_up(slot);
  } else {
    heap_sift_down(slot);
  }
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
  bytes += listpack_deadlines_.capacity() * sizeof(int64_t);
  bytes += heap_.capacity() * sizeof(DeadlineSlot);
  if (table_ == nullptr) return bytes + string_heap_bytes(listpack_);
  bytes += sizeof(Table) + table_->structure_bytes();
  table_->for_each([&](const Pair& pair) {
    bytes += string_heap_bytes(pair.field) + string_heap_bytes(pair.value);
  });
  return bytes;
}

}  // namespace keywarden
