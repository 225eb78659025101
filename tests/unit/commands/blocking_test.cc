// BlockingRegistry (waiters per key, deadlines, ready keys) and the timeout parser.
#include "commands/blocking.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "commands/client_session.h"
#include "commands/command_table.h"
#include "commands/errors.h"

namespace keywarden {
namespace {

class BlockingRegistryTest : public ::testing::Test {
 protected:
  void block(ClientSession& session, std::vector<std::string_view> keys, int64_t deadline = 0,
             int db = 0) {
    std::vector<std::string_view> args = {"blpop"};
    args.insert(args.end(), keys.begin(), keys.end());
    args.push_back("0");
    registry.block(session, command, args, db, keys, ValueType::kList, deadline, 1000);
  }

  CommandSpec spec{"blpop", -3};
  Command command{&spec, "blpop", 0};
  BlockingRegistry registry;
  ClientSession a, b, c;
};

TEST_F(BlockingRegistryTest, WaitersAreListedPerKeyOldestFirst) {
  block(a, {"k"});
  block(b, {"other", "k"});
  block(c, {"k", "k"});  // a key named twice is waited on once
  EXPECT_EQ(registry.blocked_count(), 3u);
  EXPECT_EQ(registry.waiters(0, "k"), (std::vector<ClientSession*>{&a, &b, &c}));
  EXPECT_EQ(registry.waiters(0, "other"), (std::vector<ClientSession*>{&b}));
  EXPECT_TRUE(registry.waiters(1, "k").empty());
  EXPECT_EQ(c.blocked.keys(), (std::vector<std::string>{"k"}));
  EXPECT_EQ(b.blocked.args(), (std::vector<std::string>{"blpop", "other", "k", "0"}));

  registry.unblock(b);
  EXPECT_FALSE(b.blocked.blocked());
  EXPECT_EQ(registry.waiters(0, "k"), (std::vector<ClientSession*>{&a, &c}));
  EXPECT_TRUE(registry.waiters(0, "other").empty());
  registry.unblock(b);  // not blocked: nothing happens
  EXPECT_EQ(registry.blocked_count(), 2u);
}

TEST_F(BlockingRegistryTest, OnlyKeysWithWaitersBecomeReadyOnceEach) {
  registry.signal(0, "k");  // nobody blocked: nothing recorded
  EXPECT_FALSE(registry.has_ready());
  block(a, {"k"});
  block(b, {"k"}, 0, 3);
  registry.signal(0, "nobody-waits");
  registry.signal(0, "k");
  registry.signal(0, "k");
  registry.signal(3, "k");
  std::vector<BlockingRegistry::ReadyKey> ready = registry.take_ready();
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_EQ(ready[0].db, 0);
  EXPECT_EQ(ready[0].key, "k");
  EXPECT_EQ(ready[1].db, 3);
  EXPECT_FALSE(registry.has_ready());
}

TEST_F(BlockingRegistryTest, SwappedDatabaseMakesAllItsWaitedKeysReady) {
  block(a, {"x", "y"}, 0, 2);
  registry.signal_all_in_db(2);
  EXPECT_EQ(registry.take_ready().size(), 2u);
  registry.signal_all_in_db(5);
  EXPECT_FALSE(registry.has_ready());
}

TEST_F(BlockingRegistryTest, DeadlinesAreIndexedEarliestFirst) {
  block(a, {"k"}, 5000);
  block(b, {"k"});
  block(c, {"k"}, 3000);
  EXPECT_EQ(registry.timed_count(), 2u);
  EXPECT_EQ(registry.earliest_deadline_ms(), 3000);
  EXPECT_TRUE(registry.timed_out(3000).empty());  // due only once the deadline has passed
  EXPECT_EQ(registry.timed_out(3001), (std::vector<ClientSession*>{&c}));
  EXPECT_EQ(registry.timed_out(9999), (std::vector<ClientSession*>{&c, &a}));
  registry.unblock(c);
  EXPECT_EQ(registry.earliest_deadline_ms(), 5000);
  registry.unblock(a);
  EXPECT_EQ(registry.earliest_deadline_ms(), 0);
}

TEST_F(BlockingRegistryTest, DestroyedSessionLeavesTheRegistry) {
  {
    ClientSession gone;
    block(gone, {"k"}, 100);
    EXPECT_EQ(registry.blocked_count(), 1u);
  }
  EXPECT_EQ(registry.blocked_count(), 0u);
  EXPECT_TRUE(registry.waiters(0, "k").empty());
  EXPECT_EQ(registry.earliest_deadline_ms(), 0);
}

TEST(ParseBlockTimeout, ReadsSecondsAsRedis70Does) {
  int64_t deadline = -1;
  std::string_view error;
  ASSERT_TRUE(parse_block_timeout("0", 1000, &deadline, &error));
  EXPECT_EQ(deadline, 0);
  ASSERT_TRUE(parse_block_timeout("1.5", 1000, &deadline, &error));
  EXPECT_EQ(deadline, 2500);
  // Rounded up to whole milliseconds, as Redis 7.0 (ceill): a positive fraction waits at
  // least 1 ms, never forever; "0.001" is just below 1 ms in binary.
  ASSERT_TRUE(parse_block_timeout("0.0001", 1000, &deadline, &error));
  EXPECT_EQ(deadline, 1001);
  ASSERT_TRUE(parse_block_timeout("0.001", 1000, &deadline, &error));
  EXPECT_EQ(deadline, 1001);
  ASSERT_TRUE(parse_block_timeout("0.01", 1000, &deadline, &error));
  EXPECT_EQ(deadline, 1010);
  ASSERT_TRUE(parse_block_timeout("0.5", 1000, &deadline, &error));
  EXPECT_EQ(deadline, 1500);
  ASSERT_TRUE(parse_block_timeout("-0.0001", 1000, &deadline, &error));
  EXPECT_EQ(deadline, 0);  // rounds up to 0 ms: waits forever, as Redis 7.0
  ASSERT_TRUE(parse_block_timeout("0x10", 1000, &deadline, &error));
  EXPECT_EQ(deadline, 17000);
  ASSERT_TRUE(parse_block_timeout("9223372036854775", 1000, &deadline, &error));
  EXPECT_EQ(deadline, INT64_MAX);

  for (std::string_view negative : {"-1", "1e400", "inf", "9223372036854775807", "-inf"}) {
    EXPECT_FALSE(parse_block_timeout(negative, 1000, &deadline, &error)) << negative;
    EXPECT_EQ(error, errors::kTimeoutNegative) << negative;
  }
  for (std::string_view bad : {"abc", "", "1 ", "nan", " 1"}) {
    EXPECT_FALSE(parse_block_timeout(bad, 1000, &deadline, &error)) << bad;
    EXPECT_EQ(error, errors::kTimeoutNotFloat) << bad;
  }
}

}  // namespace
}  // namespace keywarden
