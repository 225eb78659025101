// ListValue: the node ring, gap-buffer nodes and the list operations built on them.
#include "types/list_value.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <new>
#include <utility>

namespace keywarden {
namespace {

// Redis's quicklist limits: node byte sizes for fill -1..-5, the byte cap for a node bounded
// by entry count, and the largest entry count a fill may ask for.
constexpr uint64_t kNodeSizeLimits[] = {4096, 8192, 16384, 32768, 65536};
constexpr uint64_t kSafetyLimit = 8192;
constexpr int64_t kMaxFill = (1 << 15) - 1;
// Node buffers below this size grow only to the allocator's size class (see relayout()).
constexpr uint32_t kExactFitBytes = 1024;

// Every list pays for its ListValue: keep it within jemalloc's 64-byte class.
static_assert(sizeof(ListValue) <= 64);

// A buffer of at least `request` bytes; *capacity receives what the allocator really handed
// out. Allocators round a request up to a size class (jemalloc's are 25% apart), so the
// rounding is free room a node can use rather than bytes it pays for and never touches.
// Uninitialised: every byte a reader reaches is written first.
char* allocate(uint32_t request, uint32_t* capacity) {
  void* buffer = std::malloc(request == 0 ? 1 : request);
  if (buffer == nullptr) throw std::bad_alloc();
  const size_t usable = malloc_usable_size(buffer);
  *capacity = static_cast<uint32_t>(
      std::clamp<size_t>(usable, request, std::numeric_limits<uint32_t>::max()));
  return static_cast<char*>(buffer);
}

}  // namespace

// --- Node ----------------------------------------------------------------------------------

ListValue::Node::Node(const Node& other) : head_(0), tail_(other.used()), count_(other.count_) {
  buffer_.reset(allocate(other.used(), &capacity_));
  if (other.used() != 0) std::memcpy(buffer_.get(), other.bytes(), other.used());
}

ListValue::Node::Node(Node&& other) noexcept
    : buffer_(std::move(other.buffer_)),
      capacity_(std::exchange(other.capacity_, 0)),
      head_(std::exchange(other.head_, 0)),
      tail_(std::exchange(other.tail_, 0)),
      count_(std::exchange(other.count_, 0)) {}

ListValue::Node& ListValue::Node::operator=(Node&& other) noexcept {
  buffer_ = std::move(other.buffer_);
  capacity_ = std::exchange(other.capacity_, 0);
  head_ = std::exchange(other.head_, 0);
  tail_ = std::exchange(other.tail_, 0);
  count_ = std::exchange(other.count_, 0);
  return *this;
}

void ListValue::Node::write_entry(char* out, std::string_view value) {
  uint32_t length = static_cast<uint32_t>(value.size());
  uint32_t header = 0;
  do {
    unsigned char byte = length & 0x7f;
    length >>= 7;
    if (length != 0) byte |= 0x80;
    out[header++] = static_cast<char>(byte);
  } while (length != 0);
  if (!value.empty()) std::memcpy(out + header, value.data(), value.size());
  // The trailing copy, last byte first, so that a backward walk meets the low bits first.
  char* trailer = out + header + value.size();
  for (uint32_t i = 0; i < header; ++i) trailer[i] = out[header - 1 - i];
}

void ListValue::Node::relayout(uint32_t offset, uint32_t hole, Grow grow, uint32_t max_bytes) {
  const uint32_t used = this->used();
  const uint32_t new_used = used + hole;
  // Free room for what is likely to come, kept small because most lists are small and every
  // spare byte of every node is paid for. Up to 1 KiB the allocator's rounding up to its size
  // class is the only room (jemalloc's classes are at most 25% apart, so growth stays
  // geometric and pushes amortised O(1), as for Redis's listpacks, which are reallocated on
  // every insertion); beyond, a node at an end of the list, which grows by pushes on one side,
  // asks for a quarter more, and a node in the middle, which rarely grows, for an eighth.
  // Never beyond what the node may hold: the room a full node keeps is wasted.
  uint32_t slack = new_used < kExactFitBytes  ? 0
                   : grow == Grow::kBoth      ? new_used / 8
                                              : new_used / 4;
  slack = new_used >= max_bytes ? 0 : std::min(slack, max_bytes - new_used);
  uint32_t capacity;
  std::unique_ptr<char, FreeBuffer> buffer(allocate(new_used + slack, &capacity));
  const uint32_t room = capacity - new_used;
  const uint32_t front = grow == Grow::kFront ? room : grow == Grow::kBack ? 0 : room / 2;
  if (used != 0) {
    const char* old = buffer_.get() + head_;
    std::memcpy(buffer.get() + front, old, offset);
    std::memcpy(buffer.get() + front + offset + hole, old + offset, used - offset);
  }
  buffer_ = std::move(buffer);
  capacity_ = capacity;
  head_ = front;
  tail_ = front + new_used;
}

void ListValue::Node::insert(uint32_t offset, std::string_view value, Grow grow,
                             uint32_t max_bytes) {
  const uint32_t need = entry_size(value.size());
  const uint32_t used = this->used();
  const bool prefer_front = used == 0 ? grow == Grow::kFront : offset * 2ull < used;
  const bool front_fits = head_ >= need;
  const bool back_fits = capacity_ - tail_ >= need;
  if (front_fits && (prefer_front || !back_fits)) {
    char* base = buffer_.get();
    std::memmove(base + head_ - need, base + head_, offset);
    head_ -= need;
  } else if (back_fits) {
    char* base = buffer_.get() + head_;
    std::memmove(base + offset + need, base + offset, used - offset);
    tail_ += need;
  } else {
    relayout(offset, need, grow, max_bytes);
  }
  write_entry(buffer_.get() + head_ + offset, value);
  ++count_;
}

void ListValue::Node::erase(uint32_t from, uint32_t to, uint32_t entries) {
  const uint32_t used = this->used();
  char* base = buffer_.get() + head_;
  // Close the gap by moving the shorter side.
  if (from < used - to) {
    std::memmove(base + (to - from), base, from);
    head_ += to - from;
  } else {
    std::memmove(base + from, base + to, used - to);
    tail_ -= to - from;
  }
  count_ -= entries;
}

uint32_t ListValue::Node::remove_matching(std::string_view value, uint64_t limit, bool from_back) {
  const uint32_t used = this->used();
  char* base = buffer_.get() + head_;
  uint32_t removed = 0;
  if (!from_back) {
    // Kept entries slide towards the front; reads always stay ahead of writes.
    uint32_t read = 0;
    uint32_t write = 0;
    while (read < used) {
      if (removed == limit) {
        std::memmove(base + write, base + read, used - read);
        write += used - read;
        break;
      }
      const uint32_t next = this->next(read);
      if (value_at(read) == value) {
        ++removed;
      } else {
        if (write != read) std::memmove(base + write, base + read, next - read);
        write += next - read;
      }
      read = next;
    }
    tail_ = head_ + write;
  } else {
    // Mirror image: kept entries slide towards the back.
    uint32_t end = used;
    uint32_t write_end = used;
    while (end > 0) {
      if (removed == limit) {
        std::memmove(base + write_end - end, base, end);
        write_end -= end;
        end = 0;
        break;
      }
      const uint32_t start = prev(end);
      if (value_at(start) == value) {
        ++removed;
      } else {
        write_end -= end - start;
        if (write_end != start) std::memmove(base + write_end, base + start, end - start);
      }
      end = start;
    }
    head_ += write_end;
  }
  count_ -= removed;
  return removed;
}

void ListValue::Node::append(const Node& other) {
  const uint32_t extra = other.used();
  if (capacity_ - tail_ >= extra) {
    tail_ += extra;
  } else {
    relayout(used(), extra, Grow::kBoth, used() + extra);
  }
  std::memcpy(buffer_.get() + tail_ - extra, other.bytes(), extra);
  count_ += other.count_;
}

ListValue::Node ListValue::Node::split(uint32_t offset) {
  Node right;
  const uint32_t moved = used() - offset;
  uint32_t entries = 0;
  for (uint32_t at = offset; at < used(); at = next(at)) ++entries;
  right.buffer_.reset(allocate(moved, &right.capacity_));
  right.head_ = 0;
  right.tail_ = moved;
  right.count_ = entries;
  std::memcpy(right.buffer_.get(), bytes() + offset, moved);
  tail_ = head_ + offset;
  count_ -= entries;
  return right;
}

void ListValue::Node::shrink_if_sparse() {
  if (capacity_ > 2ull * used() + 64) relayout(used(), 0, Grow::kBoth, used() + used() / 4 + 16);
}

bool ListValue::Node::valid() const {
  if (head_ > tail_ || tail_ > capacity_) return false;
  uint32_t entries = 0;
  uint32_t offset = 0;
  while (offset < used()) {
    const uint32_t next = this->next(offset);
    if (next > used() || next <= offset || prev(next) != offset) return false;
    offset = next;
    ++entries;
  }
  return offset == used() && entries == count_;
}

// --- NodeRing ------------------------------------------------------------------------------

ListValue::NodeRing::NodeRing(const NodeRing& other) {
  if (other.count_ > 1) {
    uint32_t capacity = 2;
    while (capacity < other.count_) capacity *= 2;
    heap_ = std::make_unique<Node[]>(capacity);
    capacity_ = capacity;
  }
  for (uint32_t i = 0; i < other.count_; ++i) slots()[i] = Node(other[i]);
  count_ = other.count_;
}

ListValue::NodeRing::NodeRing(NodeRing&& other) noexcept
    : heap_(std::move(other.heap_)),
      inline_(std::move(other.inline_)),
      capacity_(std::exchange(other.capacity_, 1)),
      head_(std::exchange(other.head_, 0)),
      count_(std::exchange(other.count_, 0)) {}

ListValue::NodeRing& ListValue::NodeRing::operator=(NodeRing&& other) noexcept {
  heap_ = std::move(other.heap_);
  inline_ = std::move(other.inline_);
  capacity_ = std::exchange(other.capacity_, 1);
  head_ = std::exchange(other.head_, 0);
  count_ = std::exchange(other.count_, 0);
  return *this;
}

void ListValue::NodeRing::reserve(uint32_t capacity) {
  if (capacity == 1) {
    // Back to the inline slot (count_ <= 1).
    Node node = count_ != 0 ? std::move((*this)[0]) : Node();
    heap_.reset();
    inline_ = std::move(node);
  } else {
    auto slots = std::make_unique<Node[]>(capacity);
    for (uint32_t i = 0; i < count_; ++i) slots[i] = std::move((*this)[i]);
    heap_ = std::move(slots);
    inline_ = Node();
  }
  capacity_ = capacity;
  head_ = 0;
}

void ListValue::NodeRing::shrink_if_sparse() {
  if (capacity_ > 1 && count_ <= 1) {
    reserve(1);
  } else if (capacity_ > 8 && count_ * 4 <= capacity_) {
    reserve(capacity_ / 2);
  }
}

void ListValue::NodeRing::push_back(Node node) {
  grow_if_full();
  (*this)[count_] = std::move(node);
  ++count_;
}

void ListValue::NodeRing::push_front(Node node) {
  grow_if_full();
  head_ = (head_ + capacity_ - 1) & (capacity_ - 1);
  (*this)[0] = std::move(node);
  ++count_;
}

void ListValue::NodeRing::pop_front() {
  (*this)[0] = Node();
  head_ = (head_ + 1) & (capacity_ - 1);
  --count_;
  shrink_if_sparse();
}

void ListValue::NodeRing::pop_back() {
  (*this)[count_ - 1] = Node();
  --count_;
  shrink_if_sparse();
}

void ListValue::NodeRing::insert(size_t i, Node node) {
  grow_if_full();
  if (i < count_ / 2) {
    // Slide the front part one slot towards the front.
    head_ = (head_ + capacity_ - 1) & (capacity_ - 1);
    for (size_t j = 0; j < i; ++j) (*this)[j] = std::move((*this)[j + 1]);
  } else {
    for (size_t j = count_; j > i; --j) (*this)[j] = std::move((*this)[j - 1]);
  }
  (*this)[i] = std::move(node);
  ++count_;
}

void ListValue::NodeRing::erase(size_t i) {
  if (i < count_ / 2) {
    for (size_t j = i; j > 0; --j) (*this)[j] = std::move((*this)[j - 1]);
    (*this)[0] = Node();
    head_ = (head_ + 1) & (capacity_ - 1);
  } else {
    for (size_t j = i; j + 1 < count_; ++j) (*this)[j] = std::move((*this)[j + 1]);
    (*this)[count_ - 1] = Node();
  }
  --count_;
  shrink_if_sparse();
}

void ListValue::NodeRing::clear() {
  heap_.reset();
  inline_ = Node();
  capacity_ = 1;
  head_ = count_ = 0;
}

// --- ListValue -----------------------------------------------------------------------------

ListValue::ListValue(int64_t fill)
    : fill_(static_cast<int32_t>(std::clamp<int64_t>(fill, -5, kMaxFill))) {}

ListValue::~ListValue() = default;
ListValue::ListValue(const ListValue& other)
    : ring_(other.ring_), fill_(other.fill_), size_(other.size_) {}

ListValue& ListValue::operator=(const ListValue& other) {
  if (this != &other) {
    NodeRing copy(other.ring_);
    ring_ = std::move(copy);
    size_ = other.size_;
    fill_ = other.fill_;
  }
  return *this;
}

ListValue::ListValue(ListValue&& other) noexcept
    : ring_(std::move(other.ring_)), fill_(other.fill_), size_(std::exchange(other.size_, 0)) {}

ListValue& ListValue::operator=(ListValue&& other) noexcept {
  ring_ = std::move(other.ring_);
  size_ = std::exchange(other.size_, 0);
  fill_ = other.fill_;
  return *this;
}

uint32_t ListValue::max_node_bytes() const {
  return static_cast<uint32_t>(fill_ < 0 ? kNodeSizeLimits[-fill_ - 1] : kSafetyLimit);
}

bool ListValue::fits(uint64_t count, uint64_t bytes) const {
  if (fill_ < 0) return bytes <= kNodeSizeLimits[-fill_ - 1];
  return count <= static_cast<uint64_t>(fill_) && bytes <= kSafetyLimit;
}

ListValue::Node ListValue::new_node_with(std::string_view value, Grow grow) const {
  Node node;
  node.insert(0, value, grow, max_node_bytes());
  return node;
}

void ListValue::push_front(std::string_view value) {
  if (ring_.empty() || !fits_one_more(ring_.front(), value.size())) {
    ring_.push_front(new_node_with(value, Grow::kFront));
  } else {
    ring_.front().insert(0, value, Grow::kFront, max_node_bytes());
  }
  ++size_;
}

void ListValue::push_back(std::string_view value) {
  if (ring_.empty() || !fits_one_more(ring_.back(), value.size())) {
    ring_.push_back(new_node_with(value, Grow::kBack));
  } else {
    Node& node = ring_.back();
    node.insert(node.used(), value, Grow::kBack, max_node_bytes());
  }
  ++size_;
}

void ListValue::drop_front() {
  Node& node = ring_.front();
  node.erase(0, node.next(0), 1);
  if (node.count() == 0) {
    ring_.pop_front();
  } else {
    node.shrink_if_sparse();
  }
  --size_;
}

void ListValue::drop_back() {
  Node& node = ring_.back();
  node.erase(node.last(), node.used(), 1);
  if (node.count() == 0) {
    ring_.pop_back();
  } else {
    node.shrink_if_sparse();
  }
  --size_;
}

ListValue::Position ListValue::locate(size_t index) const {
  size_t node_index;
  size_t within;  // entries before the element inside its node
  if (index < size_ / 2) {
    node_index = 0;
    while (index >= ring_[node_index].count()) index -= ring_[node_index++].count();
    within = index;
  } else {
    size_t from_back = size_ - 1 - index;
    node_index = ring_.size() - 1;
    while (from_back >= ring_[node_index].count()) from_back -= ring_[node_index--].count();
    within = ring_[node_index].count() - 1 - from_back;
  }
  // Inside the node, walk from its nearer end too.
  const Node& node = ring_[node_index];
  uint32_t offset;
  if (within * 2 < node.count()) {
    offset = 0;
    for (size_t i = 0; i < within; ++i) offset = node.next(offset);
  } else {
    offset = node.used();
    for (size_t i = node.count(); i > within; --i) offset = node.prev(offset);
  }
  return {node_index, offset};
}

std::optional<std::string_view> ListValue::at(int64_t index) const {
  if (index < 0) index += static_cast<int64_t>(size_);
  if (index < 0 || static_cast<uint64_t>(index) >= size_) return std::nullopt;
  const Position position = locate(static_cast<size_t>(index));
  return ring_[position.node].value_at(position.offset);
}

bool ListValue::set(int64_t index, std::string_view value) {
  if (index < 0) index += static_cast<int64_t>(size_);
  if (index < 0 || static_cast<uint64_t>(index) >= size_) return false;
  const Position position = locate(static_cast<size_t>(index));
  Node& node = ring_[position.node];
  const uint32_t end = node.next(position.offset);
  const uint64_t bytes =
      uint64_t{node.used()} - (end - position.offset) + Node::entry_size(value.size());
  node.erase(position.offset, end, 1);
  if (node.count() == 0 || fits(node.count() + 1ull, bytes)) {
    node.insert(position.offset, value, Grow::kBoth, max_node_bytes());
    node.shrink_if_sparse();
    // A node that held one oversized element may now join its neighbours.
    if (node.count() == 1) merge_around(position.node);
    return true;
  }
  // The new value makes the node too large: place it as an insertion would.
  --size_;
  insert_at(position, value);
  merge_around(position.node);
  return true;
}

void ListValue::insert_at(Position position, std::string_view value) {
  ++size_;
  Node& node = ring_[position.node];
  if (fits_one_more(node, value.size())) {
    node.insert(position.offset, value, Grow::kBoth, max_node_bytes());
    return;
  }
  const size_t i = position.node;
  if (position.offset == node.used()) {
    if (i + 1 < ring_.size() && fits_one_more(ring_[i + 1], value.size())) {
      ring_[i + 1].insert(0, value, Grow::kFront, max_node_bytes());
    } else {
      ring_.insert(i + 1, new_node_with(value, Grow::kBoth));
    }
    return;
  }
  if (position.offset == 0) {
    if (i > 0 && fits_one_more(ring_[i - 1], value.size())) {
      Node& previous = ring_[i - 1];
      previous.insert(previous.used(), value, Grow::kBack, max_node_bytes());
    } else {
      ring_.insert(i, new_node_with(value, Grow::kBoth));
    }
    return;
  }
  // A full node, insertion in its middle: split it there and put the value at the seam.
  ring_.insert(i + 1, node.split(position.offset));
  Node& left = ring_[i];
  Node& right = ring_[i + 1];
  if (fits_one_more(left, value.size())) {
    left.insert(left.used(), value, Grow::kBack, max_node_bytes());
  } else if (fits_one_more(right, value.size())) {
    right.insert(0, value, Grow::kFront, max_node_bytes());
  } else {
    ring_.insert(i + 1, new_node_with(value, Grow::kBoth));
  }
  ring_[i].shrink_if_sparse();
}

bool ListValue::insert(std::string_view pivot, std::string_view value, bool after) {
  for (size_t i = 0; i < ring_.size(); ++i) {
    const Node& node = ring_[i];
    for (uint32_t offset = 0; offset < node.used(); offset = node.next(offset)) {
      if (node.value_at(offset) != pivot) continue;
      insert_at({i, after ? node.next(offset) : offset}, value);
      return true;
    }
  }
  return false;
}

size_t ListValue::remove(std::string_view value, int64_t count) {
  if (size_ == 0) return 0;
  const bool from_tail = count < 0;
  // LREM's count of INT64_MIN has no positive counterpart; it removes all, as in Redis.
  const uint64_t limit = count == 0  ? std::numeric_limits<uint64_t>::max()
                         : count > 0 ? static_cast<uint64_t>(count)
                                     : uint64_t{0} - static_cast<uint64_t>(count);
  uint64_t removed = 0;
  if (!from_tail) {
    size_t i = 0;
    for (; i < ring_.size() && removed < limit;) {
      removed += ring_[i].remove_matching(value, limit - removed, false);
      if (ring_[i].count() == 0) {
        ring_.erase(i);
      } else {
        ring_[i].shrink_if_sparse();
        ++i;
      }
    }
    size_ -= removed;
    if (removed != 0 && !ring_.empty()) merge_range(0, std::min(i, ring_.size() - 1));
  } else {
    size_t i = ring_.size();
    while (i > 0 && removed < limit) {
      --i;
      removed += ring_[i].remove_matching(value, limit - removed, true);
      if (ring_[i].count() == 0) {
        ring_.erase(i);
      } else {
        ring_[i].shrink_if_sparse();
      }
    }
    size_ -= removed;
    if (removed != 0 && !ring_.empty()) merge_range(i > 0 ? i - 1 : 0, ring_.size() - 1);
  }
  return removed;
}

void ListValue::erase(size_t start, size_t count) {
  if (count == 0) return;
  const Position position = locate(start);
  size_t i = position.node;
  uint32_t offset = position.offset;
  size_t remaining = count;
  while (remaining > 0) {
    Node& node = ring_[i];
    if (offset == 0 && node.count() <= remaining) {
      remaining -= node.count();
      ring_.erase(i);
      continue;
    }
    uint32_t end = offset;
    uint32_t entries = 0;
    while (entries < remaining && end < node.used()) {
      end = node.next(end);
      ++entries;
    }
    node.erase(offset, end, entries);
    node.shrink_if_sparse();
    remaining -= entries;
    ++i;
    offset = 0;
  }
  size_ -= count;
  if (!ring_.empty()) merge_around(std::min(position.node, ring_.size() - 1));
}

void ListValue::merge_around(size_t i) { merge_range(i > 0 ? i - 1 : 0, i + 1); }

void ListValue::merge_range(size_t first, size_t last) {
  size_t i = first;
  while (i < last && i + 1 < ring_.size()) {
    Node& left = ring_[i];
    const Node& right = ring_[i + 1];
    if (fits(uint64_t{left.count()} + right.count(), uint64_t{left.used()} + right.used())) {
      left.append(right);
      ring_.erase(i + 1);
      --last;
    } else {
      ++i;
    }
  }
}

size_t ListValue::payload_bytes() const {
  size_t bytes = sizeof(ListValue) + ring_.slot_bytes();
  for (size_t i = 0; i < ring_.size(); ++i) bytes += ring_[i].capacity();
  return bytes;
}

std::vector<uint32_t> ListValue::node_entry_counts() const {
  std::vector<uint32_t> counts;
  counts.reserve(ring_.size());
  for (size_t i = 0; i < ring_.size(); ++i) counts.push_back(ring_[i].count());
  return counts;
}

bool ListValue::valid() const {
  size_t total = 0;
  for (size_t i = 0; i < ring_.size(); ++i) {
    const Node& node = ring_[i];
    if (node.count() == 0 || !node.valid()) return false;
    if (node.count() > 1 && !fits(node.count(), node.used())) return false;
    total += node.count();
  }
  return total == size_;
}

}  // namespace keywarden
