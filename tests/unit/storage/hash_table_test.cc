#include "storage/hash_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace keywarden {
namespace {

struct alignas(16) TestNode {  // HashTable nodes are 16-byte aligned
  explicit TestNode(std::string k) : key(std::move(k)) {}
  std::string key;
  TestNode* next = nullptr;
};

struct TestTraits : DefaultKeyHash {
  static std::string_view key(const TestNode* node) { return node->key; }
  static TestNode*& next(TestNode* node) { return node->next; }
};

// Every key in one bucket: exercises long chains.
struct CollidingTraits {
  static std::string_view key(const TestNode* node) { return node->key; }
  static TestNode*& next(TestNode* node) { return node->next; }
  static uint64_t hash(std::string_view) { return 42; }
};

// ASCII case-insensitive keys, through the optional Traits::equal.
struct CaseInsensitiveTraits {
  static std::string_view key(const TestNode* node) { return node->key; }
  static TestNode*& next(TestNode* node) { return node->next; }
  static uint64_t hash(std::string_view key) {
    std::string lower(key);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return hash_bytes(lower);
  }
  static bool equal(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) ==
                    std::tolower(static_cast<unsigned char>(y));
           });
  }
};

using Table = HashTable<TestNode, TestTraits>;

// The owner of the nodes, and the reference the table is checked against.
class Model {
 public:
  TestNode* add(const std::string& key) {
    auto [it, inserted] = nodes_.try_emplace(key);
    EXPECT_TRUE(inserted);
    it->second.node = std::make_unique<TestNode>(key);
    it->second.index = keys_.size();
    keys_.push_back(key);
    return it->second.node.get();
  }
  void erase(std::string key) {  // by value: callers pass the key of the node being freed
    auto it = nodes_.find(key);
    if (it == nodes_.end()) return;
    const size_t index = it->second.index;
    nodes_.erase(it);
    if (index != keys_.size() - 1) {
      keys_[index] = std::move(keys_.back());
      nodes_.find(keys_[index])->second.index = index;
    }
    keys_.pop_back();
  }
  bool contains(const std::string& key) const { return nodes_.contains(key); }
  TestNode* get(const std::string& key) const {
    auto it = nodes_.find(key);
    return it == nodes_.end() ? nullptr : it->second.node.get();
  }
  const std::string& random_key(std::mt19937_64& rng) const { return keys_[rng() % keys_.size()]; }
  size_t size() const { return nodes_.size(); }
  const std::vector<std::string>& keys() const { return keys_; }

 private:
  struct Entry {
    std::unique_ptr<TestNode> node;
    size_t index = 0;
  };
  std::unordered_map<std::string, Entry> nodes_;
  std::vector<std::string> keys_;
};

std::string key_of(uint64_t i) { return "key:" + std::to_string(i); }

// Full consistency between the table and the model, without moving the table's rehash on.
template <class T>
void expect_same(const T& table, const Model& model) {
  ASSERT_EQ(table.size(), model.size());
  size_t visited = 0;
  table.for_each([&](TestNode* node) {
    ++visited;
    EXPECT_EQ(model.get(node->key), node) << node->key;
  });
  EXPECT_EQ(visited, model.size());
}

// Removes a random one of `churn`'s keys from the table and the model.
template <class AnyTable>
void remove_random(std::vector<std::string>& churn, AnyTable& table, Model& model,
                   std::mt19937_64& rng) {
  const size_t victim = rng() % churn.size();
  std::swap(churn[victim], churn.back());
  ASSERT_NE(table.remove(churn.back()), nullptr);
  model.erase(churn.back());
  churn.pop_back();
}

class HashTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_seed_ = hash_seed();
    set_hash_seed({0x0123456789abcdefULL, 0xfedcba9876543210ULL});
  }
  void TearDown() override { set_hash_seed(saved_seed_); }

  // Fills `table` with keys [0, count) and finishes any rehash.
  void fill(Table& table, Model& model, uint64_t count) {
    for (uint64_t i = 0; i < count; ++i) table.insert(model.add(key_of(i)));
    while (table.rehash_steps(1000)) {
    }
  }

 private:
  HashSeed saved_seed_;
};

// ---------------------------------------------------------------------------------------------
// Hash

TEST_F(HashTableTest, SipHash24MatchesPublishedVectors) {
  // From the SipHash paper (Aumasson & Bernstein): key 00 01 .. 0f, message 00 01 .. (n-1).
  const HashSeed key{0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};
  std::string message;
  EXPECT_EQ((siphash<2, 4>(message, key)), 0x726fdb47dd0e0e31ULL);
  for (int i = 0; i < 15; ++i) message.push_back(static_cast<char>(i));
  EXPECT_EQ((siphash<2, 4>(message, key)), 0xa129ca6149be45e5ULL);
}

TEST_F(HashTableTest, HashDependsOnSeedAndEveryByte) {
  const std::string text = "the quick brown fox jumps over the lazy dog";
  const uint64_t base = hash_bytes(text);
  EXPECT_EQ(hash_bytes(text), base);
  EXPECT_EQ(siphash12(text, hash_seed()), base);
  for (size_t i = 0; i < text.size(); ++i) {
    std::string changed = text;
    changed[i] ^= 1;
    EXPECT_NE(hash_bytes(changed), base) << i;
  }
  for (size_t length = 0; length < text.size(); ++length) {
    EXPECT_NE(hash_bytes(std::string_view(text).substr(0, length)), base);
  }
  const HashSeed seed = hash_seed();
  set_hash_seed({seed.k0 + 1, seed.k1});
  EXPECT_NE(hash_bytes(text), base);
  set_hash_seed(seed);
  EXPECT_EQ(hash_bytes(text), base);
}

TEST_F(HashTableTest, HashSpreadsSequentialKeysOverBuckets) {
  // 4096 sequential keys into 4096 buckets by the low bits: expect about 1/e empty.
  constexpr size_t kBuckets = 4096;
  std::vector<int> counts(kBuckets);
  for (size_t i = 0; i < kBuckets; ++i) ++counts[hash_bytes(key_of(i)) & (kBuckets - 1)];
  const auto empty = std::count(counts.begin(), counts.end(), 0);
  EXPECT_NEAR(static_cast<double>(empty) / kBuckets, std::exp(-1.0), 0.03);
  EXPECT_LT(*std::max_element(counts.begin(), counts.end()), 10);
}

// ---------------------------------------------------------------------------------------------
// Basic operations

TEST_F(HashTableTest, EmptyTable) {
  Table table;
  std::mt19937_64 rng(1);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(table.bucket_count(), 0u);
  EXPECT_EQ(table.bucket_memory(), 0u);
  EXPECT_FALSE(table.rehashing());
  EXPECT_EQ(table.find("missing"), nullptr);
  EXPECT_EQ(table.remove("missing"), nullptr);
  TestNode stray("stray");
  EXPECT_FALSE(table.remove(&stray));
  EXPECT_EQ(table.random_node(rng), nullptr);
  TestNode* out[4];
  EXPECT_EQ(table.sample(out, rng), 0u);
  int calls = 0;
  EXPECT_EQ(table.scan(0, [&](TestNode*) { ++calls; }), 0u);
  EXPECT_EQ(table.scan(12345, [&](TestNode*) { ++calls; }), 0u);
  EXPECT_TRUE(table.for_each([&](TestNode*) { ++calls; }));
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(table.rehash_steps(10));
  EXPECT_FALSE(table.rehash_for(std::chrono::microseconds(100)));
  EXPECT_FALSE(table.resize_if_needed());
  table.clear([&](TestNode*) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST_F(HashTableTest, InsertFindRemove) {
  Table table;
  TestNode a("a"), b("b"), c("c");
  table.insert(&a);
  table.insert(&b);
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(table.bucket_count(), Table::kMinBuckets);
  EXPECT_EQ(table.find("a"), &a);
  EXPECT_EQ(table.find("b"), &b);
  EXPECT_EQ(table.find("c"), nullptr);
  EXPECT_EQ(table.find(""), nullptr);

  EXPECT_EQ(table.remove("a"), &a);
  EXPECT_EQ(a.next, nullptr);
  EXPECT_EQ(table.find("a"), nullptr);
  EXPECT_EQ(table.remove("a"), nullptr);
  EXPECT_FALSE(table.remove(&c));
  EXPECT_TRUE(table.remove(&b));
  EXPECT_FALSE(table.remove(&b));
  EXPECT_TRUE(table.empty());

  TestNode empty_key("");
  table.insert(&empty_key);
  EXPECT_EQ(table.find(""), &empty_key);
  const uint64_t hash = Table::hash_of("c");
  EXPECT_EQ(table.find("c", hash), nullptr);
  table.insert(&c, hash);
  EXPECT_EQ(table.find("c", hash), &c);
  EXPECT_EQ(table.remove("c", hash), &c);
}

TEST_F(HashTableTest, BinaryKeys) {
  Table table;
  Model model;
  const std::string with_nul("a\0b", 3);
  const std::string other_nul("a\0c", 3);
  table.insert(model.add(with_nul));
  table.insert(model.add(other_nul));
  table.insert(model.add("a"));
  EXPECT_EQ(table.find(with_nul), model.get(with_nul));
  EXPECT_EQ(table.find(other_nul), model.get(other_nul));
  EXPECT_EQ(table.find("a"), model.get("a"));
  EXPECT_EQ(table.find(std::string("a\0", 2)), nullptr);
}

TEST_F(HashTableTest, FindOrInsertCallsMakeOnlyWhenAbsent) {
  Table table;
  Model model;
  int made = 0;
  auto make = [&](const std::string& key) {
    return [&, key] {
      ++made;
      return model.add(key);
    };
  };
  auto [first, inserted] = table.find_or_insert("x", make("x"));
  EXPECT_TRUE(inserted);
  EXPECT_EQ(first, model.get("x"));
  auto [again, inserted_again] = table.find_or_insert("x", make("x"));
  EXPECT_FALSE(inserted_again);
  EXPECT_EQ(again, first);
  EXPECT_EQ(made, 1);
  for (uint64_t i = 0; i < 1000; ++i) table.find_or_insert(key_of(i), make(key_of(i)));
  for (uint64_t i = 0; i < 1000; ++i) table.find_or_insert(key_of(i), make(key_of(i)));
  EXPECT_EQ(made, 1001);
  expect_same(table, model);
}

TEST_F(HashTableTest, LongChainsStayCorrect) {
  HashTable<TestNode, CollidingTraits> table;
  Model model;
  for (uint64_t i = 0; i < 300; ++i) table.insert(model.add(key_of(i)));
  expect_same(table, model);
  for (uint64_t i = 0; i < 300; i += 2) {
    EXPECT_EQ(table.remove(key_of(i)), model.get(key_of(i)));
    model.erase(key_of(i));
  }
  for (uint64_t i = 0; i < 300; ++i) {
    EXPECT_EQ(table.find(key_of(i)), model.get(key_of(i))) << i;
  }
  std::mt19937_64 rng(3);
  std::unordered_set<TestNode*> drawn;
  for (int i = 0; i < 5000; ++i) drawn.insert(table.random_node(rng));
  EXPECT_EQ(drawn.size(), model.size());  // one chain of 150: positions are uniform
  expect_same(table, model);
}

TEST_F(HashTableTest, TraitsEqualDecidesKeyEquality) {
  HashTable<TestNode, CaseInsensitiveTraits> table;
  TestNode get("GET"), set("set");
  table.insert(&get);
  table.insert(&set);
  EXPECT_EQ(table.find("get"), &get);
  EXPECT_EQ(table.find("Get"), &get);
  EXPECT_EQ(table.find("SET"), &set);
  EXPECT_EQ(table.remove("sEt"), &set);
  EXPECT_EQ(table.find("set"), nullptr);
}

TEST_F(HashTableTest, ClearFreesEveryNodeOnceAndReleasesBuckets) {
  Table table;
  for (int i = 0; i < 1000; ++i) table.insert(new TestNode(key_of(i)));
  table.reserve(4096);  // leave a rehash in progress
  EXPECT_TRUE(table.rehashing());
  std::unordered_set<TestNode*> freed;
  table.clear([&](TestNode* node) {
    EXPECT_TRUE(freed.insert(node).second);
    delete node;
  });
  EXPECT_EQ(freed.size(), 1000u);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.bucket_count(), 0u);
  EXPECT_EQ(table.bucket_memory(), 0u);
  EXPECT_FALSE(table.rehashing());
  TestNode reuse("again");
  table.insert(&reuse);
  EXPECT_EQ(table.find("again"), &reuse);
}

TEST_F(HashTableTest, ForEachVisitsEachNodeOnceAndCanStop) {
  Table table;
  Model model;
  fill(table, model, 500);
  table.reserve(2048);
  ASSERT_TRUE(table.rehashing());
  table.rehash_steps(50);
  ASSERT_TRUE(table.rehashing());
  std::unordered_set<TestNode*> seen;
  EXPECT_TRUE(table.for_each([&](TestNode* node) { EXPECT_TRUE(seen.insert(node).second); }));
  EXPECT_EQ(seen.size(), 500u);
  int visits = 0;
  EXPECT_FALSE(table.for_each([&](TestNode*) { return ++visits < 10; }));
  EXPECT_EQ(visits, 10);
}

TEST_F(HashTableTest, MoveTransfersContents) {
  Table table;
  Model model;
  fill(table, model, 100);
  Table moved(std::move(table));
  EXPECT_EQ(table.size(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(table.bucket_count(), 0u);
  expect_same(moved, model);
  Table assigned;
  TestNode other("other");
  assigned.insert(&other);
  assigned = std::move(moved);
  expect_same(assigned, model);
  EXPECT_EQ(assigned.find("other"), nullptr);
}

// ---------------------------------------------------------------------------------------------
// Random operations mirrored against std::unordered_map

class HashTableRandomOpsTest : public HashTableTest, public ::testing::WithParamInterface<int> {};

// Grows at eight nodes per bucket, as the keyspace's table does.
struct Load8Traits : TestTraits {
  static constexpr size_t kMaxLoad = 8;
};
using Load8Table = HashTable<TestNode, Load8Traits>;

template <class T>
void random_ops_match_model(int seed) {
  std::mt19937_64 rng(seed);
  T table;
  Model model;
  constexpr int kOps = 100'000;
  constexpr int kPhaseOps = 25'000;
  constexpr uint64_t kKeySpace = 50'000;
  size_t ops_while_rehashing = 0;
  size_t grows = 0;
  size_t shrinks = 0;
  size_t max_size = 0;
  for (int op = 0; op < kOps; ++op) {
    // Alternate insert-heavy and remove-heavy phases so the table grows and shrinks repeatedly.
    const bool growing = (op / kPhaseOps) % 2 == 0;
    const uint64_t roll = rng() % 100;
    const bool pick_present = model.size() > 0 && rng() % 10 < (growing ? 3u : 9u);
    const std::string key = pick_present ? model.random_key(rng) : key_of(rng() % kKeySpace);
    const size_t buckets_before = table.bucket_count();
    const bool was_rehashing = table.rehashing();
    if (was_rehashing) ++ops_while_rehashing;

    if (roll < (growing ? 55u : 5u)) {
      if (!model.contains(key)) {
        table.insert(model.add(key));
      } else {
        ASSERT_EQ(table.find(key), model.get(key));
      }
    } else if (roll < (growing ? 65u : 10u)) {
      const bool absent = !model.contains(key);
      auto [node, inserted] = table.find_or_insert(key, [&] { return model.add(key); });
      ASSERT_EQ(inserted, absent);
      ASSERT_EQ(node, model.get(key));
    } else if (roll < (growing ? 75u : 55u)) {
      TestNode* removed = table.remove(key);
      ASSERT_EQ(removed, model.get(key));
      if (removed != nullptr) model.erase(key);
    } else if (roll < 80u) {
      TestNode* node = model.get(key);
      if (node != nullptr) {
        ASSERT_TRUE(table.remove(node));
        model.erase(key);
      } else {
        TestNode stray(key);
        ASSERT_FALSE(table.remove(&stray));
      }
    } else if (roll < 99) {
      ASSERT_EQ(table.find(key), model.get(key)) << key;
    } else {
      table.rehash_steps(rng() % 4);
    }
    ASSERT_EQ(table.size(), model.size());
    if (!was_rehashing && table.rehashing()) {
      (table.bucket_count() > 2 * buckets_before ? grows : shrinks) += 1;
    }
    max_size = std::max(max_size, model.size());
    if (op % 10'000 == 0) {
      ASSERT_NO_FATAL_FAILURE(expect_same(table, model));
    }
  }
  expect_same(table, model);
  for (const std::string& key : model.keys()) ASSERT_NE(table.find(key), nullptr);
  EXPECT_GT(max_size, 5'000u);
  EXPECT_GT(grows, 10u);
  EXPECT_GT(shrinks, 5u);
  EXPECT_GT(ops_while_rehashing, 1000u);
  table.clear([](TestNode*) {});
}

TEST_P(HashTableRandomOpsTest, MatchesUnorderedMap) {
  random_ops_match_model<Table>(GetParam());
}

TEST_P(HashTableRandomOpsTest, MatchesUnorderedMapAtLoadEight) {
  random_ops_match_model<Load8Table>(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Seeds, HashTableRandomOpsTest, ::testing::Values(1, 2, 3));

// ---------------------------------------------------------------------------------------------
// Resizing

TEST_F(HashTableTest, GrowsIncrementallyAtLoadOne) {
  Table table;
  Model model;
  fill(table, model, 1024);
  ASSERT_FALSE(table.rehashing());
  ASSERT_EQ(table.bucket_count(), 1024u);

  table.insert(model.add(key_of(1024)));  // used == buckets: grow to 2048
  ASSERT_TRUE(table.rehashing());
  EXPECT_EQ(table.bucket_count(), 1024u + 2048u);
  EXPECT_GE(table.bucket_memory(), (1024u + 2048u) * sizeof(TestNode*));

  // Everything stays reachable, insertable and removable while nodes are split between arrays.
  for (uint64_t i = 1025; i < 1200; ++i) table.insert(model.add(key_of(i)));
  for (uint64_t i = 0; i < 1200; i += 7) {
    ASSERT_EQ(table.remove(key_of(i)), model.get(key_of(i)));
    model.erase(key_of(i));
  }
  ASSERT_TRUE(table.rehashing());
  for (uint64_t i = 0; i < 1200; ++i) ASSERT_EQ(table.find(key_of(i)), model.get(key_of(i)));
  expect_same(table, model);

  size_t steps = 0;
  while (table.rehash_steps(1)) ++steps;
  EXPECT_LT(steps, 1024u);  // at most one step per old bucket
  EXPECT_FALSE(table.rehashing());
  EXPECT_EQ(table.bucket_count(), 2048u);
  expect_same(table, model);
}

TEST_F(HashTableTest, ShrinksBelowTenPercentFill) {
  Table table;
  Model model;
  fill(table, model, 1000);
  ASSERT_EQ(table.bucket_count(), 1024u);
  uint64_t next = 0;
  // 103 of 1024 is still 10%; at 102 it shrinks, to the first power of two above 102.
  while (model.size() > 103) {
    ASSERT_TRUE(table.remove(model.get(key_of(next))));
    model.erase(key_of(next++));
    ASSERT_FALSE(table.rehashing());
  }
  ASSERT_EQ(table.bucket_count(), 1024u);
  ASSERT_TRUE(table.remove(model.get(key_of(next))));
  model.erase(key_of(next++));
  ASSERT_TRUE(table.rehashing());
  EXPECT_EQ(table.bucket_count(), 1024u + 128u);
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(table.find(key_of(i)), model.get(key_of(i)));
  while (table.rehash_steps(1)) {
  }
  EXPECT_EQ(table.bucket_count(), 128u);
  expect_same(table, model);

  // Down to nothing: shrinks all the way to the minimum.
  while (model.size() > 0) {
    ASSERT_TRUE(table.remove(model.get(key_of(next))));
    model.erase(key_of(next++));
  }
  while (table.rehash_steps(100) || table.resize_if_needed()) {
  }
  EXPECT_EQ(table.bucket_count(), Table::kMinBuckets);
  EXPECT_EQ(table.size(), 0u);
}

TEST_F(HashTableTest, ResizeDisallowedAllowsOnlyForcedGrowth) {
  Table table;
  Model model;
  table.set_resize_allowed(false);
  EXPECT_FALSE(table.resize_allowed());
  // The first array is allocated anyway; growth waits until the load reaches kForcedGrowLoad.
  for (uint64_t i = 0; i < 4 * Table::kForcedGrowLoad; ++i) table.insert(model.add(key_of(i)));
  EXPECT_EQ(table.bucket_count(), Table::kMinBuckets);
  EXPECT_FALSE(table.rehashing());
  table.insert(model.add(key_of(1000)));
  EXPECT_TRUE(table.rehashing());
  while (table.rehash_steps(1)) {
  }
  EXPECT_EQ(table.bucket_count(), 32u);
  expect_same(table, model);

  // No shrink while disallowed...
  for (uint64_t i = 0; i < 4 * Table::kForcedGrowLoad; ++i) {
    ASSERT_TRUE(table.remove(model.get(key_of(i))));
    model.erase(key_of(i));
  }
  EXPECT_EQ(table.bucket_count(), 32u);
  EXPECT_FALSE(table.rehashing());
  // ...until the cron asks again with resizing allowed.
  table.set_resize_allowed(true);
  EXPECT_EQ(table.bucket_count(), 32u);
  EXPECT_TRUE(table.resize_if_needed());
  EXPECT_TRUE(table.rehashing());
  EXPECT_FALSE(table.resize_if_needed());  // not while rehashing
  while (table.rehash_steps(1)) {
  }
  EXPECT_EQ(table.bucket_count(), Table::kMinBuckets);
  EXPECT_FALSE(table.resize_if_needed());
  expect_same(table, model);
}

TEST_F(HashTableTest, ResizeDisallowedHoldsRehashUnderWay) {
  Table table;
  Model model;
  fill(table, model, 1000);
  table.reserve(2048);  // a normal doubling, under way when resizing becomes disallowed
  table.rehash_steps(10);
  ASSERT_TRUE(table.rehashing());
  table.set_resize_allowed(false);
  EXPECT_TRUE(table.rehash_steps(100'000));
  EXPECT_TRUE(table.rehash_for(std::chrono::milliseconds(1)));
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(table.find(key_of(i)), model.get(key_of(i)));
  EXPECT_TRUE(table.rehashing());
  EXPECT_EQ(table.bucket_count(), 1024u + 2048u);

  // Inserts land in the new array; once it is loaded past kForcedGrowLoad the held rehash
  // resumes and completes, and then the table grows (forced) rather than letting chains grow.
  uint64_t next = 1000;
  while (table.bucket_count() == 1024u + 2048u) {
    table.insert(model.add(key_of(next++)));
    ASSERT_LT(next, 1000 + Table::kForcedGrowLoad * 2048 + 2048);
  }
  EXPECT_GE(model.size(), Table::kForcedGrowLoad * 2048);
  for (int i = 0; i < 100'000 && table.bucket_count() <= 2048u; ++i) {
    table.insert(model.add(key_of(next++)));
  }
  EXPECT_GT(table.bucket_count(), 2048u);
  while (table.rehash_steps(1000)) {
  }
  EXPECT_GE(table.bucket_count(), model.size() / Table::kForcedGrowLoad);
  expect_same(table, model);

  table.set_resize_allowed(true);
  EXPECT_TRUE(table.resize_if_needed() || table.size() < table.bucket_count());
  while (table.rehash_steps(1000)) {
  }
  EXPECT_LT(table.size(), table.bucket_count());
  expect_same(table, model);
}

TEST_F(HashTableTest, ReserveSizesArraysToPowersOfTwo) {
  Table table;
  table.reserve(1);
  EXPECT_EQ(table.bucket_count(), Table::kMinBuckets);
  table.reserve(1000);
  EXPECT_EQ(table.bucket_count(), 1024u);  // empty: replaced at once, nothing to rehash
  EXPECT_FALSE(table.rehashing());
  table.reserve(10);
  EXPECT_EQ(table.bucket_count(), 1024u);  // never shrinks
}

TEST_F(HashTableTest, RehashStepsAndRehashForComplete) {
  Table table;
  Model model;
  fill(table, model, 3000);
  ASSERT_EQ(table.bucket_count(), 4096u);
  table.reserve(1 << 16);
  ASSERT_TRUE(table.rehashing());
  EXPECT_EQ(table.bucket_count(), 4096u + 65536u);
  size_t calls = 0;
  while (table.rehash_steps(16)) {
    ++calls;
    size_t nodes = 0;
    table.for_each([&](TestNode*) { ++nodes; });
    ASSERT_EQ(nodes, 3000u);
    ASSERT_LT(calls, 4096u / 16);  // each call moves 16 buckets or gives up after 160 empty ones
  }
  EXPECT_GT(calls, 10u);
  EXPECT_EQ(table.bucket_count(), 65536u);
  expect_same(table, model);

  // Shrink back (the load is under 10%) and let the time-bounded driver finish it.
  EXPECT_TRUE(table.resize_if_needed());
  EXPECT_TRUE(table.rehashing());
  while (table.rehash_for(std::chrono::milliseconds(100))) {
  }
  EXPECT_FALSE(table.rehashing());
  EXPECT_EQ(table.bucket_count(), 4096u);
  expect_same(table, model);
}

// The capacity of a fresh array for `count` (at least 2) nodes: 2 to 12 slots in steps of two
// and 16 (the allocator's classes up to 128 bytes), then 2^n - 1 slots after a capacity word.
size_t array_capacity(size_t count) {
  for (size_t capacity : {2, 4, 6, 8, 10, 12, 16}) {
    if (capacity >= count) return capacity;
  }
  size_t capacity = 31;
  while (capacity < count) capacity = 2 * capacity + 1;
  return capacity;
}
size_t array_bytes(size_t capacity) {
  return capacity == 0 ? 0 : (capacity + (capacity > 16 ? 1 : 0)) * sizeof(void*);
}

// The bytes the arrays of `table`'s main array should hold, from its bucket sizes.
template <class T>
size_t expected_array_bytes(const T& table) {
  size_t bytes = 0;
  for (const uint32_t count : table.chain_lengths(0)) {
    if (count >= 2) bytes += array_bytes(array_capacity(count));
  }
  return bytes;
}

TEST_F(HashTableTest, BucketMemoryTracksArrays) {
  Table table;
  Model model;
  EXPECT_EQ(table.bucket_memory(), 0u);
  table.insert(model.add("one"));
  EXPECT_EQ(table.bucket_memory(), Table::kMinBuckets * sizeof(TestNode*));
  fill(table, model, 10'000);
  EXPECT_EQ(table.bucket_count(), 16384u);
  // The bucket words plus the arrays of the buckets that hold two nodes or more, each of the
  // smallest capacity that holds them.
  const size_t arrays = expected_array_bytes(table);
  EXPECT_GT(arrays, 0u);
  EXPECT_EQ(table.bucket_memory(), 16384u * sizeof(void*) + arrays);
  // Load between 0.5 and 1 at rest after growth: at most 16 bytes of bucket words per node,
  // and about 6 more of arrays at load 1.
  EXPECT_LE(table.bucket_memory(), 24 * table.size());
  table.clear([](TestNode*) {});
  EXPECT_EQ(table.bucket_memory(), 0u);
}

// ---------------------------------------------------------------------------------------------
// SCAN

// Runs a full scan with no changes between calls; returns how often each node was visited.
template <class T>
std::unordered_map<TestNode*, int> full_scan(T& table) {
  std::unordered_map<TestNode*, int> visits;
  uint64_t cursor = 0;
  size_t calls = 0;
  do {
    cursor = table.scan(cursor, [&](TestNode* node) { ++visits[node]; });
    EXPECT_LT(++calls, 1u << 20);
  } while (cursor != 0 && calls < (1u << 20));
  return visits;
}

TEST_F(HashTableTest, ScanOfStableTableVisitsEachNodeExactlyOnce) {
  Table table;
  Model model;
  fill(table, model, 777);
  auto visits = full_scan(table);
  EXPECT_EQ(visits.size(), 777u);
  for (const auto& [node, count] : visits) EXPECT_EQ(count, 1) << node->key;

  // Also with a rehash frozen half-way, in both directions.
  table.reserve(4096);
  table.rehash_steps(300);
  ASSERT_TRUE(table.rehashing());
  visits = full_scan(table);
  EXPECT_EQ(visits.size(), 777u);
  for (const auto& [node, count] : visits) EXPECT_EQ(count, 1) << node->key;

  while (table.rehash_steps(1000)) {
  }
  ASSERT_EQ(table.bucket_count(), 4096u);
  table.reserve(16384);
  while (table.rehash_steps(1000)) {
  }
  ASSERT_TRUE(table.resize_if_needed());  // 777 in 16384 is under 10%: shrink to 1024
  table.rehash_steps(100);
  ASSERT_TRUE(table.rehashing());
  EXPECT_EQ(table.bucket_count(), 16384u + 1024u);
  visits = full_scan(table);
  EXPECT_EQ(visits.size(), 777u);
  for (const auto& [node, count] : visits) EXPECT_EQ(count, 1) << node->key;
}

TEST_F(HashTableTest, ScanCallbackMayRemoveTheVisitedNode) {
  Table table;
  Model model;
  fill(table, model, 2000);
  table.reserve(8192);
  table.rehash_steps(200);
  ASSERT_TRUE(table.rehashing());
  // Remove every odd key as it is visited, as active expiry does; look keys up too.
  std::unordered_set<std::string> seen;
  uint64_t cursor = 0;
  do {
    cursor = table.scan(cursor, [&](TestNode* node) {
      seen.insert(node->key);
      EXPECT_EQ(table.find(node->key), node);
      if (std::stoull(node->key.substr(4)) % 2 == 1) {
        EXPECT_TRUE(table.remove(node));
        model.erase(node->key);  // frees it: the scan must not touch it again
      }
    });
  } while (cursor != 0);
  EXPECT_EQ(seen.size(), 2000u);
  EXPECT_EQ(model.size(), 1000u);
  expect_same(table, model);
  // The removals could not shrink or move anything mid-call, but resizing resumes after.
  while (table.rehash_steps(1000)) {
  }
  EXPECT_EQ(table.bucket_count(), 8192u);
  for (uint64_t i = 0; i < 2000; i += 2) {
    table.remove(model.get(key_of(i)));
    model.erase(key_of(i));
  }
  EXPECT_TRUE(table.empty());
}

// The SCAN guarantee under fire: between scan calls other keys come and go in waves big enough
// to grow and shrink the table several times during one scan, with rehashes often in progress
// when scan is called. Every key present throughout must be returned.
class HashTableScanGuaranteeTest : public HashTableTest,
                                   public ::testing::WithParamInterface<int> {};

TEST_P(HashTableScanGuaranteeTest, KeysPresentThroughoutAreAllReturned) {
  std::mt19937_64 rng(GetParam());
  Table table;
  Model model;
  constexpr uint64_t kStable = 400;
  for (uint64_t i = 0; i < kStable; ++i) table.insert(model.add("stable:" + std::to_string(i)));
  std::vector<std::string> churn;  // keys that come and go
  uint64_t next_churn = 0;
  bool growing = true;
  size_t high_water = 3000;

  size_t scans = 0;
  size_t calls = 0;
  size_t calls_while_rehashing = 0;
  size_t grows_mid_scan = 0;
  size_t shrinks_mid_scan = 0;
  for (int round = 0; round < 3; ++round) {
    std::unordered_set<std::string> seen;
    uint64_t cursor = 0;
    do {
      if (table.rehashing()) ++calls_while_rehashing;
      cursor = table.scan(cursor, [&](TestNode* node) { seen.insert(node->key); });
      ++calls;
      ASSERT_LT(calls, 2'000'000u);

      const size_t buckets_before = table.bucket_count();
      const bool was_rehashing = table.rehashing();
      const size_t batch = 1 + rng() % 60;
      for (size_t i = 0; i < batch; ++i) {
        if (growing) {
          const std::string key = "churn:" + std::to_string(next_churn++);
          table.insert(model.add(key));
          churn.push_back(key);
        } else if (!churn.empty()) {
          remove_random(churn, table, model, rng);
          if (HasFatalFailure()) return;
        }
      }
      if (growing && churn.size() >= high_water) {
        growing = false;
      } else if (!growing && churn.empty()) {
        growing = true;
        high_water = 1000 + rng() % 8000;
      }
      if (rng() % 8 == 0) table.rehash_steps(rng() % 5);
      if (!was_rehashing && table.rehashing()) {
        (table.bucket_count() > 2 * buckets_before ? grows_mid_scan : shrinks_mid_scan) += 1;
      }
    } while (cursor != 0);
    ++scans;
    for (uint64_t i = 0; i < kStable; ++i) {
      ASSERT_TRUE(seen.contains("stable:" + std::to_string(i)))
          << "round " << round << " key " << i;
    }
  }
  EXPECT_EQ(scans, 3u);
  EXPECT_GT(grows_mid_scan, 3u);
  EXPECT_GT(shrinks_mid_scan, 3u);
  EXPECT_GT(calls_while_rehashing, 100u);
  ASSERT_EQ(table.size(), model.size());
  table.clear([](TestNode*) {});
}

INSTANTIATE_TEST_SUITE_P(Seeds, HashTableScanGuaranteeTest, ::testing::Values(1, 2, 3, 4, 5, 6));

TEST_F(HashTableTest, ScanCursorCoversEveryBucketOnceThenReturnsZero) {
  // With one node per bucket (colliding traits would defeat this), the number of calls of a
  // quiet full scan equals the bucket count: reverse-binary counting visits each index once.
  Table table;
  Model model;
  fill(table, model, 600);
  ASSERT_EQ(table.bucket_count(), 1024u);
  size_t calls = 0;
  uint64_t cursor = 0;
  std::unordered_set<uint64_t> cursors;
  do {
    EXPECT_TRUE(cursors.insert(cursor).second);
    cursor = table.scan(cursor, [](TestNode*) {});
    ++calls;
  } while (cursor != 0);
  EXPECT_EQ(calls, 1024u);
}

// ---------------------------------------------------------------------------------------------
// Random draws

TEST_F(HashTableTest, RandomNodeReturnsPresentNodesRoughlyUniformly) {
  Table table;
  Model model;
  fill(table, model, 200);  // 256 buckets, load 0.78
  std::mt19937_64 rng(7);
  std::unordered_map<TestNode*, int> counts;
  constexpr int kDrawsPerNode = 200;
  for (int i = 0; i < 200 * kDrawsPerNode; ++i) {
    TestNode* node = table.random_node(rng);
    ASSERT_NE(node, nullptr);
    ASSERT_EQ(model.get(node->key), node);
    ++counts[node];
  }
  ASSERT_EQ(counts.size(), 200u);
  double chi_square = 0;
  for (const auto& [node, count] : counts) {
    const double diff = count - kDrawsPerNode;
    chi_square += diff * diff / kDrawsPerNode;
    EXPECT_GT(count, kDrawsPerNode / 3) << node->key;
    EXPECT_LT(count, kDrawsPerNode * 3) << node->key;
  }
  // 199 degrees of freedom: a uniform draw gives ~199 +- 20. Allow the documented bias against
  // nodes in chains longer than the cap.
  EXPECT_LT(chi_square, 2 * 199.0);
}

TEST_F(HashTableTest, RandomNodeDuringRehashReturnsPresentNodes) {
  Table table;
  Model model;
  fill(table, model, 3000);
  table.reserve(65536);
  table.rehash_steps(1000);
  ASSERT_TRUE(table.rehashing());
  std::mt19937_64 rng(11);
  std::unordered_set<TestNode*> drawn;
  // random_node moves the rehash on one step per call: draw until it completes.
  int draws = 0;
  for (; table.rehashing(); ++draws) {
    TestNode* node = table.random_node(rng);
    ASSERT_EQ(model.get(node->key), node);
    drawn.insert(node);
  }
  EXPECT_GT(draws, 1000);
  EXPECT_GT(drawn.size(), 800u);
}

TEST_F(HashTableTest, SampleReturnsPresentNodesAndCoversAll) {
  Table table;
  Model model;
  fill(table, model, 1000);
  std::mt19937_64 rng(5);
  std::unordered_set<TestNode*> drawn;
  TestNode* out[16];
  for (int i = 0; i < 3000; ++i) {
    const size_t got = table.sample(out, rng);
    ASSERT_EQ(got, 16u);
    for (size_t j = 0; j < got; ++j) {
      ASSERT_EQ(model.get(out[j]->key), out[j]);
      drawn.insert(out[j]);
    }
  }
  EXPECT_EQ(drawn.size(), 1000u);

  // Fewer nodes than asked: all of them.
  Table small;
  Model small_model;
  fill(small, small_model, 3);
  const size_t got = small.sample(out, rng);
  EXPECT_EQ(got, 3u);
  std::unordered_set<TestNode*> distinct(out, out + got);
  EXPECT_EQ(distinct.size(), 3u);
  EXPECT_EQ(small.sample(std::span<TestNode*>(out, 0), rng), 0u);
}

TEST_F(HashTableTest, SampleOnSparseTableIsBoundedButNeverEmpty) {
  Table table;
  Model model;
  fill(table, model, 200);
  table.reserve(1 << 16);  // 200 nodes in 65536 buckets: no operation here shrinks it
  while (table.rehash_steps(1000)) {
  }
  std::mt19937_64 rng(13);
  TestNode* out[16];
  size_t short_samples = 0;
  for (int i = 0; i < 500; ++i) {
    const size_t got = table.sample(out, rng);
    ASSERT_GE(got, 1u);
    ASSERT_LE(got, 16u);
    if (got < 16) ++short_samples;
    for (size_t j = 0; j < got; ++j) ASSERT_EQ(model.get(out[j]->key), out[j]);
  }
  EXPECT_GT(short_samples, 250u);  // 160 visits at 0.3% fill rarely find 16
}

TEST_F(HashTableTest, SampleDuringRehashReturnsPresentNodes) {
  Table table;
  Model model;
  fill(table, model, 2000);
  std::mt19937_64 rng(9);
  TestNode* out[5];
  for (int round = 0; round < 4; ++round) {
    // Alternate a grow and a shrink in progress (the grow leaves the table 1/16 full).
    if (round % 2 == 0) {
      table.reserve(table.size() * 16);
    } else {
      ASSERT_TRUE(table.resize_if_needed());
    }
    ASSERT_TRUE(table.rehashing()) << round;
    for (int i = 0; i < 400 && table.rehashing(); ++i) {
      const size_t got = table.sample(out, rng);
      ASSERT_GT(got, 0u);
      for (size_t j = 0; j < got; ++j) ASSERT_EQ(model.get(out[j]->key), out[j]);
    }
    while (table.rehash_steps(1000)) {
    }
    expect_same(table, model);
  }
}

// ---------------------------------------------------------------------------------------------
// Buckets: one node inline in the bucket word, or a small array of them.

// Keys "g<group>:<n>" hash to <group>: the test decides which keys share a bucket.
struct GroupTraits {
  static std::string_view key(const TestNode* node) { return node->key; }
  static uint64_t hash(std::string_view key) {
    return std::stoull(std::string(key.substr(1, key.find(':') - 1)));
  }
};
using GroupTable = HashTable<TestNode, GroupTraits>;

std::string group_key(uint64_t group, uint64_t n) {
  return "g" + std::to_string(group) + ":" + std::to_string(n);
}

TEST_F(HashTableTest, BucketArraysGrowAndShrinkWithTheirBucket) {
  GroupTable table;
  Model model;
  // Every key hashes to 0: whatever the table's size they all share bucket 0.
  auto finish = [&] {
    while (table.rehash_steps(1000)) {
    }
  };
  table.insert(model.add(group_key(0, 0)));
  auto words = [&] { return table.bucket_count() * sizeof(void*); };
  EXPECT_EQ(table.bucket_memory(), words());  // one node: no array
  // Up to 300 nodes in bucket 0 (past the tagged capacities, to the big array form).
  for (uint64_t n = 1; n < 300; ++n) {
    table.insert(model.add(group_key(0, n)));
    finish();
    const size_t count = n + 1;
    ASSERT_EQ(table.chain_lengths(0)[0], count);
    EXPECT_EQ(table.bucket_memory(), words() + array_bytes(array_capacity(count))) << count;
    EXPECT_EQ(table.find(group_key(0, n)), model.get(group_key(0, n)));
    EXPECT_EQ(table.find(group_key(0, 0)), model.get(group_key(0, 0)));
  }
  expect_same(table, model);
  // Removing in an order that takes nodes from the front, middle and back of the array.
  std::mt19937_64 rng(5);
  table.set_resize_allowed(false);  // no shrink: the array's own shrinking is under test
  // An array moves to the smallest one that holds its nodes once that is at most half its
  // size, and goes when one node is left.
  size_t capacity = array_capacity(300);
  EXPECT_EQ(capacity, 511u);
  while (model.size() > 0) {
    const std::string key = model.random_key(rng);
    ASSERT_EQ(table.remove(key), model.get(key));
    model.erase(key);
    const size_t count = model.size();
    ASSERT_EQ(table.chain_lengths(0)[0], count);
    if (count <= 1) {
      capacity = 0;
    } else if (array_capacity(count) <= capacity / 2) {
      capacity = array_capacity(count);
    }
    EXPECT_EQ(table.bucket_memory(), words() + array_bytes(capacity)) << count;
    for (const std::string& left : model.keys()) ASSERT_EQ(table.find(left), model.get(left));
  }
  EXPECT_EQ(table.bucket_memory(), words());
}

TEST_F(HashTableTest, BucketsOfEverySizeSurviveARehashMidway) {
  GroupTable table;
  Model model;
  // Group g holds g % 7 keys: buckets of 0 to 6 nodes, arrays of every small capacity.
  for (uint64_t group = 0; group < 512; ++group) {
    for (uint64_t n = 0; n < group % 7; ++n) table.insert(model.add(group_key(group, n)));
  }
  while (table.rehash_steps(1000)) {
  }
  expect_same(table, model);
  EXPECT_EQ(table.bucket_memory(), table.bucket_count() * sizeof(void*) +
                                       expected_array_bytes(table));
  // Grow, stop half-way, and check every operation on both arrays.
  const size_t before = table.bucket_count();
  table.reserve(before * 8);
  table.rehash_steps(100);
  ASSERT_TRUE(table.rehashing());
  expect_same(table, model);
  for (const std::string& key : model.keys()) ASSERT_EQ(table.find(key), model.get(key));
  // Removals and insertions land on both sides of the rehash index.
  std::mt19937_64 rng(11);
  for (int i = 0; i < 300; ++i) {
    const std::string key = model.random_key(rng);
    ASSERT_EQ(table.remove(key), model.get(key));
    model.erase(key);
    table.insert(model.add(group_key(rng() % 512, 100 + i)));
  }
  expect_same(table, model);
  while (table.rehash_steps(7)) {
  }
  expect_same(table, model);
  // Removals leave some arrays bigger than they need (one shrinks once half of it would hold
  // its nodes).
  EXPECT_GE(table.bucket_memory(), table.bucket_count() * sizeof(void*) +
                                       expected_array_bytes(table));
  EXPECT_LE(table.bucket_memory(), table.bucket_count() * sizeof(void*) +
                                       4 * expected_array_bytes(table));
  // And a shrink (folding buckets into bigger arrays) half-way.
  while (model.size() > 60) {
    const std::string key = model.random_key(rng);
    table.remove(key);
    model.erase(key);
  }
  while (table.rehash_steps(1000) || table.resize_if_needed()) {
    if (table.rehashing()) {
      expect_same(table, model);
      for (const std::string& key : model.keys()) ASSERT_EQ(table.find(key), model.get(key));
    }
  }
  expect_same(table, model);
  table.clear([](TestNode*) {});
  EXPECT_EQ(table.bucket_memory(), 0u);
}

TEST_F(HashTableTest, ReplacePutsTheNewNodeInTheOldOnesPlace) {
  GroupTable table;
  Model model;
  std::vector<std::unique_ptr<TestNode>> replacements;
  for (uint64_t group = 0; group < 64; ++group) {
    for (uint64_t n = 0; n < 1 + group % 4; ++n) table.insert(model.add(group_key(group, n)));
  }
  table.reserve(1024);
  table.rehash_steps(20);
  ASSERT_TRUE(table.rehashing());
  std::unordered_map<std::string, TestNode*> current;
  for (const std::string& key : model.keys()) current[key] = model.get(key);
  for (const std::string& key : model.keys()) {
    replacements.push_back(std::make_unique<TestNode>(key));
    ASSERT_TRUE(table.replace(current[key], replacements.back().get()));
    current[key] = replacements.back().get();
    EXPECT_FALSE(table.replace(model.get(key), model.get(key)));  // no longer in the table
  }
  for (const auto& [key, node] : current) EXPECT_EQ(table.find(key), node);
  while (table.rehash_steps(1000)) {
  }
  for (const auto& [key, node] : current) EXPECT_EQ(table.find(key), node);
  table.clear([](TestNode*) {});
}

// SCAN over crowded buckets while the table grows and shrinks between calls, with the visited
// node removed (or replaced) from inside the callback: every node present for the whole scan
// comes back.
TEST_F(HashTableTest, ScanOverArraysAcrossResizesReturnsEveryStableNode) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 rng(seed);
    GroupTable table;
    Model model;
    std::vector<std::unique_ptr<TestNode>> replacements;
    for (uint64_t i = 0; i < 600; ++i) table.insert(model.add(group_key(i / 3, i)));
    std::unordered_set<std::string> stable(model.keys().begin(), model.keys().end());
    std::unordered_set<std::string> seen;
    std::vector<std::string> churn;
    uint64_t next = 1'000'000;
    bool growing = true;
    uint64_t cursor = 0;
    size_t calls = 0;
    do {
      cursor = table.scan(cursor, [&](TestNode* node) {
        seen.insert(node->key);
        if (!stable.contains(node->key) && rng() % 2 == 0) {
          // A churn key removed as it is visited (active expiry).
          ASSERT_TRUE(table.remove(node));
          churn.erase(std::find(churn.begin(), churn.end(), node->key));
          model.erase(node->key);
        } else if (stable.contains(node->key) && rng() % 8 == 0) {
          // A stable key moved to a new allocation as it is visited (a TTL set in between).
          replacements.push_back(std::make_unique<TestNode>(node->key));
          ASSERT_TRUE(table.replace(node, replacements.back().get()));
        }
      });
      ASSERT_LT(++calls, 1'000'000u);
      for (int i = 0; i < 40; ++i) {
        if (growing) {
          const uint64_t id = next++;
          const std::string key = group_key(rng() % 4000, id);
          table.insert(model.add(key));
          churn.push_back(key);
          if (churn.size() > 6000) growing = false;
        } else if (!churn.empty()) {
          remove_random(churn, table, model, rng);
          if (HasFatalFailure()) return;
        } else {
          growing = true;
        }
      }
      if (rng() % 4 == 0) table.rehash_steps(rng() % 8);
    } while (cursor != 0);
    for (const std::string& key : stable) EXPECT_TRUE(seen.contains(key)) << key;
    table.clear([](TestNode*) {});
  }
}

TEST_F(HashTableTest, RandomNodeIsUniformOverCrowdedBuckets) {
  GroupTable table;
  Model model;
  // 40 keys alone in their buckets and 40 packed 8 to a bucket.
  for (uint64_t i = 0; i < 40; ++i) table.insert(model.add(group_key(i, 0)));
  for (uint64_t i = 0; i < 40; ++i) table.insert(model.add(group_key(1000 + i / 8 * 128, i)));
  while (table.rehash_steps(1000)) {
  }
  std::mt19937_64 rng(3);
  size_t alone = 0;
  constexpr int kDraws = 40'000;
  for (int i = 0; i < kDraws; ++i) {
    TestNode* node = table.random_node(rng);
    ASSERT_EQ(model.get(node->key), node);
    if (node->key.ends_with(":0") && GroupTraits::hash(node->key) < 40) ++alone;
  }
  // Half the keys are alone: about half the draws (3 standard deviations is 1.5%).
  EXPECT_NEAR(static_cast<double>(alone) / kDraws, 0.5, 0.03);
  table.clear([](TestNode*) {});
}

// ---------------------------------------------------------------------------------------------
// Several nodes per bucket (Traits::kMaxLoad) and the hash bits kept in the node words

TEST_F(HashTableTest, GrowsAtTheTraitsLoadAndShrinksBelowItsTenth) {
  Load8Table table;
  Model model;
  // Eight nodes per bucket fit before the first growth; the next one doubles the buckets.
  for (size_t i = 0; i < 8 * Load8Table::kMinBuckets; ++i) table.insert(model.add(key_of(i)));
  EXPECT_EQ(table.bucket_count(), Load8Table::kMinBuckets);
  EXPECT_FALSE(table.rehashing());
  table.insert(model.add(key_of(8 * Load8Table::kMinBuckets)));
  ASSERT_TRUE(table.rehashing());
  while (table.rehash_steps(100)) {
  }
  EXPECT_EQ(table.bucket_count(), 2 * Load8Table::kMinBuckets);
  // 10,000 nodes: between 4 and 8 a bucket.
  for (size_t i = model.size(); i < 10'000; ++i) table.insert(model.add(key_of(i)));
  while (table.rehash_steps(1000)) {
  }
  EXPECT_EQ(table.bucket_count(), 2048u);
  EXPECT_EQ(table.bucket_memory(), 2048u * sizeof(void*) + expected_array_bytes(table));
  // About 10 bytes a node at load 4.9 (a Poisson model of the bucket sizes gives 1.6 of words
  // and 8.7 of arrays), where a load-1 table pays about 14.
  EXPECT_LE(table.bucket_memory(), 11 * table.size());
  expect_same(table, model);
  // reserve() sizes for the same load.
  Load8Table reserved;
  reserved.reserve(10'000);
  EXPECT_EQ(reserved.bucket_count(), 2048u);
  // A shrink starts below a tenth of the load that grows, and leaves room below it.
  std::mt19937_64 rng(3);
  // Below 2048 * 8 / 10 = 1638.4 nodes: stop one above.
  while (model.size() > 1639) {
    const std::string key = model.random_key(rng);
    ASSERT_EQ(table.remove(key), model.get(key));
    model.erase(key);
  }
  ASSERT_FALSE(table.rehashing());
  const std::string key = model.random_key(rng);
  ASSERT_EQ(table.remove(key), model.get(key));
  model.erase(key);
  ASSERT_TRUE(table.rehashing());
  while (table.rehash_steps(1000)) {
  }
  EXPECT_EQ(table.bucket_count(), std::bit_ceil((model.size() + 1 + 7) / 8));
  expect_same(table, model);
  table.clear([](TestNode*) {});
}

// Keys "g<group>:<n>" hash to <group> in the low bits and to n in the top four: keys of one
// group share a bucket and differ in the hash bits the node words keep.
struct TaggedGroupTraits {
  static std::string_view key(const TestNode* node) { return node->key; }
  static uint64_t hash(std::string_view key) {
    const size_t colon = key.find(':');
    const uint64_t group = std::stoull(std::string(key.substr(1, colon - 1)));
    const uint64_t n = std::stoull(std::string(key.substr(colon + 1)));
    return group | (n << 60);
  }
};

TEST_F(HashTableTest, KeysOfOneBucketWithEveryHashTagAreFoundReplacedAndRemoved) {
  HashTable<TestNode, TaggedGroupTraits> table;
  Model model;
  // 40 keys in bucket 0: each tag value five times over, so equal tags still compare keys.
  for (uint64_t n = 0; n < 40; ++n) table.insert(model.add(group_key(0, n)));
  for (uint64_t n = 0; n < 40; ++n) {
    EXPECT_EQ(table.find(group_key(0, n)), model.get(group_key(0, n))) << n;
  }
  // Absent keys with every tag, in the same bucket.
  for (uint64_t n = 40; n < 56; ++n) EXPECT_EQ(table.find(group_key(0, n)), nullptr) << n;
  // A replacement keeps its place and its tag.
  TestNode* old = model.get(group_key(0, 13));
  auto moved = std::make_unique<TestNode>(old->key);
  ASSERT_TRUE(table.replace(old, moved.get()));
  EXPECT_EQ(table.find(group_key(0, 13)), moved.get());
  ASSERT_TRUE(table.remove(moved.get()));
  EXPECT_EQ(table.find(group_key(0, 13)), nullptr);
  table.insert(old);
  // Removing down to one node, which moves back into the bucket word with its tag.
  std::mt19937_64 rng(9);
  while (model.size() > 1) {
    const std::string key = model.random_key(rng);
    ASSERT_EQ(table.remove(key), model.get(key));
    model.erase(key);
    for (const std::string& left : model.keys()) ASSERT_EQ(table.find(left), model.get(left));
  }
  const std::string last = model.keys().front();
  EXPECT_EQ(table.find(last), model.get(last));
  EXPECT_EQ(table.bucket_memory(), table.bucket_count() * sizeof(void*));
  expect_same(table, model);
  table.clear([](TestNode*) {});
}

}  // namespace
}  // namespace keywarden
