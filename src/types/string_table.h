// StringTable: the chained hash table behind every collection's "hashtable" encoding (hash
// fields, set members, sorted-set members), keyed by a byte string, each element carrying
// whatever payload the collection needs (nothing for a set, the value for a hash, the score for
// a sorted set).
//
// Layout: a power-of-two vector of bucket heads, each a singly linked chain of nodes holding
// the element and its cached hash. The table grows to twice its size before an insertion would
// make the load factor exceed 1, and shrinks to the smallest power of two that holds the
// elements once fewer than one bucket in ten is used (Redis's HASHTABLE_MIN_FILL), never below
// four buckets (DICT_HT_INITIAL_SIZE). A resize relinks the existing nodes, so the address of
// an element stays valid until that element is erased (a sorted set's skiplist may point at
// it). Resizes rehash the whole table at once, amortised O(1) per insertion; an incremental
// rehash is left for when collections of many millions of elements matter.
//
// SCAN uses Redis's reverse-binary cursor: the cursor's bucket bits are incremented from the
// most significant down, so that every bucket index visited before a resize maps onto indexes
// already visited after it, whether the table grew or shrank in between. An element present for
// the whole iteration is therefore returned at least once; one may be returned twice after a
// shrink.
//
// Random choice is uniform: a (bucket, position) pair is drawn among the buckets and the
// positions below the longest chain's length (tracked as an upper bound) until one names an
// element. Redis's dict sampling, a random bucket then a random element of its chain, favours
// elements in short chains; a chi-square test over HRANDFIELD/SRANDMEMBER/ZRANDMEMBER shows it
// (tests/compat/test_random_sampling.py).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace keywarden {

// The payload of an element that has none (a set member).
struct NoPayload {};

// An element made of a key and a payload, for collections that need nothing more.
template <typename Payload = NoPayload>
struct KeyedElement {
  std::string key;
  [[no_unique_address]] Payload value;
};

// How a table reaches its element's key. The default reads a `key` member; a collection whose
// element names it otherwise (HashValue::Pair's `field`) passes its own.
template <typename Element>
struct KeyMember {
  static std::string_view of(const Element& element) { return element.key; }
};
// For tables whose element is the key itself (std::string).
struct WholeKey {
  static std::string_view of(const std::string& element) { return element; }
};

namespace string_table_detail {

// DICT_HT_INITIAL_SIZE and HASHTABLE_MIN_FILL in Redis.
inline constexpr size_t kMinBuckets = 4;
inline constexpr size_t kMinFillPercent = 10;

inline size_t buckets_for(size_t elements) {
  return std::bit_ceil(std::max(elements, kMinBuckets));
}

inline uint64_t reverse_bits(uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
  v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
  return __builtin_bswap64(v);
}

// The cursor after `cursor` for a table of `mask + 1` buckets.
inline uint64_t next_cursor(uint64_t cursor, uint64_t mask) {
  // Setting the bits above the mask makes the increment of the reversed cursor carry straight
  // out of the bucket bits, so the walk ends (cursor 0) after the last bucket.
  cursor |= ~mask;
  cursor = reverse_bits(cursor);
  ++cursor;
  return reverse_bits(cursor);
}

inline uint64_t hash_bytes(std::string_view key) { return std::hash<std::string_view>{}(key); }

}  // namespace string_table_detail

template <typename Element, typename KeyOf = KeyMember<Element>>
class StringTable {
  struct Node {
    Node* next;
    uint32_t hash;
    // A word the collection may use for its own bookkeeping about the element (a hash keeps
    // the element's slot in its field-deadline heap here); it fills what would be padding.
    uint32_t aux;
    Element element;
  };

 public:
  using value_type = Element;

  // Walks the elements in bucket order (the order for_each() and SCAN use).
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Element;
    using difference_type = std::ptrdiff_t;
    using pointer = const Element*;
    using reference = const Element&;

    const_iterator() = default;
    reference operator*() const { return node_->element; }
    pointer operator->() const { return &node_->element; }
    const_iterator& operator++() {
      node_ = node_->next;
      if (node_ == nullptr) advance_to_filled(bucket_ + 1);
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const const_iterator& other) const { return node_ == other.node_; }

   private:
    friend class StringTable;
    explicit const_iterator(const std::vector<Node*>* buckets) : buckets_(buckets) {
      advance_to_filled(0);
    }
    void advance_to_filled(size_t bucket) {
      for (bucket_ = bucket; bucket_ < buckets_->size(); ++bucket_) {
        if ((*buckets_)[bucket_] != nullptr) {
          node_ = (*buckets_)[bucket_];
          return;
        }
      }
      node_ = nullptr;
    }
    const std::vector<Node*>* buckets_ = nullptr;
    size_t bucket_ = 0;
    const Node* node_ = nullptr;
  };

  // The value of a node's aux word until the collection sets it.
  static constexpr uint32_t kNoAux = UINT32_MAX;
  // The aux word of the node holding `element` (an element of this table).
  static uint32_t& aux_of(Element& element) {
    return node_of(element)->aux;
  }
  static uint32_t aux_of(const Element& element) {
    return node_of(const_cast<Element&>(element))->aux;
  }

  StringTable() = default;
  ~StringTable() { clear(); }
  StringTable(const StringTable& other) : buckets_(other.buckets_.size(), nullptr) {
    // Copies chain by chain in the same order, so the copy iterates as the original does.
    for (size_t i = 0; i < other.buckets_.size(); ++i) {
      Node** tail = &buckets_[i];
      for (const Node* node = other.buckets_[i]; node != nullptr; node = node->next) {
        *tail = new Node{nullptr, node->hash, kNoAux, node->element};
        tail = &(*tail)->next;
      }
    }
    size_ = other.size_;
    max_chain_ = other.max_chain_;
  }
  StringTable& operator=(const StringTable& other) {
    if (this != &other) {
      StringTable copy(other);
      swap(copy);
    }
    return *this;
  }
  StringTable(StringTable&& other) noexcept
      : buckets_(std::move(other.buckets_)),
        size_(std::exchange(other.size_, 0)),
        max_chain_(std::exchange(other.max_chain_, 0)) {
    other.buckets_.clear();
  }
  StringTable& operator=(StringTable&& other) noexcept {
    if (this != &other) {
      clear();
      swap(other);
    }
    return *this;
  }
  void swap(StringTable& other) noexcept {
    buckets_.swap(other.buckets_);
    std::swap(size_, other.size_);
    std::swap(max_chain_, other.max_chain_);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t bucket_count() const { return buckets_.size(); }

  const_iterator begin() const { return const_iterator(&buckets_); }
  const_iterator end() const { return const_iterator(); }

  // The element with `key`, or null. Callers may change the payload, never the key.
  Element* find(std::string_view key) { return find_node(key, hash_of(key)); }
  const Element* find(std::string_view key) const { return find_node(key, hash_of(key)); }
  bool contains(std::string_view key) const { return find(key) != nullptr; }

  // Adds `element` unless its key is present; returns the element stored under the key and
  // whether it was inserted (when not, `element` is left untouched).
  std::pair<Element*, bool> insert(Element&& element) {
    const std::string_view key = KeyOf::of(element);
    const uint32_t hash = hash_of(key);
    if (Element* present = find_node(key, hash)) return {present, false};
    return {&insert_unique(hash, std::move(element)), true};
  }
  std::pair<Element*, bool> insert(const Element& element) { return insert(Element(element)); }
  // Adds an element whose key the caller knows to be absent (conversions, copies).
  Element& insert_new(Element&& element) {
    const uint32_t hash = hash_of(KeyOf::of(element));
    return insert_unique(hash, std::move(element));
  }

  // Removes the element with `key`, moving it to *removed when given. False when absent.
  bool erase(std::string_view key, Element* removed = nullptr) {
    if (buckets_.empty()) return false;
    const uint32_t hash = hash_of(key);
    Node** link = &buckets_[hash & (buckets_.size() - 1)];
    while (*link != nullptr && !((*link)->hash == hash && KeyOf::of((*link)->element) == key)) {
      link = &(*link)->next;
    }
    if (*link == nullptr) return false;
    Node* node = *link;
    *link = node->next;
    if (removed != nullptr) *removed = std::move(node->element);
    delete node;
    --size_;
    const size_t buckets = buckets_.size();
    if (buckets > string_table_detail::kMinBuckets &&
        size_ * 100 / buckets < string_table_detail::kMinFillPercent) {
      rehash(string_table_detail::buckets_for(size_));
    }
    return true;
  }

  void clear() {
    for (Node* head : buckets_) {
      while (head != nullptr) {
        Node* next = head->next;
        delete head;
        head = next;
      }
    }
    std::vector<Node*>().swap(buckets_);
    size_ = 0;
    max_chain_ = 0;
  }

  // Makes room for `elements` without further growth (a conversion from a flat encoding).
  void reserve(size_t elements) {
    const size_t wanted = string_table_detail::buckets_for(elements);
    if (wanted > buckets_.size()) rehash(wanted);
  }

  // Calls visit(element) for every element in bucket order. The table must not change during
  // the walk.
  template <typename Fn>
  void for_each(Fn&& visit) const {
    for (const Node* head : buckets_) {
      for (const Node* node = head; node != nullptr; node = node->next) visit(node->element);
    }
  }

  // One SCAN step: visits every element of the bucket `cursor` names and returns the next
  // cursor, 0 when the walk is complete. The table may change between steps.
  template <typename Fn>
  uint64_t scan(uint64_t cursor, Fn&& visit) const {
    if (buckets_.empty()) return 0;
    const uint64_t mask = buckets_.size() - 1;
    for (const Node* node = buckets_[cursor & mask]; node != nullptr; node = node->next) {
      visit(node->element);
    }
    return string_table_detail::next_cursor(cursor, mask);
  }

  // A random element, each equally likely (the table must not be empty). About
  // buckets * max_chain / size draws, each walking at most its position along one chain.
  const Element& random(std::mt19937_64& rng) const {
    const size_t cap = std::max<size_t>(max_chain_, 1);
    std::uniform_int_distribution<size_t> pick(0, buckets_.size() * cap - 1);
    for (;;) {
      const size_t slot = pick(rng);
      const Node* node = buckets_[slot / cap];
      for (size_t position = slot % cap; node != nullptr && position > 0; --position) {
        node = node->next;
      }
      if (node != nullptr) return node->element;
    }
  }

  // min(count, size()) distinct elements chosen at random, in no particular order.
  std::vector<const Element*> random_distinct(size_t count, std::mt19937_64& rng) const {
    count = std::min(count, size_);
    if (count * 3 > size_) {
      // Asked for a good share of the table: a partial shuffle of all elements is cheaper than
      // drawing until enough distinct ones turned up.
      std::vector<const Element*> all;
      all.reserve(size_);
      for_each([&](const Element& element) { all.push_back(&element); });
      for (size_t i = 0; i < count; ++i) {
        std::swap(all[i], all[std::uniform_int_distribution<size_t>(i, size_ - 1)(rng)]);
      }
      all.resize(count);
      return all;
    }
    std::vector<const Element*> chosen;
    chosen.reserve(count);
    std::unordered_set<const Element*> seen;
    while (chosen.size() < count) {
      const Element* element = &random(rng);
      if (seen.insert(element).second) chosen.push_back(element);
    }
    return chosen;
  }

  // The chain length of every bucket, for DEBUG HTSTATS-KEY.
  std::vector<uint32_t> chain_lengths() const {
    std::vector<uint32_t> lengths(buckets_.size(), 0);
    for (size_t i = 0; i < buckets_.size(); ++i) {
      for (const Node* node = buckets_[i]; node != nullptr; node = node->next) ++lengths[i];
    }
    return lengths;
  }

  // Heap bytes of the table's own structure (bucket vector and nodes), not counting memory
  // the elements themselves own (long strings): the collection adds that.
  size_t structure_bytes() const {
    return buckets_.capacity() * sizeof(Node*) + size_ * sizeof(Node);
  }

 private:
  // 32 bits of the hash are kept and compared: enough for any bucket count a collection
  // reaches, and they leave room for the node's aux word.
  static uint32_t hash_of(std::string_view key) {
    return static_cast<uint32_t>(string_table_detail::hash_bytes(key));
  }

  static Node* node_of(Element& element) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
    constexpr size_t kElementOffset = offsetof(Node, element);
#pragma GCC diagnostic pop
    return reinterpret_cast<Node*>(reinterpret_cast<char*>(&element) - kElementOffset);
  }

  Element* find_node(std::string_view key, uint32_t hash) const {
    if (buckets_.empty()) return nullptr;
    for (Node* node = buckets_[hash & (buckets_.size() - 1)]; node != nullptr;
         node = node->next) {
      if (node->hash == hash && KeyOf::of(node->element) == key) return &node->element;
    }
    return nullptr;
  }

  Element& insert_unique(uint32_t hash, Element&& element) {
    if (size_ >= buckets_.size()) {
      rehash(buckets_.empty() ? string_table_detail::kMinBuckets : buckets_.size() * 2);
    }
    Node* node = new Node{nullptr, hash, kNoAux, std::move(element)};
    link(node);
    ++size_;
    return node->element;
  }

  void link(Node* node) {
    Node*& head = buckets_[node->hash & (buckets_.size() - 1)];
    node->next = head;
    head = node;
    size_t length = 0;
    for (const Node* at = node; at != nullptr; at = at->next) ++length;
    max_chain_ = std::max(max_chain_, length);
  }

  void rehash(size_t bucket_count) {
    std::vector<Node*> old(bucket_count, nullptr);
    old.swap(buckets_);
    max_chain_ = 0;
    for (Node* head : old) {
      while (head != nullptr) {
        Node* next = head->next;
        link(head);
        head = next;
      }
    }
  }

  std::vector<Node*> buckets_;
  size_t size_ = 0;
  // No chain is longer (an upper bound: erasing does not lower it, a rehash recomputes it).
  size_t max_chain_ = 0;
};

// A table of bare keys (a set's members).
using StringSet = StringTable<std::string, WholeKey>;
// A table of keys with a payload each.
template <typename Payload>
using StringMap = StringTable<KeyedElement<Payload>>;

}  // namespace keywarden
