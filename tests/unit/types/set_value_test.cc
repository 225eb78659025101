// SetValue: each encoding on its own (intset order and widths, listpack insertion order,
// hashtable), every conversion Redis 7.2 makes and the ones it never makes, random selection,
// SPOP's two strategies, deep copies, SCAN, and payload sizes.
#include "types/set_value.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "types/value.h"

namespace keywarden {
namespace {

std::vector<std::string> members_of(const SetValue& set) {
  std::vector<std::string> out;
  set.for_each([&](std::string_view member) { out.emplace_back(member); });
  return out;
}

using Members = std::vector<std::string>;

SetValue filled(int count, const std::string& prefix, const SetLimits& limits = {}) {
  SetValue set;
  for (int i = 0; i < count; ++i) set.add(prefix + std::to_string(i), limits);
  return set;
}

TEST(SetValue, EmptySetIsAnIntset) {
  SetValue set;
  EXPECT_EQ(set.layout(), Encoding::kIntset);
  EXPECT_TRUE(set.empty());
  EXPECT_FALSE(set.contains("1"));
  EXPECT_FALSE(set.remove("1"));
  EXPECT_TRUE(members_of(set).empty());
}

TEST(SetValue, IntsetKeepsIntegersSortedAcrossWidths) {
  SetLimits limits;
  SetValue set;
  EXPECT_TRUE(set.add("5", limits));
  EXPECT_TRUE(set.add("-3", limits));
  EXPECT_FALSE(set.add("5", limits));
  EXPECT_TRUE(set.add("100000", limits));              // needs 4 bytes
  EXPECT_TRUE(set.add("-9223372036854775808", limits));  // needs 8 bytes
  EXPECT_TRUE(set.add("9223372036854775807", limits));
  EXPECT_TRUE(set.add("0", limits));
  EXPECT_EQ(set.layout(), Encoding::kIntset);
  EXPECT_EQ(set.size(), 6u);
  EXPECT_EQ(members_of(set), (Members{"-9223372036854775808", "-3", "0", "5", "100000",
                                      "9223372036854775807"}));
  EXPECT_TRUE(set.contains("100000"));
  EXPECT_TRUE(set.contains("-9223372036854775808"));
  EXPECT_FALSE(set.contains("6"));
  // Only canonical integers are integers: these are other strings, never members here.
  EXPECT_FALSE(set.contains("05"));
  EXPECT_FALSE(set.contains("+5"));
  EXPECT_FALSE(set.contains(" 5"));
  EXPECT_FALSE(set.contains("5.0"));
  EXPECT_FALSE(set.remove("05"));
  EXPECT_TRUE(set.remove("-3"));
  EXPECT_FALSE(set.remove("-3"));
  EXPECT_TRUE(set.remove("9223372036854775807"));
  EXPECT_EQ(members_of(set), (Members{"-9223372036854775808", "0", "5", "100000"}));
  EXPECT_EQ(set.layout(), Encoding::kIntset);
}

TEST(SetValue, NarrowIntsetAnswersWideLookups) {
  SetValue set;
  set.add("1", {});
  EXPECT_FALSE(set.contains("4294967296"));  // wider than the stored width
  EXPECT_FALSE(set.remove("4294967296"));
  EXPECT_FALSE(set.contains("99999999999999999999"));  // not an int64 at all
}

TEST(SetValue, IntsetPastItsLimitBecomesAHashtable) {
  SetLimits limits;  // 512
  SetValue set;
  for (int i = 0; i < 512; ++i) set.add(std::to_string(i * 7), limits);
  EXPECT_EQ(set.layout(), Encoding::kIntset);
  EXPECT_FALSE(set.add("0", limits));  // a duplicate adds nothing
  EXPECT_EQ(set.layout(), Encoding::kIntset);
  set.add("1", limits);
  // Redis 7.2 goes to a hashtable here, never to a listpack (513 > 128 anyway).
  EXPECT_EQ(set.layout(), Encoding::kHashTable);
  EXPECT_EQ(set.size(), 513u);
  for (int i = 0; i < 512; ++i) EXPECT_TRUE(set.contains(std::to_string(i * 7)));
  // Even with room for a listpack, an overflowing intset becomes a hashtable.
  SetLimits roomy{2, 1000, 64};
  SetValue small;
  small.add("1", roomy);
  small.add("2", roomy);
  small.add("3", roomy);
  EXPECT_EQ(small.layout(), Encoding::kHashTable);
  // Never back, even when emptied down to integers.
  set.remove("1");
  for (int i = 1; i < 512; ++i) set.remove(std::to_string(i * 7));
  EXPECT_EQ(set.size(), 1u);
  EXPECT_EQ(set.layout(), Encoding::kHashTable);
  EXPECT_EQ(members_of(set), (Members{"0"}));
}

TEST(SetValue, IntsetTakingAStringBecomesAListpackWhenSmall) {
  SetLimits limits;  // 128 entries, 64 bytes
  SetValue set;
  set.add("3", limits);
  set.add("1", limits);
  set.add("2", limits);
  EXPECT_TRUE(set.add("b", limits));
  EXPECT_EQ(set.layout(), Encoding::kListpack);
  // The integers keep their ascending order, then insertion order.
  EXPECT_EQ(members_of(set), (Members{"1", "2", "3", "b"}));
  EXPECT_TRUE(set.add("a", limits));
  EXPECT_TRUE(set.add("0", limits));
  EXPECT_FALSE(set.add("b", limits));
  EXPECT_FALSE(set.add("2", limits));
  EXPECT_EQ(members_of(set), (Members{"1", "2", "3", "b", "a", "0"}));
  EXPECT_TRUE(set.contains("0"));
  EXPECT_TRUE(set.contains("a"));
  EXPECT_FALSE(set.contains("c"));
  EXPECT_TRUE(set.remove("2"));
  EXPECT_TRUE(set.remove("b"));
  EXPECT_FALSE(set.remove("b"));
  EXPECT_EQ(members_of(set), (Members{"1", "3", "a", "0"}));
  // Removing every string leaves a listpack: no conversion back to intset.
  set.remove("a");
  EXPECT_EQ(set.layout(), Encoding::kListpack);

  // A first member that is a string makes a listpack of an empty set.
  SetValue words;
  words.add("x", limits);
  EXPECT_EQ(words.layout(), Encoding::kListpack);
  words.add("", limits);
  words.add(std::string("a\0b", 3), limits);
  EXPECT_TRUE(words.contains(""));
  EXPECT_TRUE(words.contains(std::string("a\0b", 3)));
  EXPECT_FALSE(words.contains("a"));
}

TEST(SetValue, IntsetTakingAStringBecomesAHashtableWhenNotSmall) {
  // Too many integers for a listpack (128 of them is already one too many).
  SetLimits limits;
  SetValue many;
  for (int i = 0; i < 128; ++i) many.add(std::to_string(i), limits);
  many.add("x", limits);
  EXPECT_EQ(many.layout(), Encoding::kHashTable);
  EXPECT_EQ(many.size(), 129u);
  SetValue fewer;
  for (int i = 0; i < 127; ++i) fewer.add(std::to_string(i), limits);
  fewer.add("x", limits);
  EXPECT_EQ(fewer.layout(), Encoding::kListpack);
  EXPECT_EQ(fewer.size(), 128u);

  // The new member is too long.
  SetValue long_member;
  long_member.add("1", limits);
  long_member.add(std::string(65, 'x'), limits);
  EXPECT_EQ(long_member.layout(), Encoding::kHashTable);
  SetValue exact;
  exact.add("1", limits);
  exact.add(std::string(64, 'x'), limits);
  EXPECT_EQ(exact.layout(), Encoding::kListpack);

  // An integer's decimal text is too long for the listpack value limit.
  SetLimits short_values{512, 128, 3};
  SetValue wide;
  wide.add("-100", short_values);  // four characters
  wide.add("x", short_values);
  EXPECT_EQ(wide.layout(), Encoding::kHashTable);
  SetValue narrow;
  narrow.add("-10", short_values);
  narrow.add("999", short_values);
  narrow.add("x", short_values);
  EXPECT_EQ(narrow.layout(), Encoding::kListpack);
  EXPECT_EQ(members_of(narrow), (Members{"-10", "999", "x"}));

  // set-max-listpack-entries 0: no listpack at all.
  SetValue none;
  none.add("x", SetLimits{512, 0, 64});
  EXPECT_EQ(none.layout(), Encoding::kHashTable);
}

TEST(SetValue, ListpackBecomesAHashtableWhenFullOrGivenALongMember) {
  SetLimits limits;
  SetValue set = filled(128, "m", limits);
  EXPECT_EQ(set.layout(), Encoding::kListpack);
  EXPECT_FALSE(set.add("m0", limits));
  EXPECT_EQ(set.layout(), Encoding::kListpack);
  set.add("5", limits);  // integers are ordinary members of a listpack
  EXPECT_EQ(set.layout(), Encoding::kHashTable);
  EXPECT_EQ(set.size(), 129u);
  EXPECT_TRUE(set.contains("5"));
  for (int i = 0; i < 128; ++i) EXPECT_TRUE(set.contains("m" + std::to_string(i)));

  SetValue small = filled(3, "m", limits);
  small.add(std::string(64, 'y'), limits);
  EXPECT_EQ(small.layout(), Encoding::kListpack);
  small.add(std::string(65, 'y'), limits);
  EXPECT_EQ(small.layout(), Encoding::kHashTable);
  EXPECT_EQ(small.size(), 5u);
  // Never back.
  small.remove(std::string(65, 'y'));
  EXPECT_EQ(small.layout(), Encoding::kHashTable);
}

TEST(SetValue, ListpackHandlesLongRecords) {
  // Lengths over 127 need a two-byte length prefix; raise the limit to store them flat.
  SetLimits limits{512, 128, 100000};
  SetValue set;
  const std::string big(300, 'b');
  const std::string huge(20000, 'h');
  set.add("a", limits);
  set.add(big, limits);
  set.add(huge, limits);
  set.add("z", limits);
  EXPECT_EQ(set.layout(), Encoding::kListpack);
  EXPECT_EQ(members_of(set), (Members{"a", big, huge, "z"}));
  EXPECT_TRUE(set.remove(big));
  EXPECT_EQ(members_of(set), (Members{"a", huge, "z"}));
  EXPECT_TRUE(set.contains(huge));
}

TEST(SetValue, HashtableGrowsAndShrinks) {
  SetLimits limits;
  SetValue set;
  std::set<std::string> model;
  std::mt19937_64 rng(3);
  for (int round = 0; round < 20'000; ++round) {
    const std::string member = (rng() % 2 ? "s" : "") + std::to_string(rng() % 2000);
    if (rng() % 3 == 0) {
      EXPECT_EQ(set.remove(member), model.erase(member) == 1);
    } else {
      EXPECT_EQ(set.add(member, limits), model.insert(member).second);
    }
  }
  EXPECT_EQ(set.layout(), Encoding::kHashTable);
  EXPECT_EQ(set.size(), model.size());
  const Members all = members_of(set);
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()), model);
}

TEST(SetValue, RandomSelectionInEveryEncoding) {
  std::mt19937_64 rng(11);
  for (const std::string prefix : {"", "m"}) {
    for (const int count : {10, 200, 600}) {
      SetValue set = filled(count, prefix);
      std::map<std::string, int> hits;
      for (int i = 0; i < count * 30; ++i) ++hits[set.random_member(rng)];
      EXPECT_EQ(hits.size(), static_cast<size_t>(count)) << prefix << count;
      for (size_t want : {size_t{1}, size_t{3}, size_t(count / 2), size_t(count)}) {
        const std::vector<std::string> chosen = set.random_distinct(want, rng);
        EXPECT_EQ(chosen.size(), want);
        EXPECT_EQ(std::set<std::string>(chosen.begin(), chosen.end()).size(), want);
        for (const std::string& member : chosen) EXPECT_TRUE(set.contains(member));
      }
    }
  }
}

TEST(SetValue, PopRandomOneAtATime) {
  std::mt19937_64 rng(5);
  for (const std::string prefix : {"", "m"}) {
    for (const int count : {5, 300}) {
      SetValue set = filled(count, prefix);
      std::set<std::string> popped;
      while (!set.empty()) {
        const std::string member = set.pop_random(rng);
        EXPECT_FALSE(set.contains(member));
        EXPECT_TRUE(popped.insert(member).second);
      }
      EXPECT_EQ(popped.size(), static_cast<size_t>(count));
    }
  }
}

TEST(SetValue, PopRandomCountDrawsOrRebuilds) {
  std::mt19937_64 rng(9);
  SetLimits limits;
  // Few popped: drawn one by one; the set keeps its encoding.
  SetValue big = filled(1000, "");
  ASSERT_EQ(big.layout(), Encoding::kHashTable);
  std::vector<std::string> popped = big.pop_random(10, rng, limits);
  EXPECT_EQ(popped.size(), 10u);
  EXPECT_EQ(big.size(), 990u);
  EXPECT_EQ(big.layout(), Encoding::kHashTable);
  for (const std::string& member : popped) EXPECT_FALSE(big.contains(member));

  // Most popped: the 90 survivors are drawn into a new set, which is an intset again because
  // they are all integers (as Redis 7.0 builds it).
  popped = big.pop_random(900, rng, limits);
  EXPECT_EQ(popped.size(), 900u);
  EXPECT_EQ(std::set<std::string>(popped.begin(), popped.end()).size(), 900u);
  EXPECT_EQ(big.size(), 90u);
  EXPECT_EQ(big.layout(), Encoding::kIntset);
  for (const std::string& member : popped) EXPECT_FALSE(big.contains(member));

  SetValue words = filled(1000, "w");
  popped = words.pop_random(990, rng, limits);
  EXPECT_EQ(words.size(), 10u);
  EXPECT_EQ(words.layout(), Encoding::kListpack);
  std::set<std::string> all(popped.begin(), popped.end());
  for (const std::string& member : members_of(words)) EXPECT_TRUE(all.insert(member).second);
  EXPECT_EQ(all.size(), 1000u);
}

TEST(SetValue, ScanOfFlatEncodingsIsOneStepAndTableScanCoversAll) {
  SetValue small = filled(50, "m");
  std::vector<std::string> seen;
  EXPECT_EQ(small.scan(0, [&](std::string_view m) { seen.emplace_back(m); }), 0u);
  EXPECT_EQ(seen.size(), 50u);

  SetValue big = filled(1000, "m");
  std::set<std::string> all;
  uint64_t cursor = 0;
  int step = 0;
  do {
    cursor = big.scan(cursor, [&](std::string_view m) { all.emplace(m); });
    if (++step == 10) {
      for (int i = 0; i < 3000; ++i) big.add("grow" + std::to_string(i), {});
    }
  } while (cursor != 0);
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(all.count("m" + std::to_string(i)));
}

TEST(SetValue, CopiesAreDeepAndValueReportsTheEncoding) {
  SetLimits limits;
  Value value = Value::make_aggregate(ValueType::kSet, std::make_unique<SetValue>());
  EXPECT_EQ(value_type_name(value.type()), "set");
  SetValue& set = value.as<SetValue>();
  set.add("1", limits);
  EXPECT_EQ(encoding_name(value.encoding()), "intset");
  Value copy = value;
  copy.as<SetValue>().add("2", limits);
  EXPECT_EQ(value.aggregate_size(), 1u);
  EXPECT_EQ(copy.aggregate_size(), 2u);
  set.add("a", limits);
  // Kept as a listpack, reported as Redis 7.0 reports a set holding a string.
  EXPECT_EQ(set.layout(), Encoding::kListpack);
  EXPECT_EQ(encoding_name(value.encoding()), "hashtable");
  for (int i = 0; i < 200; ++i) set.add("m" + std::to_string(i), limits);
  EXPECT_EQ(encoding_name(value.encoding()), "hashtable");
  Value table_copy(value);
  set.remove("a");
  EXPECT_EQ(encoding_name(table_copy.encoding()), "hashtable");
  EXPECT_TRUE(table_copy.as<SetValue>().contains("a"));
  EXPECT_EQ(table_copy.aggregate_size(), 202u);
}

TEST(SetValue, PayloadBytesFollowTheEncoding) {
  SetLimits limits;
  SetValue tiny;
  tiny.add("1", limits);
  // The object and one small buffer (glibc's smallest chunk holds 24 bytes, jemalloc's 8).
  EXPECT_GT(tiny.payload_bytes(), sizeof(SetValue));
  EXPECT_LE(tiny.payload_bytes(), sizeof(SetValue) + 24);
  SetValue ints = filled(500, "");
  // 2 bytes per member plus the object.
  EXPECT_GE(ints.payload_bytes(), sizeof(SetValue) + 1000);
  EXPECT_LT(ints.payload_bytes(), sizeof(SetValue) + 3000);
  SetValue words = filled(100, "member-");
  EXPECT_GE(words.payload_bytes(), 100 * 10u);
  EXPECT_LT(words.payload_bytes(), 100 * 30u);
  SetValue table = filled(1000, "member-");
  // Nodes and buckets: far more per member than the flat encodings.
  EXPECT_GT(table.payload_bytes(), 1000 * 40u);
  EXPECT_LT(table.payload_bytes(), 1000 * 120u);
}

TEST(SetValue, SmallIntsetIsOneObjectAndATightBuffer) {
  // The memtype.py case: 16 integers needing 4 bytes each.
  SetLimits limits;
  SetValue set;
  for (int j = 0; j < 16; ++j) set.add(std::to_string(40000 + 3 * j), limits);
  EXPECT_EQ(set.layout(), Encoding::kIntset);
  EXPECT_LE(sizeof(SetValue), 32u);
  EXPECT_GE(set.payload_bytes(), sizeof(SetValue) + 64);
  // A quarter of growth room at most, plus the allocator's rounding (up to 24 bytes here).
  EXPECT_LE(set.payload_bytes(), sizeof(SetValue) + 64 + 16 + 24);
  // 16 integers of 2 bytes.
  SetValue narrow;
  for (int j = 0; j < 16; ++j) narrow.add(std::to_string(3 * j), limits);
  EXPECT_LE(narrow.payload_bytes(), sizeof(SetValue) + 40);
}

TEST(SetValue, FlatBufferEdgesAndWidening) {
  SetLimits limits;
  SetValue set;
  // Widening an empty intset, then one member at each width.
  EXPECT_TRUE(set.add("5000000000", limits));
  EXPECT_TRUE(set.add("-1", limits));
  EXPECT_TRUE(set.add("70000", limits));
  EXPECT_EQ(members_of(set), (Members{"-1", "70000", "5000000000"}));
  EXPECT_TRUE(set.remove("70000"));
  EXPECT_TRUE(set.remove("-1"));
  EXPECT_TRUE(set.remove("5000000000"));
  EXPECT_TRUE(set.empty());
  EXPECT_TRUE(set.add("1", limits));
  // An empty member and members of 0, 63 and 64 bytes in a listpack; deletions in the middle.
  EXPECT_TRUE(set.add("", limits));
  EXPECT_TRUE(set.add(std::string(63, 'x'), limits));
  EXPECT_TRUE(set.add(std::string(64, 'y'), limits));
  EXPECT_FALSE(set.add("", limits));
  EXPECT_EQ(set.layout(), Encoding::kListpack);
  EXPECT_TRUE(set.remove(""));
  EXPECT_EQ(members_of(set), (Members{"1", std::string(63, 'x'), std::string(64, 'y')}));
  EXPECT_TRUE(set.add("", limits));
  EXPECT_EQ(members_of(set), (Members{"1", std::string(63, 'x'), std::string(64, 'y'), ""}));
  // With max entries and a large max value: 255/256/16383/16384-byte records.
  SetLimits big;
  big.max_listpack_value = 20000;
  big.max_listpack_entries = 8;
  for (size_t length : {255u, 256u, 16383u, 16384u}) set.add(std::string(length, 'z'), big);
  EXPECT_EQ(set.layout(), Encoding::kListpack);
  EXPECT_EQ(set.size(), 8u);  // at max entries
  EXPECT_TRUE(set.contains(std::string(16384, 'z')));
  EXPECT_TRUE(set.remove(std::string(256, 'z')));
  EXPECT_TRUE(set.contains(std::string(16383, 'z')));
  EXPECT_TRUE(set.add(std::string(256, 'z'), big));
  EXPECT_TRUE(set.add("one more", big));
  EXPECT_EQ(set.layout(), Encoding::kHashTable);
  EXPECT_EQ(set.size(), 9u);
  EXPECT_TRUE(set.contains(std::string(16384, 'z')));
}

TEST(SetValue, MovesAndAssignmentsAcrossEncodings) {
  SetLimits limits;
  SetValue ints = filled(10, "");
  SetValue words = filled(10, "w");
  SetValue table = filled(500, "t");
  ASSERT_EQ(table.layout(), Encoding::kHashTable);
  SetValue moved(std::move(table));
  EXPECT_EQ(moved.size(), 500u);
  EXPECT_EQ(table.layout(), Encoding::kIntset);  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(table.empty());
  EXPECT_TRUE(table.add("3", limits));
  table = std::move(moved);  // an intset receives a hashtable
  EXPECT_EQ(table.size(), 500u);
  EXPECT_TRUE(table.contains("t499"));
  table = words;  // a hashtable receives a copy of a listpack
  EXPECT_EQ(table.layout(), Encoding::kListpack);
  EXPECT_EQ(members_of(table), members_of(words));
  words = ints;
  EXPECT_EQ(words.layout(), Encoding::kIntset);
  EXPECT_EQ(members_of(words), members_of(ints));
  SetValue& self = words;
  words = self;
  EXPECT_EQ(members_of(words), members_of(ints));
  std::mt19937_64 rng(7);
  while (!words.empty()) EXPECT_TRUE(ints.contains(words.pop_random(rng)));
}

}  // namespace
}  // namespace keywarden
