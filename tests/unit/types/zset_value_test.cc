// ZSetValue: both encodings checked against a std::set model under random operations (adds,
// updates, ZADD options, removals, ranks, score and lex ranges, range deletions, pops), the
// skiplist's spans and links after every step, conversions at Redis 7.0's thresholds, deep
// copies, random choice, and the SCAN guarantee over the skiplist's table across resizes.
#include "types/zset_value.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace keywarden {
namespace {

using Pair = std::pair<double, std::string>;
constexpr double kInf = std::numeric_limits<double>::infinity();

// The reference: elements ordered by (score, member), plus member → score.
struct Model {
  std::set<Pair> ordered;
  std::map<std::string, double> scores;

  void set(const std::string& member, double score) {
    auto it = scores.find(member);
    if (it != scores.end()) ordered.erase({it->second, member});
    scores[member] = score;
    ordered.insert({score, member});
  }
  bool remove(const std::string& member) {
    auto it = scores.find(member);
    if (it == scores.end()) return false;
    ordered.erase({it->second, member});
    scores.erase(it);
    return true;
  }
  std::vector<Pair> all() const { return {ordered.begin(), ordered.end()}; }
};

std::vector<Pair> elements_of(const ZSetValue& zset) {
  std::vector<Pair> out;
  zset.for_each([&](std::string_view m, double s) { out.emplace_back(s, std::string(m)); });
  return out;
}

// From `cursor` upwards while `keep` holds.
template <typename Keep>
std::vector<Pair> walk_up(ZSetValue::Cursor cursor, Keep&& keep) {
  std::vector<Pair> out;
  for (; cursor.valid() && keep(cursor); cursor.next()) {
    out.emplace_back(cursor.score(), std::string(cursor.member()));
  }
  return out;
}
template <typename Keep>
std::vector<Pair> walk_down(ZSetValue::Cursor cursor, Keep&& keep) {
  std::vector<Pair> out;
  for (; cursor.valid() && keep(cursor); cursor.prev()) {
    out.emplace_back(cursor.score(), std::string(cursor.member()));
  }
  return out;
}

LexBound bound(std::string_view text) {
  LexBound b;
  if (text == "-") {
    b.kind = LexBound::Kind::kMinusInfinity;
    b.exclusive = true;
  } else if (text == "+") {
    b.kind = LexBound::Kind::kPlusInfinity;
    b.exclusive = true;
  } else {
    b.exclusive = text[0] == '(';
    b.member = std::string(text.substr(1));
  }
  return b;
}

LexRange lex(std::string_view min, std::string_view max) {
  return LexRange{bound(min), bound(max)};
}

std::string random_member(std::mt19937_64& rng, int alphabet) {
  std::uniform_int_distribution<int> length(0, 3);
  std::uniform_int_distribution<int> letter(0, alphabet - 1);
  std::string member;
  for (int n = length(rng); n > 0; --n) member += static_cast<char>('a' + letter(rng));
  return member;
}

double random_score(std::mt19937_64& rng, int distinct) {
  std::uniform_int_distribution<int> pick(0, distinct + 1);
  const int value = pick(rng);
  if (value == distinct) return kInf;
  if (value == distinct + 1) return -kInf;
  return value / 2.0 - 3;
}

ScoreRange random_score_range(std::mt19937_64& rng, int distinct) {
  ScoreRange range;
  range.min = random_score(rng, distinct);
  range.max = random_score(rng, distinct);
  range.min_exclusive = rng() % 2 == 0;
  range.max_exclusive = rng() % 2 == 0;
  return range;
}

LexBound random_bound(std::mt19937_64& rng, int alphabet) {
  switch (rng() % 6) {
    case 0:
      return bound("-");
    case 1:
      return bound("+");
    case 2:
      return bound("(" + random_member(rng, alphabet));
    default:
      return bound("[" + random_member(rng, alphabet));
  }
}

// Runs random operations on a ZSetValue and a Model and compares them after each one.
// `same_score` keeps every score equal, so that lex ranges are meaningful.
void run_random(bool start_skiplist, ZSetLimits limits, bool same_score, uint64_t seed, int steps) {
  std::mt19937_64 rng(seed);
  ZSetValue zset(start_skiplist);
  Model model;
  const int alphabet = same_score ? 5 : 4;
  const int distinct = 8;
  for (int step = 0; step < steps; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    const int op = static_cast<int>(rng() % 12);
    const std::string member = random_member(rng, alphabet);
    const double score = same_score ? 0 : random_score(rng, distinct);
    switch (op) {
      case 0:
      case 1:
      case 2: {  // plain add / update
        double new_score = std::nan("");
        const bool existed = model.scores.count(member) != 0;
        const double before = existed ? model.scores[member] : 0;
        ZSetValue::AddResult result =
            zset.add(member, score, ZSetValue::kAddNone, limits, &new_score);
        EXPECT_EQ(new_score, score);
        if (!existed) {
          EXPECT_EQ(result, ZSetValue::AddResult::kAdded);
        } else if (before == score) {
          EXPECT_EQ(result, ZSetValue::AddResult::kUnchanged);
        } else {
          EXPECT_EQ(result, ZSetValue::AddResult::kUpdated);
        }
        model.set(member, score);
        break;
      }
      case 3: {  // ZADD options
        static constexpr uint8_t kOptions[] = {ZSetValue::kAddNx,
                                               ZSetValue::kAddXx,
                                               ZSetValue::kAddGt,
                                               ZSetValue::kAddLt,
                                               ZSetValue::kAddIncr,
                                               ZSetValue::kAddXx | ZSetValue::kAddGt,
                                               ZSetValue::kAddIncr | ZSetValue::kAddLt};
        const uint8_t flags = kOptions[rng() % std::size(kOptions)];
        const bool existed = model.scores.count(member) != 0;
        const double current = existed ? model.scores[member] : 0;
        double wanted = score;
        if ((flags & ZSetValue::kAddIncr) && existed) wanted = current + score;
        ZSetValue::AddResult expected;
        if (std::isnan(wanted)) {
          expected = ZSetValue::AddResult::kNaN;
        } else if (existed) {
          if ((flags & ZSetValue::kAddNx) || ((flags & ZSetValue::kAddGt) && wanted <= current) ||
              ((flags & ZSetValue::kAddLt) && wanted >= current)) {
            expected = ZSetValue::AddResult::kSkipped;
          } else {
            expected = wanted == current ? ZSetValue::AddResult::kUnchanged
                                         : ZSetValue::AddResult::kUpdated;
          }
        } else {
          expected = (flags & ZSetValue::kAddXx) ? ZSetValue::AddResult::kSkipped
                                                 : ZSetValue::AddResult::kAdded;
        }
        double new_score = 12345;
        EXPECT_EQ(zset.add(member, score, flags, limits, &new_score), expected);
        if (expected == ZSetValue::AddResult::kAdded ||
            expected == ZSetValue::AddResult::kUpdated ||
            expected == ZSetValue::AddResult::kUnchanged) {
          EXPECT_EQ(new_score, wanted);
          model.set(member, wanted);
        }
        break;
      }
      case 4: {  // remove
        EXPECT_EQ(zset.remove(member), model.remove(member));
        break;
      }
      case 5: {  // rank and score
        double found = 0;
        const int64_t rank = zset.rank(member, false, &found);
        const int64_t reverse = zset.rank(member, true);
        auto it = model.scores.find(member);
        if (it == model.scores.end()) {
          EXPECT_EQ(rank, -1);
          EXPECT_EQ(reverse, -1);
          EXPECT_FALSE(zset.contains(member));
        } else {
          const auto position = model.ordered.find({it->second, member});
          const int64_t expected =
              static_cast<int64_t>(std::distance(model.ordered.begin(), position));
          EXPECT_EQ(rank, expected);
          EXPECT_EQ(reverse, static_cast<int64_t>(model.ordered.size()) - 1 - expected);
          EXPECT_EQ(found, it->second);
        }
        break;
      }
      case 6: {  // score range, both directions, count
        const ScoreRange range = random_score_range(rng, distinct);
        std::vector<Pair> expected;
        for (const Pair& pair : model.ordered) {
          if (range.contains(pair.first)) expected.push_back(pair);
        }
        auto in = [&](const ZSetValue::Cursor& c) { return range.contains(c.score()); };
        EXPECT_EQ(walk_up(zset.first_in(range), in), expected);
        std::vector<Pair> reversed(expected.rbegin(), expected.rend());
        EXPECT_EQ(walk_down(zset.last_in(range), in), reversed);
        EXPECT_EQ(zset.count_in(range), expected.size());
        break;
      }
      case 7: {  // lex range (meaningful with one score)
        if (!same_score) break;
        LexRange range{random_bound(rng, alphabet), random_bound(rng, alphabet)};
        std::vector<Pair> expected;
        if (!range.always_empty()) {
          for (const Pair& pair : model.ordered) {
            if (range.contains(pair.second)) expected.push_back(pair);
          }
        }
        auto in = [&](const ZSetValue::Cursor& c) { return range.contains(c.member()); };
        EXPECT_EQ(walk_up(zset.first_in(range), in), expected);
        std::vector<Pair> reversed(expected.rbegin(), expected.rend());
        EXPECT_EQ(walk_down(zset.last_in(range), in), reversed);
        EXPECT_EQ(zset.count_in(range), expected.size());
        if (rng() % 4 == 0) {
          EXPECT_EQ(zset.remove_range(range), expected.size());
          for (const Pair& pair : expected) model.remove(pair.second);
        }
        break;
      }
      case 8: {  // rank range walk and rank deletion
        if (model.ordered.empty()) break;
        const size_t n = model.ordered.size();
        size_t start = rng() % n;
        size_t end = start + rng() % (n - start);
        const std::vector<Pair> all = model.all();
        std::vector<Pair> expected(all.begin() + start, all.begin() + end + 1);
        size_t left = end - start + 1;
        EXPECT_EQ(walk_up(zset.at_rank(start), [&](const auto&) { return left-- > 0; }), expected);
        if (rng() % 3 == 0) {
          EXPECT_EQ(zset.remove_rank_range(start, end), expected.size());
          for (const Pair& pair : expected) model.remove(pair.second);
        }
        break;
      }
      case 9: {  // score range deletion
        const ScoreRange range = random_score_range(rng, distinct);
        std::vector<Pair> expected;
        for (const Pair& pair : model.ordered) {
          if (range.contains(pair.first)) expected.push_back(pair);
        }
        EXPECT_EQ(zset.remove_range(range), expected.size());
        for (const Pair& pair : expected) model.remove(pair.second);
        break;
      }
      case 10: {  // pop
        if (model.ordered.empty()) break;
        const bool highest = rng() % 2 == 0;
        const Pair expected = highest ? *model.ordered.rbegin() : *model.ordered.begin();
        const ZSetValue::Element popped = zset.pop(highest);
        EXPECT_EQ(Pair(popped.score, popped.member), expected);
        model.remove(expected.second);
        break;
      }
      case 11: {  // copy
        if (rng() % 8 != 0) break;
        ZSetValue copy(zset);
        EXPECT_EQ(copy.encoding(), zset.encoding());
        EXPECT_EQ(elements_of(copy), model.all());
        EXPECT_TRUE(copy.check_invariants());
        zset = copy;
        break;
      }
    }
    ASSERT_EQ(zset.size(), model.ordered.size());
    ASSERT_EQ(elements_of(zset), model.all());
    ASSERT_TRUE(zset.check_invariants());
  }
}

TEST(ZSetValue, RandomOperationsSkiplist) {
  for (uint64_t seed = 1; seed <= 6; ++seed) run_random(true, ZSetLimits{}, false, seed, 3000);
}

TEST(ZSetValue, RandomOperationsListpack) {
  ZSetLimits huge{1 << 20, 1 << 20};
  for (uint64_t seed = 1; seed <= 6; ++seed) run_random(false, huge, false, seed, 3000);
}

TEST(ZSetValue, RandomOperationsConverting) {
  // Small limits: sets keep crossing into the skiplist as they grow.
  ZSetLimits small{6, 2};
  for (uint64_t seed = 1; seed <= 6; ++seed) run_random(false, small, false, seed, 2000);
}

TEST(ZSetValue, RandomLexOperationsBothEncodings) {
  ZSetLimits huge{1 << 20, 1 << 20};
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    run_random(true, huge, true, seed, 3000);
    run_random(false, huge, true, seed, 3000);
  }
}

TEST(ZSetValue, LargeSkiplistRanks) {
  ZSetValue zset(true);
  ZSetLimits limits;
  std::mt19937_64 rng(42);
  std::vector<int> values(20000);
  for (int i = 0; i < 20000; ++i) values[i] = i;
  std::shuffle(values.begin(), values.end(), rng);
  for (int v : values) zset.set("m" + std::to_string(v), v, limits);
  ASSERT_TRUE(zset.check_invariants());
  for (int i = 0; i < 20000; i += 997) {
    EXPECT_EQ(zset.rank("m" + std::to_string(i), false), i);
    EXPECT_EQ(zset.at_rank(i).member(), "m" + std::to_string(i));
  }
  EXPECT_EQ(zset.count_in(ScoreRange{100, 199, false, false}), 100u);
  EXPECT_EQ(zset.count_in(ScoreRange{100, 199, true, true}), 98u);
  EXPECT_EQ(zset.remove_rank_range(1000, 1999), 1000u);
  EXPECT_EQ(zset.size(), 19000u);
  EXPECT_EQ(zset.rank("m2000", false), 1000);
  ASSERT_TRUE(zset.check_invariants());
}

TEST(ZSetValue, OrderIsScoreThenMemberBytes) {
  for (bool skiplist : {false, true}) {
    ZSetValue zset(skiplist);
    ZSetLimits limits;
    zset.set("b", 1, limits);
    zset.set("a", 1, limits);
    zset.set("ab", 1, limits);
    zset.set(std::string("a\0", 2), 1, limits);
    zset.set("\xff", 1, limits);
    zset.set("z", -kInf, limits);
    zset.set("y", kInf, limits);
    zset.set("neg", -0.0, limits);
    std::vector<std::string> members;
    zset.for_each([&](std::string_view m, double) { members.emplace_back(m); });
    EXPECT_EQ(members, (std::vector<std::string>{"z", "neg", "a", std::string("a\0", 2), "ab", "b",
                                                 "\xff", "y"}));
  }
}

TEST(ZSetValue, ConvertsAtRedisThresholds) {
  ZSetLimits limits;  // 128 entries, 64 bytes
  ZSetValue zset;
  for (int i = 0; i < 128; ++i) zset.set("m" + std::to_string(i), i, limits);
  EXPECT_TRUE(zset.is_listpack());
  EXPECT_EQ(zset.encoding(), Encoding::kListpack);
  // An update of an existing member never converts.
  zset.set("m5", 1000, limits);
  EXPECT_TRUE(zset.is_listpack());
  zset.set("m128", 128, limits);
  EXPECT_FALSE(zset.is_listpack());
  EXPECT_EQ(zset.encoding(), Encoding::kSkiplist);
  EXPECT_EQ(zset.size(), 129u);
  // Never back on its own.
  while (zset.size() > 1) zset.pop(false);
  EXPECT_FALSE(zset.is_listpack());

  ZSetValue long_member;
  long_member.set(std::string(64, 'x'), 1, limits);
  EXPECT_TRUE(long_member.is_listpack());
  long_member.set(std::string(65, 'x'), 1, limits);
  EXPECT_FALSE(long_member.is_listpack());
  EXPECT_TRUE(long_member.check_invariants());

  // XX on a missing member never converts.
  ZSetValue xx;
  EXPECT_EQ(xx.add(std::string(100, 'x'), 1, ZSetValue::kAddXx, limits),
            ZSetValue::AddResult::kSkipped);
  EXPECT_TRUE(xx.is_listpack());
  EXPECT_EQ(xx.add("m", std::nan(""), ZSetValue::kAddNone, limits), ZSetValue::AddResult::kNaN);
  EXPECT_TRUE(xx.empty());

  // zset-max-listpack-entries 0: the first insertion converts.
  ZSetValue zero;
  zero.set("a", 1, ZSetLimits{0, 64});
  EXPECT_FALSE(zero.is_listpack());
}

TEST(ZSetValue, FromSortedPicksTheEncoding) {
  ZSetLimits limits{3, 4};
  using E = ZSetValue::Element;
  auto small = ZSetValue::from_sorted({E{"a", 1}, E{"b", 2}, E{"cccc", 3}}, limits);
  EXPECT_TRUE(small->is_listpack());
  auto many = ZSetValue::from_sorted({E{"a", 1}, E{"b", 2}, E{"c", 3}, E{"d", 4}}, limits);
  EXPECT_FALSE(many->is_listpack());
  EXPECT_TRUE(many->check_invariants());
  auto wide = ZSetValue::from_sorted({E{"a", 1}, E{"bbbbb", 2}}, limits);
  EXPECT_FALSE(wide->is_listpack());
  EXPECT_EQ(elements_of(*wide), (std::vector<Pair>{{1, "a"}, {2, "bbbbb"}}));
  EXPECT_TRUE(many->fits_listpack(ZSetLimits{4, 1}));
  EXPECT_FALSE(many->fits_listpack(ZSetLimits{3, 1}));
  many->convert_to_listpack();
  EXPECT_TRUE(many->is_listpack());
  EXPECT_EQ(elements_of(*many), (std::vector<Pair>{{1, "a"}, {2, "b"}, {3, "c"}, {4, "d"}}));
}

TEST(ZSetValue, LexRangeEdges) {
  EXPECT_TRUE(lex("-", "-").always_empty());
  EXPECT_TRUE(lex("+", "+").always_empty());
  EXPECT_TRUE(lex("+", "-").always_empty());
  EXPECT_FALSE(lex("-", "+").always_empty());
  EXPECT_TRUE(lex("[b", "[a").always_empty());
  EXPECT_TRUE(lex("(a", "[a").always_empty());
  EXPECT_FALSE(lex("[a", "[a").always_empty());
  for (bool skiplist : {false, true}) {
    ZSetValue zset(skiplist);
    for (const char* m : {"a", "b", "c", "d"}) zset.set(m, 0, ZSetLimits{});
    EXPECT_EQ(zset.count_in(lex("-", "+")), 4u);
    EXPECT_EQ(zset.count_in(lex("(a", "[c")), 2u);
    EXPECT_EQ(zset.count_in(lex("[a", "(a")), 0u);
    EXPECT_EQ(zset.count_in(lex("[", "+")), 4u);  // "[" alone: the empty string, inclusive
    EXPECT_EQ(zset.count_in(lex("(d", "+")), 0u);
    EXPECT_EQ(zset.remove_range(lex("(a", "(d")), 2u);
    EXPECT_EQ(elements_of(zset), (std::vector<Pair>{{0, "a"}, {0, "d"}}));
  }
}

TEST(ZSetValue, ScoreRangeEdges) {
  for (bool skiplist : {false, true}) {
    ZSetValue zset(skiplist);
    ZSetLimits limits;
    zset.set("lo", -kInf, limits);
    zset.set("a", 1, limits);
    zset.set("b", 2, limits);
    zset.set("hi", kInf, limits);
    EXPECT_EQ(zset.count_in(ScoreRange{-kInf, kInf, false, false}), 4u);
    EXPECT_EQ(zset.count_in(ScoreRange{-kInf, kInf, true, true}), 2u);
    EXPECT_EQ(zset.count_in(ScoreRange{kInf, kInf, false, false}), 1u);
    EXPECT_EQ(zset.count_in(ScoreRange{2, 1, false, false}), 0u);
    EXPECT_EQ(zset.count_in(ScoreRange{1, 1, false, true}), 0u);
    EXPECT_EQ(zset.count_in(ScoreRange{1, 1, false, false}), 1u);
    EXPECT_FALSE(zset.first_in(ScoreRange{3, 4, false, false}).valid());
    EXPECT_FALSE(zset.last_in(ScoreRange{1.5, 1.7, false, false}).valid());
  }
}

TEST(ZSetValue, RandomChoice) {
  for (bool skiplist : {false, true}) {
    ZSetValue zset(skiplist);
    for (int i = 0; i < 50; ++i) zset.set("m" + std::to_string(i), i, ZSetLimits{});
    std::mt19937_64 rng(7);
    std::set<std::string> seen;
    for (int i = 0; i < 2000; ++i) {
      auto [member, score] = zset.random_element(rng);
      EXPECT_EQ("m" + std::to_string(static_cast<int>(score)), member);
      seen.insert(std::string(member));
    }
    EXPECT_EQ(seen.size(), 50u);
    for (size_t count : {size_t{1}, size_t{10}, size_t{40}, size_t{50}, size_t{80}}) {
      auto chosen = zset.random_distinct(count, rng);
      std::set<std::string> distinct;
      for (auto& [member, score] : chosen) distinct.insert(std::string(member));
      EXPECT_EQ(chosen.size(), std::min<size_t>(count, 50));
      EXPECT_EQ(distinct.size(), chosen.size());
    }
  }
}

TEST(ZSetValue, ScanGuaranteeAcrossResizes) {
  ZSetValue zset(true);
  ZSetLimits limits;
  for (int i = 0; i < 1000; ++i) zset.set("keep" + std::to_string(i), i, limits);
  std::set<std::string> seen;
  std::mt19937_64 rng(3);
  uint64_t cursor = 0;
  int step = 0;
  do {
    cursor = zset.scan(cursor, [&](std::string_view m, double s) {
      if (m.substr(0, 4) == "keep") {
        EXPECT_EQ("keep" + std::to_string(static_cast<int>(s)), m);
      }
      seen.insert(std::string(m));
    });
    // Grow, then shrink, the table while the scan goes on.
    if (step < 30) {
      for (int i = 0; i < 200; ++i) zset.set("tmp" + std::to_string(step * 200 + i), -1, limits);
    } else if (step == 30) {
      for (int i = 0; i < 6000; ++i) zset.remove("tmp" + std::to_string(i));
    }
    ++step;
    ASSERT_LT(step, 100000);
  } while (cursor != 0);
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.count("keep" + std::to_string(i))) << i;
  EXPECT_TRUE(zset.check_invariants());

  ZSetValue small;
  small.set("a", 1, limits);
  small.set("b", 2, limits);
  std::vector<std::string> all;
  EXPECT_EQ(small.scan(0, [&](std::string_view m, double) { all.emplace_back(m); }), 0u);
  EXPECT_EQ(all, (std::vector<std::string>{"a", "b"}));
}

TEST(ZSetValue, PayloadBytesGrowWithContent) {
  ZSetLimits limits;
  ZSetValue small;
  const size_t empty_bytes = small.payload_bytes();
  for (int i = 0; i < 100; ++i)
    small.set(std::string(40, 'a' + i % 26) + std::to_string(i), i, limits);
  EXPECT_GT(small.payload_bytes(), empty_bytes + 100 * 40);
  ZSetValue big(small);
  big.convert_to_skiplist();
  // The skiplist costs more than the flat vector for the same elements.
  EXPECT_GT(big.payload_bytes(), small.payload_bytes());
  EXPECT_LT(big.payload_bytes(), small.payload_bytes() * 4);
}

// The flat listpack: member lengths around the LEB128 boundaries, scores stored as integers
// or doubles (each must come back bit for bit), walks both ways over mixed entry sizes,
// deletions in the middle, and conversion to the skiplist.
TEST(ZSetValue, FlatListpackMemberLengthsAndScores) {
  const ZSetLimits limits{1000, 20000};
  const double two53 = 9007199254740992.0;
  const double scores[] = {
      -kInf,     -1e300, -two53 - 2, -two53, -(two53 - 1), -4611686018427387904.0,
      -1.5,      -1,     0,          5e-324, 0.1,          1,
      63,        64,     127,        128,    8191,         8192,
      two53 - 1, two53,  two53 + 2,  1e300,  kInf};
  const size_t lengths[] = {0, 1, 63, 64, 127, 128, 255, 256, 16383, 16384};
  ZSetValue zset;
  Model model;
  int n = 0;
  for (double score : scores) {
    for (size_t length : lengths) {
      const std::string member = std::string(length, 'm') + std::to_string(n++ % 7);
      if (model.scores.count(member) != 0) continue;
      EXPECT_EQ(zset.add(member, score, ZSetValue::kAddNone, limits), ZSetValue::AddResult::kAdded);
      model.set(member, score);
    }
  }
  ASSERT_TRUE(zset.is_listpack());
  ASSERT_TRUE(zset.check_invariants());
  EXPECT_EQ(elements_of(zset), model.all());
  EXPECT_EQ(walk_down(zset.at_rank(zset.size() - 1), [](const auto&) { return true; }),
            std::vector<Pair>(model.ordered.rbegin(), model.ordered.rend()));
  for (const auto& [member, score] : model.scores) {
    double found = 0;
    ASSERT_TRUE(zset.score_of(member, &found));
    EXPECT_EQ(std::memcmp(&found, &score, sizeof(double)), 0) << score;
  }
  // Moves to other places, deletions in the middle.
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200; ++i) {
    auto it = std::next(model.scores.begin(), static_cast<ptrdiff_t>(rng() % model.scores.size()));
    const std::string member = it->first;
    if (i % 3 == 0) {
      EXPECT_TRUE(zset.remove(member));
      model.remove(member);
    } else {
      const double score = scores[rng() % std::size(scores)] + (i % 2 == 0 ? 0.25 : 0);
      zset.set(member, score, limits);
      model.set(member, score);
    }
    ASSERT_TRUE(zset.check_invariants());
    ASSERT_EQ(elements_of(zset), model.all());
  }
  // -0 is stored as 0, as in Redis's listpack.
  zset.set("zero", -0.0, limits);
  double zero = 1;
  ASSERT_TRUE(zset.score_of("zero", &zero));
  EXPECT_FALSE(std::signbit(zero));
  model.set("zero", 0);
  ZSetValue skiplist(zset);
  skiplist.convert_to_skiplist();
  EXPECT_TRUE(skiplist.check_invariants());
  EXPECT_EQ(elements_of(skiplist), model.all());
  skiplist.convert_to_listpack();
  EXPECT_TRUE(skiplist.check_invariants());
  EXPECT_EQ(elements_of(skiplist), model.all());
}

TEST(ZSetValue, FlatListpackAtTheEntryLimit) {
  ZSetLimits limits;
  ZSetValue zset;
  for (int i = 0; i < 128; ++i) zset.set("m" + std::to_string(i), i * 1.5, limits);
  EXPECT_TRUE(zset.is_listpack());
  // One buffer: short members with a one-byte header and back length, 1-3 or 8 score bytes.
  EXPECT_LT(zset.payload_bytes(), sizeof(ZSetValue) + 2 * 128 * (1 + 4 + 8 + 1));
  std::mt19937_64 rng(5);
  const auto chosen = zset.random_distinct(127, rng);
  std::set<std::string_view> distinct;
  for (const auto& [member, score] : chosen) {
    distinct.insert(member);
    EXPECT_EQ(score, std::stoi(std::string(member.substr(1))) * 1.5);
  }
  EXPECT_EQ(distinct.size(), 127u);
  EXPECT_EQ(zset.pop(true).member, "m127");
  EXPECT_EQ(zset.pop(false).member, "m0");
  zset.set("m0", 0, limits);
  zset.set("m127", 1, limits);
  EXPECT_TRUE(zset.is_listpack());
  zset.set("m128", 2, limits);
  EXPECT_FALSE(zset.is_listpack());
  EXPECT_TRUE(zset.check_invariants());
  EXPECT_EQ(zset.size(), 129u);
}

}  // namespace
}  // namespace keywarden
