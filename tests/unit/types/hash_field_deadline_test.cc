// HashValue's field deadlines in both encodings: set, read, clear, drop on overwrite (unless
// kept), removal of due fields in deadline order, the earliest deadline, conversion from the
// listpack to the table keeping deadlines, copies that own their own heap, and a randomized
// comparison of the table's heap against a plain map.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "types/hash_value.h"

namespace keywarden {
namespace {

HashLimits listpack_limits() { return HashLimits{}; }
HashLimits table_limits() { return HashLimits{0, 0}; }

class FieldDeadlines : public ::testing::TestWithParam<bool> {
 protected:
  HashLimits limits() const { return GetParam() ? table_limits() : listpack_limits(); }
};

TEST_P(FieldDeadlines, SetReadClear) {
  HashValue hash;
  hash.set("a", "1", limits());
  hash.set("b", "2", limits());
  EXPECT_EQ(hash.is_listpack(), !GetParam());
  EXPECT_EQ(hash.field_deadline("a"), kNoFieldDeadline);
  EXPECT_EQ(hash.earliest_deadline(), INT64_MAX);
  EXPECT_FALSE(hash.set_field_deadline("zz", 100));
  EXPECT_TRUE(hash.set_field_deadline("a", 500));
  EXPECT_TRUE(hash.set_field_deadline("b", 300));
  EXPECT_EQ(hash.volatile_count(), 2u);
  EXPECT_EQ(hash.field_deadline("a"), 500);
  EXPECT_EQ(hash.earliest_deadline(), 300);
  EXPECT_TRUE(hash.set_field_deadline("b", kNoFieldDeadline));
  EXPECT_EQ(hash.earliest_deadline(), 500);
  EXPECT_EQ(hash.volatile_count(), 1u);
  // An overwrite drops the deadline unless it is kept.
  hash.set("a", "x", limits(), /*keep_deadline=*/true);
  EXPECT_EQ(hash.field_deadline("a"), 500);
  hash.set("a", "y", limits());
  EXPECT_EQ(hash.field_deadline("a"), kNoFieldDeadline);
  EXPECT_EQ(hash.volatile_count(), 0u);
  EXPECT_EQ(hash.earliest_deadline(), INT64_MAX);
}

// The table's heap packs a deadline into 48 bits: the extremes a loader may store come back
// whole, and order holds across the 32-bit boundary of the packing.
TEST_P(FieldDeadlines, ExtremeDeadlinesRoundTrip) {
  HashValue hash;
  const std::vector<int64_t> deadlines = {kMaxStoredFieldDeadlineMs, 0, kMaxFieldDeadlineMs,
                                          (int64_t{1} << 32) - 1, int64_t{1} << 32, 1};
  for (size_t i = 0; i < deadlines.size(); ++i) {
    const std::string field = "f" + std::to_string(i);
    hash.set(field, "v", limits());
    EXPECT_TRUE(hash.set_field_deadline(field, deadlines[i]));
  }
  for (size_t i = 0; i < deadlines.size(); ++i) {
    EXPECT_EQ(hash.field_deadline("f" + std::to_string(i)), deadlines[i]) << i;
  }
  EXPECT_EQ(hash.earliest_deadline(), 0);
  std::vector<std::string> order;
  hash.remove_due(INT64_MAX, SIZE_MAX, [&](std::string_view field) { order.emplace_back(field); });
  if (GetParam()) {  // the table removes in deadline order
    EXPECT_EQ(order, (std::vector<std::string>{"f1", "f5", "f3", "f4", "f2", "f0"}));
  } else {
    EXPECT_EQ(order.size(), deadlines.size());
  }
  EXPECT_TRUE(hash.empty());
}

TEST_P(FieldDeadlines, RemoveDueInDeadlineOrderWithLimit) {
  HashValue hash;
  for (int i = 0; i < 10; ++i) hash.set("f" + std::to_string(i), "v", limits());
  for (int i = 0; i < 10; ++i) hash.set_field_deadline("f" + std::to_string(i), 1000 - 10 * i);
  hash.set("plain", "v", limits());
  std::vector<std::string> removed;
  // Due before 960: f5 (950) … f9 (910); at most 3 now.
  EXPECT_EQ(hash.remove_due(960, 3, [&](std::string_view f) { removed.emplace_back(f); }), 3u);
  EXPECT_EQ(hash.remove_due(960, 100, [&](std::string_view f) { removed.emplace_back(f); }), 2u);
  std::sort(removed.begin(), removed.end());
  EXPECT_EQ(removed, (std::vector<std::string>{"f5", "f6", "f7", "f8", "f9"}));
  EXPECT_EQ(hash.size(), 6u);
  EXPECT_EQ(hash.earliest_deadline(), 960);
  // A deadline equal to now is not due.
  EXPECT_EQ(hash.remove_due(960, 100, [](std::string_view) {}), 0u);
  EXPECT_FALSE(hash.find("f5").has_value());
  EXPECT_TRUE(hash.find("f4").has_value());
  EXPECT_TRUE(hash.remove("f4"));
  EXPECT_EQ(hash.earliest_deadline(), 970);
  EXPECT_EQ(hash.remove_due(INT64_MAX, 100, [](std::string_view) {}), 4u);
  EXPECT_EQ(hash.size(), 1u);
  EXPECT_EQ(hash.volatile_count(), 0u);
}

TEST_P(FieldDeadlines, CopyOwnsItsDeadlines) {
  HashValue hash;
  for (int i = 0; i < 20; ++i) {
    hash.set("f" + std::to_string(i), "v", limits());
    hash.set_field_deadline("f" + std::to_string(i), 100 + i);
  }
  HashValue copy(hash);
  hash.remove_due(INT64_MAX, 100, [](std::string_view) {});
  EXPECT_TRUE(hash.empty());
  EXPECT_EQ(copy.size(), 20u);
  EXPECT_EQ(copy.field_deadline("f7"), 107);
  EXPECT_EQ(copy.remove_due(105, 100, [](std::string_view) {}), 5u);
  EXPECT_EQ(copy.earliest_deadline(), 105);
}

INSTANTIATE_TEST_SUITE_P(Encodings, FieldDeadlines, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Table" : "Listpack"; });

TEST(FieldDeadlinesConversion, ListpackToTableKeepsDeadlines) {
  HashValue hash;
  HashLimits limits{4, 64};
  for (int i = 0; i < 4; ++i) hash.set("f" + std::to_string(i), "v", limits);
  hash.set_field_deadline("f1", 50);
  hash.set_field_deadline("f3", 40);
  EXPECT_TRUE(hash.is_listpack());
  hash.set("f4", "v", limits);  // past the entries limit
  EXPECT_FALSE(hash.is_listpack());
  EXPECT_EQ(hash.field_deadline("f1"), 50);
  EXPECT_EQ(hash.field_deadline("f3"), 40);
  EXPECT_EQ(hash.field_deadline("f4"), kNoFieldDeadline);
  EXPECT_EQ(hash.earliest_deadline(), 40);
  EXPECT_EQ(hash.volatile_count(), 2u);
}

TEST(FieldDeadlinesRandom, TableHeapMatchesAMap) {
  std::mt19937_64 rng(7);
  HashValue hash;
  std::map<std::string, int64_t> expected;  // field → deadline (-1 none)
  const HashLimits limits = table_limits();
  for (int step = 0; step < 20000; ++step) {
    const std::string field = "f" + std::to_string(rng() % 300);
    switch (rng() % 5) {
      case 0:
        hash.set(field, "v", limits);
        expected[field] = kNoFieldDeadline;
        break;
      case 1:
      case 2:
        if (hash.set_field_deadline(field, static_cast<int64_t>(rng() % 10000))) {
          expected[field] = hash.field_deadline(field);
        }
        break;
      case 3:
        hash.remove(field);
        expected.erase(field);
        break;
      case 4: {
        const int64_t now = static_cast<int64_t>(rng() % 2000);
        hash.remove_due(now, 10, [&](std::string_view removed) {
          const auto it = expected.find(std::string(removed));
          ASSERT_NE(it, expected.end());
          EXPECT_LT(it->second, now);
          EXPECT_NE(it->second, kNoFieldDeadline);
          expected.erase(it);
        });
        break;
      }
    }
    ASSERT_EQ(hash.size(), expected.size());
  }
  int64_t earliest = INT64_MAX;
  size_t volatile_fields = 0;
  for (const auto& [field, deadline] : expected) {
    ASSERT_EQ(hash.field_deadline(field), deadline) << field;
    if (deadline != kNoFieldDeadline) {
      earliest = std::min(earliest, deadline);
      ++volatile_fields;
    }
  }
  EXPECT_EQ(hash.earliest_deadline(), earliest);
  EXPECT_EQ(hash.volatile_count(), volatile_fields);
}

}  // namespace
}  // namespace keywarden
