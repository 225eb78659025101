// The hash value's two encodings and the conversion between them (see hash_value.h).
#include "types/hash_value.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <unordered_set>

namespace keywarden {
namespace {

// Redis's DICT_HT_INITIAL_SIZE and HASHTABLE_MIN_FILL: a table never has fewer buckets than
// this, and shrinks once fewer than one bucket in ten holds an element.
constexpr size_t kMinBuckets = 4;
constexpr size_t kMinFillPercent = 10;

size_t buckets_for(size_t elements) {
  return std::bit_ceil(std::max(elements, kMinBuckets));
}

uint64_t reverse_bits(uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
  v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
  return __builtin_bswap64(v);
}

}  // namespace

HashValue::Table::~Table() {
  for (Node* head : buckets) {
    while (head != nullptr) {
      Node* next = head->next;
      delete head;
      head = next;
    }
  }
}

HashValue::HashValue() = default;
HashValue::~HashValue() = default;
HashValue::HashValue(HashValue&&) noexcept = default;
HashValue& HashValue::operator=(HashValue&&) noexcept = default;

HashValue::HashValue(const HashValue& other) : listpack_(other.listpack_) {
  if (other.table_ == nullptr) return;
  table_ = std::make_unique<Table>();
  table_->buckets.assign(other.table_->buckets.size(), nullptr);
  other.for_each([this](const std::string& field, const std::string& value) {
    insert_node(new Node{nullptr, hash_of(field), Pair{field, value}});
  });
}

HashValue& HashValue::operator=(const HashValue& other) {
  if (this != &other) *this = HashValue(other);
  return *this;
}

size_t HashValue::size() const { return table_ == nullptr ? listpack_.size() : table_->size; }

uint64_t HashValue::hash_of(std::string_view field) {
  return std::hash<std::string_view>{}(field);
}

uint64_t HashValue::next_cursor(uint64_t cursor, uint64_t mask) {
  // Setting the bits above the mask makes the increment of the reversed cursor carry straight
  // out of the bucket bits, so the walk ends (cursor 0) after the last bucket.
  cursor |= ~mask;
  cursor = reverse_bits(cursor);
  ++cursor;
  return reverse_bits(cursor);
}

HashValue::Node* HashValue::find_node(std::string_view field) const {
  const uint64_t hash = hash_of(field);
  Node* node = table_->buckets[hash & (table_->buckets.size() - 1)];
  for (; node != nullptr; node = node->next) {
    if (node->hash == hash && node->pair.field == field) return node;
  }
  return nullptr;
}

void HashValue::insert_node(Node* node) {
  Node*& head = table_->buckets[node->hash & (table_->buckets.size() - 1)];
  node->next = head;
  head = node;
  ++table_->size;
}

void HashValue::rehash(size_t bucket_count) {
  std::vector<Node*> old;
  old.swap(table_->buckets);
  table_->buckets.assign(bucket_count, nullptr);
  table_->size = 0;
  for (Node* head : old) {
    while (head != nullptr) {
      Node* next = head->next;
      insert_node(head);
      head = next;
    }
  }
}

const std::string* HashValue::find(std::string_view field) const {
  if (table_ == nullptr) {
    for (const Pair& pair : listpack_) {
      if (pair.field == field) return &pair.value;
    }
    return nullptr;
  }
  const Node* node = find_node(field);
  return node == nullptr ? nullptr : &node->pair.value;
}

void HashValue::convert_to_table() {
  if (table_ != nullptr) return;
  table_ = std::make_unique<Table>();
  table_->buckets.assign(buckets_for(listpack_.size()), nullptr);
  for (Pair& pair : listpack_) {
    const uint64_t hash = hash_of(pair.field);
    insert_node(new Node{nullptr, hash, std::move(pair)});
  }
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
  if (Node* node = find_node(field)) {
    node->pair.value.assign(value);
    return false;
  }
  if (table_->size >= table_->buckets.size()) rehash(table_->buckets.size() * 2);
  insert_node(new Node{nullptr, hash_of(field), Pair{std::string(field), std::string(value)}});
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
  const uint64_t hash = hash_of(field);
  Node** link = &table_->buckets[hash & (table_->buckets.size() - 1)];
  while (*link != nullptr && !((*link)->hash == hash && (*link)->pair.field == field)) {
    link = &(*link)->next;
  }
  if (*link == nullptr) return false;
  Node* node = *link;
  *link = node->next;
  delete node;
  --table_->size;
  const size_t buckets = table_->buckets.size();
  if (buckets > kMinBuckets && table_->size * 100 / buckets < kMinFillPercent) {
    rehash(buckets_for(table_->size));
  }
  return true;
}

const HashValue::Pair& HashValue::random_pair(std::mt19937_64& rng) const {
  if (table_ == nullptr) {
    return listpack_[std::uniform_int_distribution<size_t>(0, listpack_.size() - 1)(rng)];
  }
  std::uniform_int_distribution<size_t> pick_bucket(0, table_->buckets.size() - 1);
  const Node* head;
  do {
    head = table_->buckets[pick_bucket(rng)];
  } while (head == nullptr);
  size_t length = 0;
  for (const Node* node = head; node != nullptr; node = node->next) ++length;
  size_t index = std::uniform_int_distribution<size_t>(0, length - 1)(rng);
  while (index-- > 0) head = head->next;
  return head->pair;
}

std::vector<const HashValue::Pair*> HashValue::random_distinct(size_t count,
                                                               std::mt19937_64& rng) const {
  std::vector<const Pair*> chosen;
  const size_t total = size();
  count = std::min(count, total);
  if (count * 3 > total) {
    // Asked for a good share of the hash: a partial shuffle of all pairs is cheaper than
    // drawing until enough distinct ones turned up.
    std::vector<const Pair*> all;
    all.reserve(total);
    if (table_ == nullptr) {
      for (const Pair& pair : listpack_) all.push_back(&pair);
    } else {
      for (const Node* head : table_->buckets) {
        for (const Node* node = head; node != nullptr; node = node->next) {
          all.push_back(&node->pair);
        }
      }
    }
    for (size_t i = 0; i < count; ++i) {
      size_t j = std::uniform_int_distribution<size_t>(i, total - 1)(rng);
      std::swap(all[i], all[j]);
    }
    all.resize(count);
    return all;
  }
  std::unordered_set<const Pair*> seen;
  chosen.reserve(count);
  while (chosen.size() < count) {
    const Pair* pair = &random_pair(rng);
    if (seen.insert(pair).second) chosen.push_back(pair);
  }
  return chosen;
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
  bytes += sizeof(Table) + table_->buckets.capacity() * sizeof(Node*);
  for_each([&](const std::string& field, const std::string& value) {
    bytes += sizeof(Node) + string_bytes(field) + string_bytes(value);
  });
  return bytes;
}

}  // namespace keywarden
