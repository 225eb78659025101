// HashValue: both encodings, the conversion thresholds Redis 7.0 uses, deep copies, random
// selection, and the SCAN guarantee of the table's reverse-binary cursor across resizes.
#include "types/hash_value.h"

#include <gtest/gtest.h>

#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "types/value.h"

namespace keywarden {
namespace {

std::vector<std::pair<std::string, std::string>> pairs_of(const HashValue& hash) {
  std::vector<std::pair<std::string, std::string>> out;
  hash.for_each([&](std::string_view f, std::string_view v) {
    out.emplace_back(std::string(f), std::string(v));
  });
  return out;
}

// Every field an iteration from cursor 0 returns, calling `between` after each step.
template <typename Fn>
std::set<std::string> scan_all(const HashValue& hash, Fn&& between) {
  std::set<std::string> seen;
  uint64_t cursor = 0;
  int steps = 0;
  do {
    cursor = hash.scan(cursor,
                       [&](std::string_view f, std::string_view) { seen.insert(std::string(f)); });
    between();
    EXPECT_LT(++steps, 1'000'000) << "scan does not terminate";
  } while (cursor != 0);
  return seen;
}

TEST(HashValue, ListpackKeepsInsertionOrder) {
  HashValue hash;
  HashLimits limits;
  EXPECT_TRUE(hash.is_listpack());
  EXPECT_TRUE(hash.empty());
  EXPECT_TRUE(hash.set("b", "1", limits));
  EXPECT_TRUE(hash.set("a", "2", limits));
  EXPECT_TRUE(hash.set("c", "3", limits));
  EXPECT_FALSE(hash.set("a", "22", limits));  // an update stays in place
  EXPECT_EQ(hash.size(), 3u);
  using P = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(pairs_of(hash), (P{{"b", "1"}, {"a", "22"}, {"c", "3"}}));
  EXPECT_TRUE(hash.remove("b"));
  EXPECT_FALSE(hash.remove("b"));
  EXPECT_TRUE(hash.set("b", "4", limits));
  EXPECT_EQ(pairs_of(hash), (P{{"a", "22"}, {"c", "3"}, {"b", "4"}}));
  ASSERT_TRUE(hash.find("c").has_value());
  EXPECT_EQ(*hash.find("c"), "3");
  EXPECT_FALSE(hash.find("zz").has_value());
  EXPECT_TRUE(hash.set("", std::string("\0x", 2), limits));
  EXPECT_EQ(*hash.find(""), std::string("\0x", 2));
  EXPECT_TRUE(hash.is_listpack());
}

TEST(HashValue, ConvertsWhenAFieldOrValueIsTooLong) {
  HashLimits limits;  // 512 entries, 64 bytes
  HashValue a;
  a.set("f", std::string(64, 'x'), limits);
  a.set(std::string(64, 'k'), "v", limits);
  EXPECT_TRUE(a.is_listpack());
  a.set("g", std::string(65, 'x'), limits);
  EXPECT_FALSE(a.is_listpack());
  EXPECT_EQ(a.size(), 3u);
  EXPECT_EQ(*a.find(std::string(64, 'k')), "v");

  HashValue b;
  b.set(std::string(65, 'k'), "v", limits);
  EXPECT_FALSE(b.is_listpack());
  // Never converts back, even once the long value is gone.
  b.remove(std::string(65, 'k'));
  b.set("f", "v", limits);
  EXPECT_FALSE(b.is_listpack());
}

TEST(HashValue, ConvertsPastTheEntryLimit) {
  HashLimits limits;
  HashValue hash;
  for (int i = 0; i < 512; ++i) hash.set("f" + std::to_string(i), std::to_string(i), limits);
  EXPECT_TRUE(hash.is_listpack());
  EXPECT_FALSE(hash.set("f0", "again", limits));  // an update adds no entry
  EXPECT_TRUE(hash.is_listpack());
  hash.set("f512", "x", limits);
  EXPECT_FALSE(hash.is_listpack());
  EXPECT_EQ(hash.size(), 513u);
  for (int i = 1; i < 512; ++i) EXPECT_EQ(*hash.find("f" + std::to_string(i)), std::to_string(i));
  EXPECT_EQ(*hash.find("f0"), "again");

  HashLimits tiny{2, 64};
  HashValue small;
  small.set("a", "1", tiny);
  small.set("b", "2", tiny);
  EXPECT_TRUE(small.is_listpack());
  small.set("c", "3", tiny);
  EXPECT_FALSE(small.is_listpack());
  HashLimits none{0, 0};
  HashValue zero;
  zero.set("", "", none);  // zero-length strings fit, but no entry does
  EXPECT_FALSE(zero.is_listpack());
}

TEST(HashValue, TableGrowsAndShrinksKeepingEveryField) {
  HashLimits limits{0, 64};
  HashValue hash;
  std::map<std::string, std::string> model;
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20'000; ++round) {
    std::string field = "f" + std::to_string(rng() % 3000);
    if (rng() % 3 == 0) {
      EXPECT_EQ(hash.remove(field), model.erase(field) == 1);
    } else {
      std::string value = std::to_string(round);
      EXPECT_EQ(hash.set(field, value, limits), model.count(field) == 0);
      model[field] = value;
    }
  }
  EXPECT_EQ(hash.size(), model.size());
  for (const auto& [field, value] : model) EXPECT_EQ(*hash.find(field), value);
  std::map<std::string, std::string> walked;
  hash.for_each(
      [&](std::string_view f, std::string_view v) { walked[std::string(f)] = std::string(v); });
  EXPECT_EQ(walked, model);
  // Delete nearly everything: the table shrinks and still finds the survivors.
  for (const auto& [field, value] : model) {
    if (field != "f1") hash.remove(field);
  }
  if (model.count("f1")) {
    EXPECT_EQ(hash.size(), 1u);
    EXPECT_EQ(*hash.find("f1"), model["f1"]);
  }
}

TEST(HashValue, ListpackScanReturnsEverythingAtOnce) {
  HashLimits limits;
  HashValue hash;
  for (int i = 0; i < 100; ++i) hash.set("f" + std::to_string(i), "v", limits);
  std::vector<std::string> seen;
  EXPECT_EQ(
      hash.scan(0, [&](std::string_view f, std::string_view) { seen.push_back(std::string(f)); }),
      0u);
  EXPECT_EQ(seen.size(), 100u);
}

TEST(HashValue, ScanReturnsEveryFieldPresentThroughoutAcrossResizes) {
  HashLimits limits{0, 64};
  for (int variant = 0; variant < 3; ++variant) {
    HashValue hash;
    for (int i = 0; i < 1000; ++i) hash.set("stay" + std::to_string(i), "v", limits);
    int step = 0;
    std::set<std::string> seen = scan_all(hash, [&] {
      ++step;
      if (variant == 0 && step < 100) {  // grow by several doublings during the scan
        for (int i = 0; i < 40; ++i) hash.set("grow" + std::to_string(step * 40 + i), "v", limits);
      } else if (variant == 1 && step == 5) {  // add then remove many: grow, then shrink
        for (int i = 0; i < 5000; ++i) hash.set("tmp" + std::to_string(i), "v", limits);
      } else if (variant == 1 && step == 50) {
        for (int i = 0; i < 5000; ++i) hash.remove("tmp" + std::to_string(i));
      } else if (variant == 2 && step % 7 == 0) {  // churn
        hash.set("churn" + std::to_string(step), "v", limits);
        hash.remove("churn" + std::to_string(step - 7));
      }
    });
    for (int i = 0; i < 1000; ++i) {
      EXPECT_TRUE(seen.count("stay" + std::to_string(i))) << "variant " << variant << " lost " << i;
    }
  }
}

TEST(HashValue, RandomSelection) {
  std::mt19937_64 rng(42);
  for (HashLimits limits : {HashLimits{}, HashLimits{0, 64}}) {
    HashValue hash;
    for (int i = 0; i < 10; ++i) hash.set("f" + std::to_string(i), "v" + std::to_string(i), limits);
    std::map<std::string, int> hits;
    for (int i = 0; i < 5000; ++i) {
      const HashValue::PairView pair = hash.random_pair(rng);
      EXPECT_EQ("v" + std::string(pair.field.substr(1)), pair.value);
      ++hits[std::string(pair.field)];
    }
    EXPECT_EQ(hits.size(), 10u);  // every field turns up
    for (size_t count : {1u, 3u, 4u, 9u}) {
      std::vector<HashValue::PairView> chosen = hash.random_distinct(count, rng);
      EXPECT_EQ(chosen.size(), count);
      std::set<std::string> distinct;
      for (const HashValue::PairView& pair : chosen) {
        EXPECT_EQ("v" + std::string(pair.field.substr(1)), pair.value);
        distinct.insert(std::string(pair.field));
      }
      EXPECT_EQ(distinct.size(), count);
    }
  }
}

TEST(HashValue, ValueCopiesDeeplyAndReportsEncoding) {
  HashLimits limits;
  Value value = Value::make_hash();
  EXPECT_EQ(value.type(), ValueType::kHash);
  EXPECT_EQ(value_type_name(value.type()), "hash");
  EXPECT_EQ(encoding_name(value.encoding()), "listpack");
  value.as<HashValue>().set("a", "1", limits);
  Value copy = value;
  copy.as<HashValue>().set("a", "2", limits);
  EXPECT_EQ(*value.as<HashValue>().find("a"), "1");
  value.as<HashValue>().set("long", std::string(100, 'x'), limits);
  EXPECT_EQ(encoding_name(value.encoding()), "hashtable");
  Value table_copy(value);
  value.as<HashValue>().set("a", "changed", limits);
  EXPECT_EQ(encoding_name(table_copy.encoding()), "hashtable");
  EXPECT_EQ(*table_copy.as<HashValue>().find("a"), "1");
  EXPECT_EQ(table_copy.as<HashValue>().size(), 2u);
  Value moved = std::move(table_copy);
  EXPECT_EQ(moved.as<HashValue>().size(), 2u);
  // Becoming a string drops the hash.
  moved.assign_string("text");
  EXPECT_EQ(moved.type(), ValueType::kString);
  EXPECT_EQ(encoding_name(moved.encoding()), "embstr");
  EXPECT_GT(value.payload_bytes(), 100u);
}

// The flat listpack: lengths around the LEB128 boundaries (1, 2 and 3 bytes), empty strings,
// updates that change a value's length-prefix size, and deletions in the middle.
TEST(HashValue, FlatListpackLengthsUpdatesAndDeletions) {
  const HashLimits limits{512, 20000};
  HashValue hash;
  std::vector<std::pair<std::string, std::string>> model;
  const size_t sizes[] = {0, 1, 127, 128, 255, 256, 16383, 16384, 0};
  for (size_t i = 0; i < std::size(sizes); ++i) {
    std::string field = "f" + std::to_string(i) + std::string(sizes[i], 'x');
    std::string value(sizes[std::size(sizes) - 1 - i], static_cast<char>('a' + i));
    EXPECT_TRUE(hash.set(field, value, limits));
    model.emplace_back(field, value);
  }
  EXPECT_TRUE(hash.set("", "", limits));
  model.emplace_back("", "");
  EXPECT_TRUE(hash.is_listpack());
  EXPECT_EQ(pairs_of(hash), model);
  // Grow and shrink values across the 1/2/3-byte length prefixes, in place.
  for (size_t size : {16384u, 0u, 128u, 127u, 16383u, 5u}) {
    model[3].second.assign(size, 'u');
    EXPECT_FALSE(hash.set(model[3].first, model[3].second, limits));
    EXPECT_EQ(pairs_of(hash), model);
  }
  EXPECT_EQ(*hash.find(""), "");
  // Deletions in the middle close the gap and keep the order of the rest.
  for (size_t at : {4u, 1u, 5u}) {
    EXPECT_TRUE(hash.remove(model[at].first));
    model.erase(model.begin() + static_cast<ptrdiff_t>(at));
    EXPECT_EQ(pairs_of(hash), model);
    EXPECT_EQ(hash.size(), model.size());
  }
  for (const auto& [field, value] : model) EXPECT_EQ(*hash.find(field), value);
  // Still the same pairs, in the same order, after conversion to the table.
  hash.convert_to_table();
  EXPECT_FALSE(hash.is_listpack());
  EXPECT_EQ(hash.size(), model.size());
  for (const auto& [field, value] : model) EXPECT_EQ(*hash.find(field), value);
}

TEST(HashValue, FlatListpackAtTheEntryLimitAndItsMemory) {
  const HashLimits limits{128, 64};
  HashValue hash;
  for (int i = 0; i < 128; ++i) hash.set("field" + std::to_string(i), std::string(24, 'v'), limits);
  EXPECT_TRUE(hash.is_listpack());
  EXPECT_EQ(hash.size(), 128u);
  // One buffer: the records and their one-byte length prefixes, nothing per pair.
  EXPECT_LT(hash.payload_bytes(), sizeof(HashValue) + 2 * 128 * (2 + 8 + 24));
  std::mt19937_64 rng(7);
  EXPECT_EQ(hash.random_distinct(127, rng).size(), 127u);
  EXPECT_TRUE(hash.set("field128", "v", limits));
  EXPECT_FALSE(hash.is_listpack());
  EXPECT_EQ(*hash.find("field0"), std::string(24, 'v'));
  EXPECT_EQ(*hash.find("field128"), "v");
}

}  // namespace
}  // namespace keywarden
