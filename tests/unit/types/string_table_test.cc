// StringTable: lookup, insertion, erasure with the payload moved out, growth and shrink, copies,
// iteration, random choice, and the SCAN guarantee of the reverse-binary cursor while the table
// grows and shrinks between steps.
#include "types/string_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace keywarden {
namespace {

std::set<std::string> keys_of(const StringSet& set) { return {set.begin(), set.end()}; }

TEST(StringTable, EmptyTable) {
  StringSet set;
  EXPECT_TRUE(set.empty());
  EXPECT_EQ(set.size(), 0u);
  EXPECT_EQ(set.bucket_count(), 0u);
  EXPECT_EQ(set.find("a"), nullptr);
  EXPECT_FALSE(set.erase("a"));
  EXPECT_TRUE(set.begin() == set.end());
  int visits = 0;
  EXPECT_EQ(set.scan(0, [&](const std::string&) { ++visits; }), 0u);
  EXPECT_EQ(visits, 0);
  std::mt19937_64 rng(1);
  EXPECT_TRUE(set.random_distinct(3, rng).empty());
}

TEST(StringTable, InsertFindErase) {
  StringSet set;
  EXPECT_TRUE(set.insert(std::string("a")).second);
  EXPECT_FALSE(set.insert(std::string("a")).second);
  EXPECT_TRUE(set.insert(std::string("")).second);
  EXPECT_TRUE(set.insert(std::string("\0z", 2)).second);
  EXPECT_EQ(set.size(), 3u);
  EXPECT_EQ(set.bucket_count(), 4u);
  EXPECT_TRUE(set.contains(""));
  EXPECT_TRUE(set.contains(std::string("\0z", 2)));
  EXPECT_FALSE(set.contains("z"));
  EXPECT_EQ(keys_of(set), (std::set<std::string>{"", "a", std::string("\0z", 2)}));
  std::string removed;
  EXPECT_TRUE(set.erase("a", &removed));
  EXPECT_EQ(removed, "a");
  EXPECT_FALSE(set.erase("a"));
  EXPECT_EQ(set.size(), 2u);
  set.clear();
  EXPECT_TRUE(set.empty());
  EXPECT_TRUE(set.insert(std::string("again")).second);
}

TEST(StringTable, PayloadsAreKeptAndMovedOut) {
  StringMap<double> scores;
  auto [element, inserted] = scores.insert({"m", 1.5});
  EXPECT_TRUE(inserted);
  EXPECT_EQ(element->value, 1.5);
  // A second insert leaves the present payload alone and points at it.
  auto [same, again] = scores.insert({"m", 9.0});
  EXPECT_FALSE(again);
  EXPECT_EQ(same, element);
  EXPECT_EQ(same->value, 1.5);
  scores.find("m")->value = 2.5;
  EXPECT_EQ(scores.find("m")->value, 2.5);
  KeyedElement<double> out;
  EXPECT_TRUE(scores.erase("m", &out));
  EXPECT_EQ(out.key, "m");
  EXPECT_EQ(out.value, 2.5);

  StringMap<std::string> map;
  map.insert_new({"f", std::string(100, 'v')});
  EXPECT_EQ(map.find("f")->value, std::string(100, 'v'));
  static_assert(sizeof(KeyedElement<>) == sizeof(std::string), "no room for an empty payload");
}

TEST(StringTable, GrowsAndShrinksKeepingEveryElementAtStableAddresses) {
  StringMap<int> table;
  std::map<std::string, int> model;
  std::mt19937_64 rng(7);
  for (int round = 0; round < 30'000; ++round) {
    std::string key = "k" + std::to_string(rng() % 4000);
    if (rng() % 3 == 0) {
      EXPECT_EQ(table.erase(key), model.erase(key) == 1);
    } else {
      auto [element, inserted] = table.insert({key, round});
      EXPECT_EQ(inserted, model.count(key) == 0);
      element->value = round;
      model[key] = round;
    }
    // Load factor at most 1, never below 4 buckets once allocated, power of two.
    ASSERT_LE(table.size(), table.bucket_count());
    ASSERT_TRUE(table.bucket_count() == 0 || table.bucket_count() >= 4u);
    ASSERT_EQ(table.bucket_count() & (table.bucket_count() - 1), 0u);
  }
  EXPECT_EQ(table.size(), model.size());
  std::map<std::string, int> walked;
  for (const auto& element : table) walked[element.key] = element.value;
  EXPECT_EQ(walked, model);

  const KeyedElement<int>* survivor = table.find(model.begin()->first);
  const std::string survivor_key = model.begin()->first;
  for (const auto& [key, value] : model) {
    if (key != survivor_key) table.erase(key);
  }
  EXPECT_EQ(table.size(), 1u);
  EXPECT_LE(table.bucket_count(), 8u);  // shrank until one bucket in ten is used
  EXPECT_EQ(table.find(survivor_key), survivor);  // the node moved buckets, not memory
}

TEST(StringTable, CopiesAreDeepAndIterateInTheSameOrder) {
  StringMap<std::string> table;
  for (int i = 0; i < 100; ++i) table.insert({"k" + std::to_string(i), std::to_string(i)});
  StringMap<std::string> copy(table);
  std::vector<std::string> a, b;
  for (const auto& e : table) a.push_back(e.key);
  for (const auto& e : copy) b.push_back(e.key);
  EXPECT_EQ(a, b);
  copy.find("k1")->value = "changed";
  EXPECT_EQ(table.find("k1")->value, "1");
  StringMap<std::string> moved(std::move(copy));
  EXPECT_EQ(moved.size(), 100u);
  EXPECT_EQ(moved.find("k1")->value, "changed");
  copy = moved;
  EXPECT_EQ(copy.size(), 100u);
  moved = std::move(table);
  EXPECT_EQ(moved.find("k1")->value, "1");
  EXPECT_GT(moved.structure_bytes(), 100 * sizeof(void*));
}

TEST(StringTable, RandomChoiceCoversEveryElement) {
  std::mt19937_64 rng(42);
  StringSet set;
  for (int i = 0; i < 20; ++i) set.insert("m" + std::to_string(i));
  std::map<std::string, int> hits;
  for (int i = 0; i < 5000; ++i) ++hits[set.random(rng)];
  EXPECT_EQ(hits.size(), 20u);
  for (size_t count : {0u, 1u, 5u, 7u, 19u, 20u, 25u}) {
    std::vector<const std::string*> chosen = set.random_distinct(count, rng);
    EXPECT_EQ(chosen.size(), std::min<size_t>(count, 20));
    std::set<const std::string*> distinct(chosen.begin(), chosen.end());
    EXPECT_EQ(distinct.size(), chosen.size());
    for (const std::string* member : chosen) EXPECT_TRUE(set.contains(*member));
  }
}

// Every element present from the first step to the last is returned, however the table is
// resized between steps.
TEST(StringTable, ScanReturnsEveryElementPresentThroughoutAcrossResizes) {
  for (int variant = 0; variant < 4; ++variant) {
    StringSet set;
    for (int i = 0; i < 1000; ++i) set.insert("stay" + std::to_string(i));
    std::set<std::string> seen;
    uint64_t cursor = 0;
    int step = 0;
    do {
      cursor = set.scan(cursor, [&](const std::string& key) { seen.insert(key); });
      ++step;
      if (variant == 0 && step < 100) {  // grows by several doublings during the scan
        for (int i = 0; i < 40; ++i) set.insert("grow" + std::to_string(step * 40 + i));
      } else if (variant == 1 && step == 5) {  // grows a lot, then shrinks back
        for (int i = 0; i < 5000; ++i) set.insert("tmp" + std::to_string(i));
      } else if (variant == 1 && step == 50) {
        for (int i = 0; i < 5000; ++i) set.erase("tmp" + std::to_string(i));
      } else if (variant == 2 && step % 7 == 0) {  // churn
        set.insert("churn" + std::to_string(step));
        set.erase("churn" + std::to_string(step - 7));
      } else if (variant == 3 && step == 3) {  // starts big, shrinks below the survivors' need
        for (int i = 0; i < 900; ++i) set.erase("stay" + std::to_string(i));
      }
      ASSERT_LT(step, 1'000'000) << "scan does not terminate";
    } while (cursor != 0);
    const int first = variant == 3 ? 900 : 0;
    for (int i = first; i < 1000; ++i) {
      EXPECT_TRUE(seen.count("stay" + std::to_string(i))) << "variant " << variant << " lost " << i;
    }
  }
}

// Without resizes a full scan returns every element exactly once, in bucket-reversed order.
TEST(StringTable, ScanWithoutChangesReturnsEachElementOnce) {
  StringSet set;
  for (int i = 0; i < 777; ++i) set.insert(std::to_string(i));
  std::multiset<std::string> seen;
  uint64_t cursor = 0;
  size_t steps = 0;
  do {
    cursor = set.scan(cursor, [&](const std::string& key) { seen.insert(key); });
    ++steps;
  } while (cursor != 0);
  EXPECT_EQ(steps, set.bucket_count());
  EXPECT_EQ(seen.size(), 777u);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 777u);
}

}  // namespace
}  // namespace keywarden
