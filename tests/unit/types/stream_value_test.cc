// StreamValue: appends and ranges both ways, node cutting by entries and by bytes, deletion
// flags and node removal, exact and approximate trims, the 7.0 counters (first ID, max deleted
// ID, entries added, lag), the persistence view and reload, and a randomised comparison with
// std::map.
#include "types/stream_value.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace keywarden {
namespace {

using Fields = std::vector<std::string_view>;

std::vector<StreamId> ids(const StreamValue& stream, bool reverse = false, StreamId start = {0, 0},
                          StreamId end = StreamId::max()) {
  std::vector<StreamId> out;
  stream.for_range(start, end, reverse, [&](const StreamEntry& e) {
    out.push_back(e.id);
    return true;
  });
  return out;
}

TEST(StreamId, IncrementDecrementAndText) {
  StreamId id{1, UINT64_MAX};
  EXPECT_TRUE(id.increment());
  EXPECT_EQ(id, (StreamId{2, 0}));
  EXPECT_TRUE(id.decrement());
  EXPECT_EQ(id, (StreamId{1, UINT64_MAX}));
  StreamId max = StreamId::max();
  EXPECT_FALSE(max.increment());
  StreamId zero;
  EXPECT_FALSE(zero.decrement());
  EXPECT_EQ((StreamId{5, 7}).to_string(), "5-7");
}

TEST(StreamId, ParsesAsRedisString2ull) {
  uint64_t v;
  EXPECT_TRUE(parse_stream_number("18446744073709551615", &v));
  EXPECT_EQ(v, UINT64_MAX);
  EXPECT_FALSE(parse_stream_number("18446744073709551616", &v));
  EXPECT_FALSE(parse_stream_number("-1", &v));
  EXPECT_TRUE(parse_stream_number("+5", &v));
  EXPECT_EQ(v, 5u);
  EXPECT_FALSE(parse_stream_number("", &v));
  EXPECT_FALSE(parse_stream_number("1x", &v));
}

TEST(StreamValue, AppendRangeAndReverse) {
  StreamValue stream(4096, 100);
  const Fields f = {"a", "1"};
  for (uint64_t i = 1; i <= 250; ++i) stream.append({i, 0}, f);
  EXPECT_EQ(stream.length(), 250u);
  EXPECT_EQ(stream.node_count(), 3u);  // 100 entries a node
  EXPECT_EQ(ids(stream).size(), 250u);
  const auto back = ids(stream, true, {10, 0}, {20, 0});
  ASSERT_EQ(back.size(), 11u);
  EXPECT_EQ(back.front(), (StreamId{20, 0}));
  EXPECT_EQ(back.back(), (StreamId{10, 0}));
  EXPECT_EQ(stream.first_id(), (StreamId{1, 0}));
  EXPECT_EQ(stream.last_id(), (StreamId{250, 0}));
}

TEST(StreamValue, FieldsComeBackWithSameAndDifferentNames) {
  StreamValue stream(4096, 100);
  stream.append({1, 0}, Fields{"a", "1", "b", "2"});
  stream.append({2, 0}, Fields{"a", "3", "b", "4"});
  stream.append({3, 0}, Fields{"c", ""});
  std::vector<std::string> seen;
  stream.for_range({0, 0}, StreamId::max(), false, [&](const StreamEntry& e) {
    for (const auto& [f, v] : e.fields) seen.push_back(std::string(f) + "=" + std::string(v));
    return true;
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"a=1", "b=2", "a=3", "b=4", "c="}));
}

TEST(StreamValue, NodesCloseByBytes) {
  StreamValue stream(4096, 100);
  const std::string big(1000, 'x');
  for (uint64_t i = 1; i <= 10; ++i) stream.append({i, 0}, Fields{"f", big});
  EXPECT_GT(stream.node_count(), 2u);
  EXPECT_EQ(ids(stream).size(), 10u);
}

TEST(StreamValue, RemoveFlagsAndDropsEmptyNodes) {
  StreamValue stream(4096, 2);
  for (uint64_t i = 1; i <= 5; ++i) stream.append({i, 0}, Fields{"a", "1"});
  EXPECT_EQ(stream.node_count(), 3u);
  EXPECT_TRUE(stream.remove({1, 0}));
  EXPECT_FALSE(stream.remove({1, 0}));
  EXPECT_FALSE(stream.remove({9, 0}));
  EXPECT_EQ(stream.first_id(), (StreamId{2, 0}));
  EXPECT_TRUE(stream.remove({2, 0}));
  EXPECT_EQ(stream.node_count(), 2u);
  EXPECT_EQ(stream.max_deleted_id(), (StreamId{2, 0}));
  EXPECT_EQ(stream.length(), 3u);
  EXPECT_EQ(stream.entries_added(), 5u);
}

TEST(StreamValue, TrimExactAndApproximate) {
  StreamValue stream(4096, 10);
  for (uint64_t i = 1; i <= 35; ++i) stream.append({i, 0}, Fields{"a", "1"});
  StreamTrim approx;
  approx.strategy = StreamTrim::Strategy::kMaxLen;
  approx.approx = true;
  approx.max_length = 22;
  EXPECT_EQ(stream.trim(approx), 10);  // one whole node only
  EXPECT_EQ(stream.length(), 25u);
  StreamTrim exact = approx;
  exact.approx = false;
  EXPECT_EQ(stream.trim(exact), 3);
  EXPECT_EQ(stream.first_id(), (StreamId{14, 0}));
  StreamTrim minid;
  minid.strategy = StreamTrim::Strategy::kMinId;
  minid.min_id = {30, 0};
  EXPECT_EQ(stream.trim(minid), 16);
  EXPECT_EQ(ids(stream).front(), (StreamId{30, 0}));
}

TEST(StreamValue, LagFollowsRedis70) {
  StreamValue stream(4096, 100);
  StreamGroup group;
  int64_t lag = -5;
  ASSERT_TRUE(stream.group_lag(group, &lag));
  EXPECT_EQ(lag, 0);
  for (uint64_t i = 1; i <= 5; ++i) stream.append({i, 0}, Fields{"a", "1"});
  group.entries_read = 2;
  group.last_id = {2, 0};
  ASSERT_TRUE(stream.group_lag(group, &lag));
  EXPECT_EQ(lag, 3);
  stream.remove({4, 0});  // a tombstone after the group's position
  group.entries_read = kInvalidEntriesRead;
  EXPECT_FALSE(stream.group_lag(group, &lag));
  EXPECT_EQ(stream.estimate_distance({5, 0}), 5);
  EXPECT_EQ(stream.estimate_distance({9, 0}), kInvalidEntriesRead);
}

TEST(StreamValue, DumpAndReloadKeepsEverything) {
  StreamValue stream(4096, 3);
  for (uint64_t i = 1; i <= 8; ++i) {
    stream.append({i, i % 2}, i % 3 == 0 ? Fields{"x", "y", "z", "w"} : Fields{"a", "1"});
  }
  stream.remove({2, 0});
  StreamValue loaded(4096, 3);
  uint32_t nodes = 0;
  stream.for_each_node([&](const StreamValue::NodeDump& node) {
    ++nodes;
    loaded.load_node(node.master, node.master_fields);
    for (const auto& [entry, flags] : node.entries) {
      Fields fields;
      for (const auto& [f, v] : entry.fields) {
        fields.push_back(f);
        fields.push_back(v);
      }
      ASSERT_TRUE(loaded.load_entry(entry.id, fields, (flags & 1) != 0));
    }
  });
  EXPECT_EQ(nodes, stream.node_count());
  ASSERT_TRUE(loaded.load_finish(stream.length(), stream.last_id(), stream.first_id(),
                                 stream.max_deleted_id(), stream.entries_added()));
  EXPECT_EQ(ids(loaded), ids(stream));
  EXPECT_EQ(loaded.node_count(), stream.node_count());
  // Out of order and inconsistent loads are refused.
  StreamValue bad(4096, 3);
  bad.load_node({5, 0}, Fields{"a"});
  ASSERT_TRUE(bad.load_entry({5, 0}, Fields{"a", "1"}, false));
  EXPECT_FALSE(bad.load_entry({5, 0}, Fields{"a", "1"}, false));
  EXPECT_FALSE(bad.load_entry({4, 0}, Fields{"a", "1"}, false));
  EXPECT_FALSE(bad.load_finish(2, {9, 0}, {5, 0}, {}, 2));
  EXPECT_FALSE(bad.load_finish(1, {4, 0}, {5, 0}, {}, 1));
}

TEST(StreamValue, RandomisedAgainstMap) {
  std::mt19937_64 rng(23);
  for (int64_t max_entries : {1, 3, 100}) {
    StreamValue stream(256, max_entries);
    std::map<StreamId, std::string> model;
    uint64_t ms = 1;
    for (int step = 0; step < 3000; ++step) {
      const int op = static_cast<int>(rng() % 10);
      if (op < 6) {
        ms += rng() % 3;
        StreamId id{ms, 0};
        if (!model.empty() && id <= model.rbegin()->first)
          id = {model.rbegin()->first.ms, model.rbegin()->first.seq + 1};
        if (id <= stream.last_id()) id = {stream.last_id().ms, stream.last_id().seq + 1};
        const std::string value(rng() % 40, 'v');
        stream.append(id, Fields{"f", value});
        model[id] = value;
      } else if (op < 8 && !model.empty()) {
        auto it = model.begin();
        std::advance(it, static_cast<long>(rng() % model.size()));
        EXPECT_TRUE(stream.remove(it->first));
        model.erase(it);
      } else if (op == 8) {
        StreamTrim trim;
        trim.strategy = StreamTrim::Strategy::kMaxLen;
        trim.max_length = static_cast<int64_t>(rng() % 50);
        trim.approx = (rng() % 2) == 0;
        stream.trim(trim);
        // The model keeps what the stream kept: whole nodes or entries from the front.
        while (model.size() > stream.length()) model.erase(model.begin());
      } else {
        const auto got = ids(stream, (rng() % 2) == 0);
        EXPECT_EQ(got.size(), model.size());
      }
      ASSERT_EQ(stream.length(), model.size());
    }
    std::vector<StreamId> expected;
    for (const auto& [id, value] : model) expected.push_back(id);
    EXPECT_EQ(ids(stream), expected);
  }
}

}  // namespace
}  // namespace keywarden
