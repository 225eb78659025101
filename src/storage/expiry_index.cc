#include "storage/expiry_index.h"

#include <cassert>
#include <new>
#include <utility>
#include <vector>

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
  void* block = memory::resize_block(heap_, capacity_ * sizeof(Slot), capacity * sizeof(Slot));
  if (block == nullptr) return false;
  heap_ = static_cast<Slot*>(block);
  capacity_ = capacity;
  return true;
}

void ExpiryIndex::release() {
  memory::free_block(heap_, capacity_ * sizeof(Slot));
  heap_ = nullptr;
  size_ = 0;
  capacity_ = 0;
}

void ExpiryIndex::place(size_t index, Slot slot) {
  heap_[index] = slot;
  slot_of(slot.entry) = static_cast<uint32_t>(index);
}

void ExpiryIndex::sift_up(size_t index) {
  Slot moving = heap_[index];
  while (index > 0) {
    size_t parent = (index - 1) / 2;
    if (heap_[parent].deadline_ms <= moving.deadline_ms) break;
    place(index, heap_[parent]);
    index = parent;
  }
  place(index, moving);
}

void ExpiryIndex::sift_down(size_t index) {
  Slot moving = heap_[index];
  const size_t count = size_;
  for (;;) {
    size_t child = 2 * index + 1;
    if (child >= count) break;
    if (child + 1 < count && heap_[child + 1].deadline_ms < heap_[child].deadline_ms) ++child;
    if (moving.deadline_ms <= heap_[child].deadline_ms) break;
    place(index, heap_[child]);
    index = child;
  }
  place(index, moving);
}

void ExpiryIndex::set(Entry* entry, int64_t deadline_ms) {
  assert(indexable(entry));
  if (slot_of(entry) == kNotInExpiryIndex) {
    if (size_ == capacity_ && !reallocate(capacity_ == 0 ? kMinCapacity : 2 * capacity_)) {
      throw std::bad_alloc();
    }
    const size_t index = size_++;
    heap_[index] = {deadline_ms, entry};
    deadline_sum_ += deadline_ms;
    slot_of(entry) = static_cast<uint32_t>(index);
    sift_up(index);
    return;
  }
  size_t index = slot_of(entry);
  assert(heap_[index].entry == entry);
  int64_t old_deadline = heap_[index].deadline_ms;
  deadline_sum_ += deadline_ms - old_deadline;
  heap_[index].deadline_ms = deadline_ms;
  if (deadline_ms < old_deadline) {
    sift_up(index);
  } else {
    sift_down(index);
  }
}

void ExpiryIndex::remove(Entry* entry) {
  if (!indexable(entry)) return;
  size_t index = slot_of(entry);
  if (index == kNotInExpiryIndex) return;
  assert(heap_[index].entry == entry);
  deadline_sum_ -= heap_[index].deadline_ms;
  slot_of(entry) = kNotInExpiryIndex;
  const Slot last = heap_[--size_];
  // Halving at a quarter full leaves room to grow back without reallocating at once. A failed
  // shrink only keeps the bigger array.
  if (capacity_ > kMinCapacity && size_ < capacity_ / 4) reallocate(capacity_ / 2);
  if (index == size_) return;
  int64_t removed_deadline = last.deadline_ms;
  place(index, last);
  // The moved slot may belong above or below its new position.
  if (index > 0 && heap_[(index - 1) / 2].deadline_ms > removed_deadline) {
    sift_up(index);
  } else {
    sift_down(index);
  }
}

int64_t ExpiryIndex::count_due(int64_t now_ms, int64_t limit) const {
  int64_t count = 0;
  std::vector<size_t> pending;
  if (size_ > 0 && heap_[0].deadline_ms < now_ms) pending.push_back(0);
  while (!pending.empty() && count < limit) {
    size_t index = pending.back();
    pending.pop_back();
    ++count;
    for (size_t child = 2 * index + 1; child <= 2 * index + 2 && child < size_; ++child) {
      if (heap_[child].deadline_ms < now_ms) pending.push_back(child);
    }
  }
  return count;
}

void ExpiryIndex::clear() {
  for (size_t i = 0; i < size_; ++i) slot_of(heap_[i].entry) = kNotInExpiryIndex;
  release();
  deadline_sum_ = 0;
}

}  // namespace keywarden
