#include "storage/expiry_index.h"

#include <algorithm>
#include <cassert>
#include <new>
#include <utility>
#include <vector>

#include "common/prefetch.h"
#include "storage/memory_accounting.h"

namespace keywarden {

ExpiryIndex::~ExpiryIndex() { release(); }

ExpiryIndex::ExpiryIndex(ExpiryIndex&& other) noexcept
    : heap_(std::exchange(other.heap_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)),
      deadline_sum_(std::exchange(other.deadline_sum_, 0)),
      kind_(other.kind_) {}

ExpiryIndex& ExpiryIndex::operator=(ExpiryIndex&& other) noexcept {
  if (this != &other) {
    release();
    heap_ = std::exchange(other.heap_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    deadline_sum_ = std::exchange(other.deadline_sum_, 0);
    kind_ = other.kind_;
  }
  return *this;
}

bool ExpiryIndex::reallocate(size_t capacity) {
  assert(capacity >= size_);
  void* block = memory::resize_block(heap_, capacity_ * slot_bytes(), capacity * slot_bytes());
  if (block == nullptr) return false;
  heap_ = block;
  capacity_ = capacity;
  return true;
}

void ExpiryIndex::release() {
  memory::free_block(heap_, capacity_ * slot_bytes());
  heap_ = nullptr;
  size_ = 0;
  capacity_ = 0;
}

void ExpiryIndex::place(size_t index, Entry* entry, int64_t deadline_ms) {
  if (kind_ == Kind::kKeys) {
    keys()[index] = entry;
  } else {
    fields()[index] = {deadline_ms, entry};
  }
  slot_of(entry) = static_cast<uint32_t>(index);
}

void ExpiryIndex::sift_up(size_t index, Entry* entry, int64_t deadline_ms) {
  const size_t ways = arity();
  while (index > 0) {
    const size_t parent = (index - 1) / ways;
    const int64_t parent_deadline = deadline_at(parent);
    if (parent_deadline <= deadline_ms) break;
    place(index, entry_at(parent), parent_deadline);
    index = parent;
  }
  place(index, entry, deadline_ms);
}

void ExpiryIndex::sift_down(size_t index, Entry* entry, int64_t deadline_ms) {
  const size_t ways = arity();
  const size_t count = size_;
  for (;;) {
    const size_t first = ways * index + 1;
    if (first >= count) break;
    const size_t end = std::min(first + ways, count);
    if (kind_ == Kind::kKeys) {
      // The children's deadlines are in their entries: start every load before using one.
      for (size_t child = first; child < end; ++child) {
        prefetch_read(reinterpret_cast<const char*>(keys()[child]) - sizeof(int64_t) * 2);
      }
    }
    size_t best = first;
    int64_t best_deadline = deadline_at(first);
    for (size_t child = first + 1; child < end; ++child) {
      const int64_t child_deadline = deadline_at(child);
      if (child_deadline < best_deadline) {
        best = child;
        best_deadline = child_deadline;
      }
    }
    if (deadline_ms <= best_deadline) break;
    place(index, entry_at(best), best_deadline);
    index = best;
  }
  place(index, entry, deadline_ms);
}

void ExpiryIndex::set(Entry* entry, int64_t deadline_ms) {
  assert(indexable(entry));
  if (slot_of(entry) == kNotInExpiryIndex) {
    if (size_ == capacity_ && !reallocate(capacity_ == 0 ? kMinCapacity : 2 * capacity_)) {
      throw std::bad_alloc();
    }
    if (kind_ == Kind::kKeys) entry->set_deadline(deadline_ms);
    deadline_sum_ += deadline_ms;
    sift_up(size_++, entry, deadline_ms);
    return;
  }
  const size_t index = slot_of(entry);
  assert(entry_at(index) == entry);
  const int64_t old_deadline = deadline_at(index);
  deadline_sum_ += deadline_ms - old_deadline;
  if (kind_ == Kind::kKeys) entry->set_deadline(deadline_ms);
  if (deadline_ms < old_deadline) {
    sift_up(index, entry, deadline_ms);
  } else {
    sift_down(index, entry, deadline_ms);
  }
}

void ExpiryIndex::remove(Entry* entry) {
  if (!indexable(entry)) return;
  const size_t index = slot_of(entry);
  if (index == kNotInExpiryIndex) return;
  assert(entry_at(index) == entry);
  deadline_sum_ -= deadline_at(index);
  slot_of(entry) = kNotInExpiryIndex;
  --size_;
  Entry* const last = entry_at(size_);
  const int64_t last_deadline = deadline_at(size_);
  // Halving at a quarter full leaves room to grow back without reallocating at once. A failed
  // shrink only keeps the bigger array.
  if (capacity_ > kMinCapacity && size_ < capacity_ / 4) reallocate(capacity_ / 2);
  if (index == size_) return;
  // The moved entry may belong above or below its new position.
  if (index > 0 && deadline_at((index - 1) / arity()) > last_deadline) {
    sift_up(index, last, last_deadline);
  } else {
    sift_down(index, last, last_deadline);
  }
}

void ExpiryIndex::replace(Entry* entry, Entry* replacement) {
  if (!contains(replacement)) return;
  const size_t index = slot_of(replacement);
  if (kind_ == Kind::kKeys) {
    keys()[index] = replacement;
  } else {
    assert(fields()[index].entry == entry);
    fields()[index].entry = replacement;
  }
  (void)entry;
}

int64_t ExpiryIndex::count_due(int64_t now_ms, int64_t limit) const {
  int64_t count = 0;
  const size_t ways = arity();
  std::vector<size_t> pending;
  if (size_ > 0 && deadline_at(0) < now_ms) pending.push_back(0);
  while (!pending.empty() && count < limit) {
    const size_t index = pending.back();
    pending.pop_back();
    ++count;
    const size_t first = ways * index + 1;
    for (size_t child = first; child < first + ways && child < size_; ++child) {
      if (deadline_at(child) < now_ms) pending.push_back(child);
    }
  }
  return count;
}

void ExpiryIndex::clear() {
  for (size_t i = 0; i < size_; ++i) slot_of(entry_at(i)) = kNotInExpiryIndex;
  release();
  deadline_sum_ = 0;
}

}  // namespace keywarden
