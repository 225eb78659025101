// A list value: a sequence of byte strings with cheap pushes and pops at both ends, laid out
// as Redis 7.0's quicklist is, which is also why OBJECT ENCODING says "quicklist" for every
// list whatever its size.
//
// The elements live in a ring of nodes. A node is one contiguous byte buffer holding a run of
// neighbouring elements, each stored as <length><bytes><length reversed>: the leading length
// (LEB128) lets a walk go forward, the trailing copy lets it go backward from the end of the
// node, so both ends of every node are reachable without an index. An element of up to 127
// bytes costs two bytes of framing, against 32+ for a std::string, which matters because
// queues of small items are what lists hold.
//
// Each node keeps free room at both ends of its buffer (a gap buffer), so that LPUSH writes in
// front of the first element and RPUSH after the last without moving any other byte; a node that
// runs out of room is reallocated with the room on the side that grows. The room is only what the
// allocator's size class leaves for a node under 1 KiB, a quarter more beyond, so a small list
// costs about what its framed elements do. Nodes are bounded by list-max-listpack-size, read once
// when the list is created (as Redis does): a positive fill caps the entries per node (and the node
// at 8 KiB, Redis's safety limit), -1..-5 caps the node at 4/8/16/32/64 KiB. A push that does not
// fit starts a new node, so pushes and pops at either end are O(1); the ring of nodes grows and
// shrinks at both ends in O(1) too, and a ring of one node (most lists) keeps it inline, so a small
// list is two allocations: the 64-byte ListValue and its node buffer.
//
// Positional operations (LINDEX, LSET, LINSERT, LRANGE's start) skip whole nodes by their
// entry counts from whichever end is nearer, then walk inside one node: O(nodes + node size).
// An insertion into a full node splits it at the insertion point; removals in the middle
// (LREM, LTRIM, LSET with a longer value) drop emptied nodes and merge a node with its
// neighbour when both fit in one, so that a list shrunk by deletions does not keep many
// near-empty nodes. Redis's LZF compression of interior nodes (list-compress-depth) is not
// done: the setting is accepted and has no effect.
//
// Invariants: no node is empty; the entry counts of the nodes add up to size(); every node
// fits the fill limit unless it holds a single element (an element larger than a node).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "types/aggregate.h"

namespace keywarden {

// Redis 7.0's default list-max-listpack-size: nodes of at most 8 KiB.
inline constexpr int64_t kDefaultListMaxListpackSize = -2;

class ListValue final : public Aggregate {
 public:
  // `fill` is list-max-listpack-size; values beyond Redis's range are clamped as Redis does
  // (at most 32767 entries, at least -5).
  explicit ListValue(int64_t fill = kDefaultListMaxListpackSize);
  ~ListValue() override;
  ListValue(const ListValue& other);
  ListValue& operator=(const ListValue& other);
  ListValue(ListValue&& other) noexcept;
  ListValue& operator=(ListValue&& other) noexcept;

  size_t size() const override { return size_; }
  bool empty() const { return size_ == 0; }
  Encoding encoding() const override { return Encoding::kQuicklist; }
  std::unique_ptr<Aggregate> clone() const override { return std::make_unique<ListValue>(*this); }
  // Heap bytes: this object, the node ring's slot array and every node buffer (free room
  // included).
  size_t payload_bytes() const override;
  int fill() const { return fill_; }

  void push_front(std::string_view value);
  void push_back(std::string_view value);
  // The first / last element; the list must not be empty. The view is valid until the next
  // change to the list.
  std::string_view front() const { return ring_[0].value_at(0); }
  std::string_view back() const {
    const Node& node = ring_[ring_.size() - 1];
    return node.value_at(node.last());
  }
  // Remove the first / last element (the list must not be empty); the pop_ forms return it.
  void drop_front();
  void drop_back();
  std::string pop_front() {
    std::string value(front());
    drop_front();
    return value;
  }
  std::string pop_back() {
    std::string value(back());
    drop_back();
    return value;
  }

  // The element at `index` (negative counts from the tail, -1 being the last), or nullopt
  // when out of range. The view is valid until the next change to the list.
  std::optional<std::string_view> at(int64_t index) const;
  // Replaces the element at `index` (negative from the tail); false when out of range.
  bool set(int64_t index, std::string_view value);
  // Inserts `value` before (or after) the first element equal to `pivot`, searching from the
  // head; false when there is no such element.
  bool insert(std::string_view pivot, std::string_view value, bool after);
  // LREM: removes elements equal to `value`, at most `count` from the head when count > 0, at
  // most -count from the tail when count < 0, all when count == 0. Returns how many.
  size_t remove(std::string_view value, int64_t count);
  // Removes `count` elements starting at index `start` (start + count <= size()).
  void erase(size_t start, size_t count);

  // Visits elements `first`..`last` (inclusive, valid indexes, first <= last) as
  // visit(std::string_view): from first to last, or from last to first when `reverse`.
  template <typename Fn>
  void for_range(size_t first, size_t last, bool reverse, Fn&& visit) const;
  // Visits every element from the head, or from the tail when `from_tail`, as
  // visit(std::string_view value, size_t index_from_head) -> bool; false stops the walk.
  template <typename Fn>
  void scan(bool from_tail, Fn&& visit) const;
  // Visits every element from head to tail as visit(std::string_view).
  template <typename Fn>
  void for_each(Fn&& visit) const {
    scan(false, [&](std::string_view value, size_t) {
      visit(value);
      return true;
    });
  }

  // Structure, for tests and DEBUG: the number of nodes and each node's entry count.
  size_t node_count() const { return ring_.size(); }
  std::vector<uint32_t> node_entry_counts() const;
  // Checks the invariants above (and each node's framing); for tests.
  bool valid() const;

 private:
  // Which side of a node buffer a reallocation leaves free room on.
  enum class Grow : uint8_t { kFront, kBack, kBoth };

  // Node buffers come from malloc, whose size classes decide their capacity.
  struct FreeBuffer {
    void operator()(char* buffer) const { std::free(buffer); }
  };

  // One run of elements in a gap buffer: bytes [head_, tail_) of buffer_ hold the entries.
  // Offsets in the interface are logical: 0 is the first entry, used() is the end.
  class Node {
   public:
    Node() = default;
    Node(const Node& other);
    Node& operator=(const Node&) = delete;
    Node(Node&& other) noexcept;
    Node& operator=(Node&& other) noexcept;

    uint32_t count() const { return count_; }
    uint32_t used() const { return tail_ - head_; }
    uint32_t capacity() const { return capacity_; }

    // The element whose entry starts at `offset`.
    std::string_view value_at(uint32_t offset) const {
      const unsigned char* entry = bytes() + offset;
      uint32_t length;
      const uint32_t header = decode_forward(entry, &length);
      return {reinterpret_cast<const char*>(entry + header), length};
    }
    // Offset of the entry after the one at `offset` (used() after the last).
    uint32_t next(uint32_t offset) const {
      uint32_t length;
      const uint32_t header = decode_forward(bytes() + offset, &length);
      return offset + 2 * header + length;
    }
    // Offset of the entry that ends at `offset` (offset > 0).
    uint32_t prev(uint32_t offset) const {
      uint32_t length;
      const uint32_t header = decode_backward(bytes() + offset, &length);
      return offset - 2 * header - length;
    }
    uint32_t last() const { return prev(used()); }

    // Inserts an entry at `offset` (an entry boundary); it then starts at `offset`. A buffer
    // that must grow gets free room on the `grow` side, up to `max_bytes` in all.
    void insert(uint32_t offset, std::string_view value, Grow grow, uint32_t max_bytes);
    // Removes the `entries` entries in [from, to).
    void erase(uint32_t from, uint32_t to, uint32_t entries);
    // Removes entries equal to `value`, at most `limit`, walking from the front or the back.
    uint32_t remove_matching(std::string_view value, uint64_t limit, bool from_back);
    // Appends all of `other`'s entries.
    void append(const Node& other);
    // Moves the entries from `offset` on into a new node.
    Node split(uint32_t offset);
    // Gives back free room once the buffer is mostly empty.
    void shrink_if_sparse();
    // Checks framing and count; for valid().
    bool valid() const;

    static uint32_t varint_size(uint32_t length) {
      uint32_t size = 1;
      while (length >= 0x80) {
        length >>= 7;
        ++size;
      }
      return size;
    }
    static uint32_t entry_size(size_t length) {
      return 2 * varint_size(static_cast<uint32_t>(length)) + static_cast<uint32_t>(length);
    }

   private:
    const unsigned char* bytes() const {
      return reinterpret_cast<const unsigned char*>(buffer_.get()) + head_;
    }
    static uint32_t decode_forward(const unsigned char* entry, uint32_t* length) {
      uint32_t value = 0;
      uint32_t shift = 0;
      uint32_t size = 0;
      unsigned char byte;
      do {
        byte = entry[size++];
        value |= static_cast<uint32_t>(byte & 0x7f) << shift;
        shift += 7;
      } while (byte & 0x80);
      *length = value;
      return size;
    }
    // `end` points just past an entry; its trailing length is stored last byte first.
    static uint32_t decode_backward(const unsigned char* end, uint32_t* length) {
      uint32_t value = 0;
      uint32_t shift = 0;
      uint32_t size = 0;
      unsigned char byte;
      do {
        byte = *(end - 1 - size);
        ++size;
        value |= static_cast<uint32_t>(byte & 0x7f) << shift;
        shift += 7;
      } while (byte & 0x80);
      *length = value;
      return size;
    }
    static void write_entry(char* out, std::string_view value);
    // Moves the entries into a new buffer with a hole of `hole` bytes at `offset` and free
    // room placed as `grow` says.
    void relayout(uint32_t offset, uint32_t hole, Grow grow, uint32_t max_bytes);

    std::unique_ptr<char, FreeBuffer> buffer_;
    uint32_t capacity_ = 0;
    uint32_t head_ = 0;
    uint32_t tail_ = 0;
    uint32_t count_ = 0;
  };

  // A double-ended ring of nodes with O(1) pushes and pops at both ends and O(n) insertion
  // and removal in the middle (n nodes, a few pointer-sized moves each). Most lists fit one
  // node, so a ring of one keeps its node inline and allocates no slot array.
  class NodeRing {
   public:
    NodeRing() = default;
    NodeRing(const NodeRing& other);
    NodeRing& operator=(const NodeRing&) = delete;
    NodeRing(NodeRing&& other) noexcept;
    NodeRing& operator=(NodeRing&& other) noexcept;

    size_t size() const { return count_; }
    bool empty() const { return count_ == 0; }
    // Heap bytes of the slot array (none while the ring holds its single slot inline).
    size_t slot_bytes() const { return capacity_ > 1 ? capacity_ * sizeof(Node) : 0; }
    Node& operator[](size_t i) { return slots()[(head_ + i) & (capacity_ - 1)]; }
    const Node& operator[](size_t i) const { return slots()[(head_ + i) & (capacity_ - 1)]; }
    Node& front() { return (*this)[0]; }
    Node& back() { return (*this)[count_ - 1]; }

    void push_front(Node node);
    void push_back(Node node);
    void pop_front();
    void pop_back();
    // Inserts before position `i` (i == size() appends).
    void insert(size_t i, Node node);
    void erase(size_t i);
    void clear();

   private:
    Node* slots() { return capacity_ == 1 ? &inline_ : heap_.get(); }
    const Node* slots() const { return capacity_ == 1 ? &inline_ : heap_.get(); }
    void reserve(uint32_t capacity);
    void grow_if_full() {
      if (count_ == capacity_) reserve(capacity_ * 2);
    }
    void shrink_if_sparse();

    std::unique_ptr<Node[]> heap_;  // the slots when capacity_ > 1
    Node inline_;                   // the slot when capacity_ == 1
    uint32_t capacity_ = 1;         // a power of two
    uint32_t head_ = 0;
    uint32_t count_ = 0;
  };

  // An element's place: the node's position in the ring and the entry's offset in the node.
  struct Position {
    size_t node;
    uint32_t offset;
  };

  // The byte size a node may reach (for a single entry: more).
  uint32_t max_node_bytes() const;
  // Whether a node of `count` entries and `bytes` bytes respects the fill limit.
  bool fits(uint64_t count, uint64_t bytes) const;
  bool fits_one_more(const Node& node, size_t value_length) const {
    return node.count() == 0 ||
           fits(node.count() + 1ull, node.used() + uint64_t{Node::entry_size(value_length)});
  }
  // The position of element `index` (< size()), walking from the nearer end.
  Position locate(size_t index) const;
  // Inserts `value` before the entry at `position` (or at the end of that node when the
  // offset is the node's used()), splitting or spilling into a neighbour when full.
  void insert_at(Position position, std::string_view value);
  // Merges node `i` into its neighbours when they fit in one node.
  void merge_around(size_t i);
  // Merges every pair of adjacent nodes in [first, last] that fit in one.
  void merge_range(size_t first, size_t last);
  Node new_node_with(std::string_view value, Grow grow) const;

  // [[no_unique_address]] lets fill_ sit in the ring's tail padding, which keeps a ListValue
  // within a 64-byte allocation.
  [[no_unique_address]] NodeRing ring_;
  int32_t fill_;
  size_t size_ = 0;
};

template <typename Fn>
void ListValue::for_range(size_t first, size_t last, bool reverse, Fn&& visit) const {
  size_t remaining = last - first + 1;
  Position position = locate(reverse ? last : first);
  while (true) {
    const Node& node = ring_[position.node];
    visit(node.value_at(position.offset));
    if (--remaining == 0) return;
    if (reverse) {
      if (position.offset == 0) {
        --position.node;
        position.offset = ring_[position.node].last();
      } else {
        position.offset = node.prev(position.offset);
      }
    } else {
      position.offset = node.next(position.offset);
      if (position.offset == node.used()) {
        ++position.node;
        position.offset = 0;
      }
    }
  }
}

template <typename Fn>
void ListValue::scan(bool from_tail, Fn&& visit) const {
  if (!from_tail) {
    size_t index = 0;
    for (size_t i = 0; i < ring_.size(); ++i) {
      const Node& node = ring_[i];
      for (uint32_t offset = 0; offset < node.used(); offset = node.next(offset)) {
        if (!visit(node.value_at(offset), index++)) return;
      }
    }
    return;
  }
  size_t index = size_;
  for (size_t i = ring_.size(); i-- > 0;) {
    const Node& node = ring_[i];
    for (uint32_t end = node.used(); end > 0;) {
      const uint32_t offset = node.prev(end);
      if (!visit(node.value_at(offset), --index)) return;
      end = offset;
    }
  }
}

}  // namespace keywarden
