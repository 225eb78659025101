// ListValue: pushes and pops at both ends, node sizing by list-max-listpack-size, splitting on
// insertion into full nodes, merging after removals, positional operations, binary safety and
// a randomised comparison with std::deque under every fill setting.
#include "types/list_value.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "types/value.h"

namespace keywarden {
namespace {

std::vector<std::string> contents(const ListValue& list) {
  std::vector<std::string> out;
  list.for_each([&](std::string_view value) { out.emplace_back(value); });
  return out;
}

ListValue list_of(std::initializer_list<std::string_view> values, int64_t fill = -2) {
  ListValue list(fill);
  for (std::string_view value : values) list.push_back(value);
  return list;
}

using Strings = std::vector<std::string>;

TEST(ListValue, EmptyListReportsQuicklist) {
  ListValue list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.size(), 0u);
  EXPECT_EQ(list.encoding(), Encoding::kQuicklist);
  EXPECT_EQ(list.node_count(), 0u);
  EXPECT_FALSE(list.at(0).has_value());
  EXPECT_FALSE(list.at(-1).has_value());
  EXPECT_TRUE(list.valid());
  EXPECT_EQ(list.remove("a", 0), 0u);
  EXPECT_FALSE(list.insert("a", "b", false));
}

TEST(ListValue, PushAndPopAtBothEnds) {
  ListValue list;
  list.push_back("b");
  list.push_front("a");
  list.push_back("c");
  EXPECT_EQ(contents(list), (Strings{"a", "b", "c"}));
  EXPECT_EQ(list.pop_back(), "c");
  EXPECT_EQ(list.pop_front(), "a");
  EXPECT_EQ(list.pop_front(), "b");
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.node_count(), 0u);
  // Reusable after emptying.
  list.push_front("x");
  EXPECT_EQ(contents(list), (Strings{"x"}));
  EXPECT_TRUE(list.valid());
}

TEST(ListValue, BinarySafeAndLengthBoundaries) {
  ListValue list;
  const std::vector<std::string> values = {
      "", std::string("a\0b", 3), std::string(127, 'x'), std::string(128, 'y'),
      std::string(16383, 'z'), std::string(16384, 'w'), std::string(100000, 'v'), "\xff\x80"};
  for (const std::string& value : values) list.push_back(value);
  for (const std::string& value : values) list.push_front(value);
  EXPECT_TRUE(list.valid());
  std::vector<std::string> expected(values.rbegin(), values.rend());
  expected.insert(expected.end(), values.begin(), values.end());
  EXPECT_EQ(contents(list), expected);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(*list.at(static_cast<int64_t>(i)), expected[i]);
  }
}

TEST(ListValue, PositiveFillBoundsEntriesPerNode) {
  ListValue list(3);
  for (int i = 0; i < 10; ++i) list.push_back(std::to_string(i));
  EXPECT_EQ(list.node_entry_counts(), (std::vector<uint32_t>{3, 3, 3, 1}));
  for (int i = 0; i < 4; ++i) list.push_front("f" + std::to_string(i));
  EXPECT_EQ(list.node_entry_counts(), (std::vector<uint32_t>{1, 3, 3, 3, 3, 1}));
  EXPECT_TRUE(list.valid());
}

TEST(ListValue, PositiveFillStillCapsNodesAtEightKilobytes) {
  ListValue list(1000);
  const std::string value(1000, 'a');
  for (int i = 0; i < 20; ++i) list.push_back(value);
  // 1004 bytes per entry: 8 fit in 8192.
  EXPECT_EQ(list.node_entry_counts()[0], 8u);
  EXPECT_TRUE(list.valid());
}

TEST(ListValue, FillZeroPutsEveryElementInItsOwnNode) {
  ListValue list(0);
  for (int i = 0; i < 5; ++i) list.push_back("v");
  EXPECT_EQ(list.node_count(), 5u);
}

TEST(ListValue, NegativeFillBoundsNodeBytes) {
  // 100-byte values take 102 bytes framed.
  const std::string value(100, 'q');
  const std::pair<int64_t, uint32_t> cases[] = {
      {-1, 4096 / 102}, {-2, 8192 / 102}, {-3, 16384 / 102}, {-4, 32768 / 102},
      {-5, 65536 / 102}, {-100, 65536 / 102}};
  for (const auto& [fill, per_node] : cases) {
    ListValue list(fill);
    for (int i = 0; i < 1000; ++i) list.push_back(value);
    EXPECT_EQ(list.node_entry_counts()[0], per_node) << "fill " << fill;
    EXPECT_TRUE(list.valid());
  }
  EXPECT_EQ(ListValue(-100).fill(), -5);
  EXPECT_EQ(ListValue(1 << 20).fill(), 32767);
}

TEST(ListValue, ElementLargerThanANodeGetsItsOwnNode) {
  ListValue list(-1);
  list.push_back("a");
  list.push_back(std::string(10000, 'b'));
  list.push_back("c");
  list.push_front(std::string(5000, 'd'));
  EXPECT_EQ(list.node_entry_counts(), (std::vector<uint32_t>{1, 1, 1, 1}));
  EXPECT_TRUE(list.valid());
  EXPECT_EQ(*list.at(2), std::string(10000, 'b'));
}

TEST(ListValue, IndexFromBothEnds) {
  ListValue list(2);
  for (int i = 0; i < 9; ++i) list.push_back(std::to_string(i));
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(*list.at(i), std::to_string(i));
    EXPECT_EQ(*list.at(i - 9), std::to_string(i));
  }
  EXPECT_FALSE(list.at(9).has_value());
  EXPECT_FALSE(list.at(-10).has_value());
  EXPECT_FALSE(list.at(INT64_MIN).has_value());
  EXPECT_FALSE(list.at(INT64_MAX).has_value());
}

TEST(ListValue, SetReplacesInPlaceAndSplitsWhenTooLarge) {
  ListValue list = list_of({"a", "b", "c", "d"}, -1);
  EXPECT_TRUE(list.set(1, "B"));
  EXPECT_TRUE(list.set(-1, "D"));
  EXPECT_FALSE(list.set(4, "x"));
  EXPECT_FALSE(list.set(-5, "x"));
  EXPECT_EQ(contents(list), (Strings{"a", "B", "c", "D"}));
  EXPECT_EQ(list.node_count(), 1u);
  // A value too large for the 4 KiB node leaves it.
  EXPECT_TRUE(list.set(2, std::string(5000, 'C')));
  EXPECT_EQ(contents(list), (Strings{"a", "B", std::string(5000, 'C'), "D"}));
  EXPECT_TRUE(list.valid());
  EXPECT_GE(list.node_count(), 2u);
  // Back to a small value: the pieces merge again.
  EXPECT_TRUE(list.set(2, "c"));
  EXPECT_EQ(contents(list), (Strings{"a", "B", "c", "D"}));
  EXPECT_EQ(list.node_count(), 1u);
  EXPECT_TRUE(list.valid());
}

TEST(ListValue, InsertBeforeAndAfterPivot) {
  ListValue list = list_of({"a", "b", "b", "c"});
  EXPECT_TRUE(list.insert("b", "x", false));
  EXPECT_TRUE(list.insert("b", "y", true));
  EXPECT_TRUE(list.insert("c", "z", true));
  EXPECT_TRUE(list.insert("a", "0", false));
  EXPECT_FALSE(list.insert("nope", "w", false));
  EXPECT_EQ(contents(list), (Strings{"0", "a", "x", "b", "y", "b", "c", "z"}));
  EXPECT_TRUE(list.valid());
}

TEST(ListValue, InsertIntoFullNodeSplitsIt) {
  ListValue list(4);
  for (const char* value : {"a", "b", "c", "d", "e", "f", "g", "h"}) list.push_back(value);
  EXPECT_EQ(list.node_entry_counts(), (std::vector<uint32_t>{4, 4}));
  // Middle of the first node: split at the seam.
  EXPECT_TRUE(list.insert("b", "X", true));
  EXPECT_EQ(contents(list), (Strings{"a", "b", "X", "c", "d", "e", "f", "g", "h"}));
  EXPECT_TRUE(list.valid());
  EXPECT_EQ(list.node_entry_counts(), (std::vector<uint32_t>{3, 2, 4}));
  // End of a full node spills into the next one when it has room, else a new node.
  EXPECT_TRUE(list.insert("h", "Y", true));
  EXPECT_TRUE(list.insert("e", "Z", false));
  EXPECT_EQ(contents(list), (Strings{"a", "b", "X", "c", "d", "Z", "e", "f", "g", "h", "Y"}));
  EXPECT_TRUE(list.valid());
}

TEST(ListValue, RemoveFromHeadTailOrAll) {
  auto make = [] { return list_of({"a", "x", "b", "x", "c", "x", "d"}, 2); };
  ListValue head = make();
  EXPECT_EQ(head.remove("x", 2), 2u);
  EXPECT_EQ(contents(head), (Strings{"a", "b", "c", "x", "d"}));
  ListValue tail = make();
  EXPECT_EQ(tail.remove("x", -2), 2u);
  EXPECT_EQ(contents(tail), (Strings{"a", "x", "b", "c", "d"}));
  ListValue all = make();
  EXPECT_EQ(all.remove("x", 0), 3u);
  EXPECT_EQ(contents(all), (Strings{"a", "b", "c", "d"}));
  ListValue minimum = make();
  EXPECT_EQ(minimum.remove("x", INT64_MIN), 3u);
  EXPECT_EQ(minimum.remove("x", INT64_MAX), 0u);
  EXPECT_EQ(minimum.size(), 4u);
  for (const ListValue* list : {&head, &tail, &all, &minimum}) EXPECT_TRUE(list->valid());
  ListValue everything = list_of({"x", "x", "x"}, 1);
  EXPECT_EQ(everything.remove("x", 0), 3u);
  EXPECT_TRUE(everything.empty());
  EXPECT_EQ(everything.node_count(), 0u);
}

TEST(ListValue, RemovalsMergeNeighbouringNodes) {
  ListValue list(4);
  for (int i = 0; i < 16; ++i) list.push_back(i % 2 == 0 ? "keep" : "drop");
  EXPECT_EQ(list.node_count(), 4u);
  EXPECT_EQ(list.remove("drop", 0), 8u);
  EXPECT_EQ(list.node_entry_counts(), (std::vector<uint32_t>{4, 4}));
  EXPECT_TRUE(list.valid());
}

TEST(ListValue, EraseRanges) {
  ListValue list(3);
  for (int i = 0; i < 12; ++i) list.push_back(std::to_string(i));
  list.erase(0, 4);   // whole first node and one of the second
  list.erase(5, 2);   // middle
  list.erase(4, 0);   // nothing
  EXPECT_EQ(contents(list), (Strings{"4", "5", "6", "7", "8", "11"}));
  EXPECT_TRUE(list.valid());
  list.erase(1, 5);
  EXPECT_EQ(contents(list), (Strings{"4"}));
  list.erase(0, 1);
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.node_count(), 0u);
}

TEST(ListValue, RangesForwardAndReverseAcrossNodes) {
  ListValue list(2);
  for (int i = 0; i < 7; ++i) list.push_back(std::to_string(i));
  Strings forward, reverse;
  list.for_range(1, 5, false, [&](std::string_view v) { forward.emplace_back(v); });
  list.for_range(1, 5, true, [&](std::string_view v) { reverse.emplace_back(v); });
  EXPECT_EQ(forward, (Strings{"1", "2", "3", "4", "5"}));
  EXPECT_EQ(reverse, (Strings{"5", "4", "3", "2", "1"}));
  Strings one;
  list.for_range(6, 6, true, [&](std::string_view v) { one.emplace_back(v); });
  EXPECT_EQ(one, (Strings{"6"}));
}

TEST(ListValue, ScanReportsIndexesAndStops) {
  ListValue list = list_of({"a", "b", "a", "c"}, 1);
  std::vector<size_t> from_head, from_tail;
  list.scan(false, [&](std::string_view v, size_t i) {
    if (v == "a") from_head.push_back(i);
    return true;
  });
  list.scan(true, [&](std::string_view v, size_t i) {
    if (v == "a") from_tail.push_back(i);
    return from_tail.size() < 1;
  });
  EXPECT_EQ(from_head, (std::vector<size_t>{0, 2}));
  EXPECT_EQ(from_tail, (std::vector<size_t>{2}));
}

TEST(ListValue, CopiesAreDeepAndValuesHoldLists) {
  ListValue list = list_of({"a", "b"});
  ListValue copy = list;
  copy.push_back("c");
  EXPECT_EQ(contents(list), (Strings{"a", "b"}));
  EXPECT_EQ(contents(copy), (Strings{"a", "b", "c"}));
  list = copy;
  EXPECT_EQ(contents(list), (Strings{"a", "b", "c"}));
  ListValue moved = std::move(copy);
  EXPECT_EQ(moved.size(), 3u);

  Value value = Value::make_aggregate(ValueType::kList, std::make_unique<ListValue>(list));
  Value duplicate = value;
  duplicate.as<ListValue>().pop_front();
  EXPECT_EQ(value.aggregate_size(), 3u);
  EXPECT_EQ(duplicate.aggregate_size(), 2u);
  EXPECT_EQ(encoding_name(value.encoding()), "quicklist");
}

TEST(ListValue, MemoryIsCompactAndGivenBack) {
  ListValue list;
  const size_t empty = list.payload_bytes();
  for (int i = 0; i < 100000; ++i) list.push_back("value");
  // 7 bytes per framed element, full nodes keep no slack.
  EXPECT_LT(list.payload_bytes(), 100000u * 15 / 2);
  EXPECT_GT(list.payload_bytes(), 100000u * 7);
  for (int i = 0; i < 99990; ++i) list.pop_front();
  EXPECT_LT(list.payload_bytes(), empty + 1024);
  // A queue pushed at one end and popped at the other stays small.
  for (int i = 0; i < 200000; ++i) {
    list.push_back("job");
    list.pop_front();
  }
  EXPECT_LT(list.payload_bytes(), empty + 1024);
  EXPECT_TRUE(list.valid());
}

TEST(ListValue, SmallListIsOneNodeWithLittleSlack) {
  // The memtype.py case: 16 strings of up to 32 bytes in one node held inline by the ring, in a
  // buffer within an allocator size class of its 2-byte-framed entries.
  ListValue list;
  size_t framed = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string value(static_cast<size_t>(8 + i), static_cast<char>('a' + i));
    list.push_back(value);
    framed += value.size() + 2;
  }
  EXPECT_EQ(list.node_count(), 1u);
  EXPECT_LE(sizeof(ListValue), 64u);
  EXPECT_GE(list.payload_bytes(), sizeof(ListValue) + framed);
  EXPECT_LE(list.payload_bytes(), sizeof(ListValue) + framed + framed / 4 + 64);
  // Pushes at the front grow the same buffer on the other side.
  ListValue front;
  for (int i = 0; i < 16; ++i) front.push_front(std::string(20, 'x'));
  EXPECT_EQ(front.node_count(), 1u);
  EXPECT_LE(front.payload_bytes(), sizeof(ListValue) + 16 * 22 * 5 / 4 + 64);
  EXPECT_TRUE(list.valid());
  EXPECT_TRUE(front.valid());
}

TEST(ListValue, RingMovesBetweenItsInlineSlotAndTheHeap) {
  // fill 2: every third push opens a node, so the ring grows out of its inline slot and back.
  ListValue list(2);
  std::deque<std::string> expected;
  const size_t single = [] {
    ListValue one(2);
    one.push_back("a");
    return one.payload_bytes();
  }();
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 9; ++i) {
      const std::string value = std::to_string(round) + ":" + std::to_string(i);
      if (i % 2 == 0) {
        list.push_back(value);
        expected.push_back(value);
      } else {
        list.push_front(value);
        expected.push_front(value);
      }
    }
    EXPECT_GE(list.node_count(), 4u);
    ListValue copy(list);
    EXPECT_EQ(contents(copy), Strings(expected.begin(), expected.end()));
    while (list.size() > 1) {
      if (list.size() % 2 == 0) {
        EXPECT_EQ(list.pop_back(), expected.back());
        expected.pop_back();
      } else {
        EXPECT_EQ(list.pop_front(), expected.front());
        expected.pop_front();
      }
      EXPECT_TRUE(list.valid());
    }
    EXPECT_EQ(list.node_count(), 1u);
    EXPECT_EQ(contents(list), Strings(expected.begin(), expected.end()));
  }
  // Emptied, then one element: back in the inline slot, no slot array left behind.
  list.pop_back();
  list.push_back("a");
  expected = {"a"};
  EXPECT_EQ(list.payload_bytes(), single);
  // Moves and copies of one-node and empty lists.
  ListValue moved(std::move(list));
  EXPECT_EQ(contents(moved), Strings(expected.begin(), expected.end()));
  EXPECT_TRUE(list.empty());
  list.push_back("again");
  EXPECT_EQ(contents(list), Strings{"again"});
  list = moved;
  EXPECT_EQ(contents(list), contents(moved));
  moved = ListValue(2);
  EXPECT_TRUE(moved.empty());
  EXPECT_TRUE(moved.valid());
  list.erase(0, list.size());
  EXPECT_EQ(list.node_count(), 0u);
  EXPECT_TRUE(list.valid());
}

TEST(ListValue, MiddleEditsOfASingleNodeAtLengthBoundaries) {
  ListValue list;
  const Strings values = {"", std::string(127, 'a'), std::string(128, 'b'), "",
                          std::string(255, 'c'), std::string(256, 'd')};
  for (const std::string& value : values) list.push_back(value);
  Strings expected = values;
  ASSERT_TRUE(list.set(2, std::string(16383, 'e')));
  expected[2] = std::string(16383, 'e');
  ASSERT_TRUE(list.insert("", std::string(16384, 'f'), true));
  expected.insert(expected.begin() + 1, std::string(16384, 'f'));
  EXPECT_EQ(contents(list), expected);
  list.erase(2, 2);
  expected.erase(expected.begin() + 2, expected.begin() + 4);
  EXPECT_EQ(contents(list), expected);
  EXPECT_EQ(list.remove("", 0), 2u);
  expected.erase(std::remove(expected.begin(), expected.end(), ""), expected.end());
  EXPECT_EQ(contents(list), expected);
  ASSERT_TRUE(list.set(0, ""));
  expected[0] = "";
  EXPECT_EQ(contents(list), expected);
  EXPECT_TRUE(list.valid());
}

// Random operations on ListValue and std::deque side by side, under every kind of fill.
TEST(ListValue, MatchesDequeUnderRandomOperations) {
  for (int64_t fill : {-5, -2, -1, 0, 1, 2, 5, 128}) {
    std::mt19937_64 rng(static_cast<uint64_t>(fill + 100));
    ListValue list(fill);
    std::deque<std::string> model;
    auto random_value = [&] {
      const int kind = static_cast<int>(rng() % 20);
      if (kind == 0) return std::string(rng() % 9000, 'L');
      if (kind < 4) return std::string(rng() % 300, static_cast<char>('a' + rng() % 3));
      return std::string(1, static_cast<char>('a' + rng() % 4));
    };
    auto random_index = [&](int64_t spread) {
      return static_cast<int64_t>(rng() % (2 * spread + 3)) - spread - 1;
    };
    for (int step = 0; step < 6000; ++step) {
      const int64_t size = static_cast<int64_t>(model.size());
      switch (rng() % 11) {
        case 0:
        case 1: {
          std::string value = random_value();
          list.push_front(value);
          model.push_front(value);
          break;
        }
        case 2:
        case 3: {
          std::string value = random_value();
          list.push_back(value);
          model.push_back(value);
          break;
        }
        case 4:
          if (!model.empty()) {
            ASSERT_EQ(list.pop_front(), model.front());
            model.pop_front();
          }
          break;
        case 5:
          if (!model.empty()) {
            ASSERT_EQ(list.pop_back(), model.back());
            model.pop_back();
          }
          break;
        case 6: {
          const int64_t index = random_index(size);
          const std::string value = random_value();
          const int64_t normal = index < 0 ? index + size : index;
          const bool in_range = normal >= 0 && normal < size;
          ASSERT_EQ(list.set(index, value), in_range);
          if (in_range) model[normal] = value;
          break;
        }
        case 7: {
          const std::string pivot(1, static_cast<char>('a' + rng() % 5));
          const std::string value = random_value();
          const bool after = rng() % 2 == 0;
          auto found = std::find(model.begin(), model.end(), pivot);
          ASSERT_EQ(list.insert(pivot, value, after), found != model.end());
          if (found != model.end()) model.insert(after ? found + 1 : found, value);
          break;
        }
        case 8: {
          const std::string value(1, static_cast<char>('a' + rng() % 4));
          const int64_t count = static_cast<int64_t>(rng() % 7) - 3;
          size_t expected = 0;
          if (count >= 0) {
            for (auto it = model.begin(); it != model.end();) {
              if (*it == value && (count == 0 || expected < static_cast<size_t>(count))) {
                it = model.erase(it);
                ++expected;
              } else {
                ++it;
              }
            }
          } else {
            for (size_t i = model.size(); i-- > 0;) {
              if (model[i] == value && expected < static_cast<size_t>(-count)) {
                model.erase(model.begin() + static_cast<std::ptrdiff_t>(i));
                ++expected;
              }
            }
          }
          ASSERT_EQ(list.remove(value, count), expected);
          break;
        }
        case 9:
          if (!model.empty()) {
            const size_t start = rng() % model.size();
            const size_t count = rng() % (model.size() - start + 1);
            list.erase(start, count);
            model.erase(model.begin() + static_cast<std::ptrdiff_t>(start),
                        model.begin() + static_cast<std::ptrdiff_t>(start + count));
          }
          break;
        case 10: {
          const int64_t index = random_index(size);
          const int64_t normal = index < 0 ? index + size : index;
          auto value = list.at(index);
          if (normal >= 0 && normal < size) {
            ASSERT_TRUE(value.has_value());
            ASSERT_EQ(*value, model[normal]);
          } else {
            ASSERT_FALSE(value.has_value());
          }
          if (!model.empty()) {
            const size_t first = rng() % model.size();
            const size_t last = first + rng() % (model.size() - first);
            const bool reverse = rng() % 2 == 0;
            std::vector<std::string> got;
            list.for_range(first, last, reverse, [&](std::string_view v) { got.emplace_back(v); });
            std::vector<std::string> want(model.begin() + static_cast<std::ptrdiff_t>(first),
                                          model.begin() + static_cast<std::ptrdiff_t>(last + 1));
            if (reverse) std::reverse(want.begin(), want.end());
            ASSERT_EQ(got, want);
          }
          break;
        }
      }
      ASSERT_EQ(list.size(), model.size());
      ASSERT_TRUE(list.valid()) << "fill " << fill << " step " << step;
      if (step % 97 == 0) {
        ASSERT_EQ(contents(list), std::vector<std::string>(model.begin(), model.end()));
      }
    }
    ASSERT_EQ(contents(list), std::vector<std::string>(model.begin(), model.end()));
    ListValue copy(list);
    ASSERT_TRUE(copy.valid());
    ASSERT_EQ(contents(copy), contents(list));
  }
}

}  // namespace
}  // namespace keywarden
