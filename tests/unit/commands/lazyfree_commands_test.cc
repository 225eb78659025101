// Which deletions go to the lazy-free thread, per command and per lazyfree-* switch, observed
// through the thread's freed-object count (INFO lazyfreed_objects) after draining it: UNLINK
// always, DEL under lazyfree-lazy-user-del, overwrites and implicit deletes under
// lazyfree-lazy-server-del, expiry under lazyfree-lazy-expire, FLUSHDB/FLUSHALL by their
// modifier or lazyfree-lazy-user-flush. Small values are freed in place whatever the switch.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "command_harness.h"

namespace keywarden::testing {
namespace {

class LazyFreeCommandsTest : public ::testing::Test {
 protected:
  // A hash of `fields` fields: past 512 it is a hashtable whose free effort is its size.
  void make_hash(const std::string& key, int fields) {
    std::vector<std::string> args{"HSET", key};
    for (int i = 0; i < fields; ++i) {
      args.push_back("f" + std::to_string(i));
      args.push_back("v");
    }
    ASSERT_EQ(h.call_args(args), ":" + std::to_string(fields));
  }
  void make_big(const std::string& key) { make_hash(key, 1000); }

  size_t freed() {
    h.state.keyspace().lazy_free().drain();
    return h.state.keyspace().lazy_free().freed_objects();
  }
  CommandSettings& settings() { return h.state.settings(); }
  LazyFreeSettings& storage_settings() { return h.state.keyspace().lazy_free().settings(); }

  CommandHarness h;
};

TEST_F(LazyFreeCommandsTest, UnlinkHandsABigValueToTheThreadAndASmallOneNot) {
  make_big("big");
  make_hash("small", 10);
  EXPECT_EQ(h.call("UNLINK small big missing"), ":2");
  EXPECT_EQ(h.call("EXISTS big small"), ":0");
  EXPECT_EQ(freed(), 1u);
  EXPECT_EQ(h.state.keyspace().lazy_free().pending_objects(), 0u);
  EXPECT_EQ(h.propagated.lines.back(), "0:UNLINK small big missing");
}

TEST_F(LazyFreeCommandsTest, DelFreesInPlaceUnlessLazyUserDel) {
  make_big("a");
  EXPECT_EQ(h.call("DEL a"), ":1");
  EXPECT_EQ(freed(), 0u);
  settings().lazyfree_lazy_user_del = true;
  make_big("a");
  EXPECT_EQ(h.call("DEL a"), ":1");
  EXPECT_EQ(freed(), 1u);
  EXPECT_EQ(h.propagated.lines.back(), "0:DEL a");  // propagated as received, as Redis
}

TEST_F(LazyFreeCommandsTest, GetdelFollowsLazyUserDel) {
  settings().lazyfree_lazy_user_del = true;
  EXPECT_EQ(h.call("SET s v"), "+OK");
  EXPECT_EQ(h.call("GETDEL s"), "\"v\"");
  EXPECT_EQ(h.propagated.lines.back(), "0:UNLINK s");
  EXPECT_EQ(freed(), 0u);  // a string is never worth the thread
}

TEST_F(LazyFreeCommandsTest, SetOverABigValueFollowsLazyServerDel) {
  make_big("k");
  EXPECT_EQ(h.call("SET k v"), "+OK");
  EXPECT_EQ(freed(), 0u);
  settings().lazyfree_lazy_server_del = true;
  make_big("k2");
  EXPECT_EQ(h.call("SET k2 v"), "+OK");
  EXPECT_EQ(h.call("GET k2"), "\"v\"");
  EXPECT_EQ(freed(), 1u);
  make_big("k3");
  EXPECT_EQ(h.call("MSET k3 v"), "+OK");
  EXPECT_EQ(freed(), 2u);
}

TEST_F(LazyFreeCommandsTest, RenameAndCopyOverABigValueFollowLazyServerDel) {
  settings().lazyfree_lazy_server_del = true;
  make_big("target");
  EXPECT_EQ(h.call("SET src v"), "+OK");
  EXPECT_EQ(h.call("RENAME src target"), "+OK");
  EXPECT_EQ(freed(), 1u);
  make_big("dst");
  EXPECT_EQ(h.call("COPY target dst REPLACE"), ":1");
  EXPECT_EQ(freed(), 2u);
}

TEST_F(LazyFreeCommandsTest, StoreCommandsOverABigValueFollowLazyServerDel) {
  settings().lazyfree_lazy_server_del = true;
  EXPECT_EQ(h.call("SADD s1 a b"), ":2");
  make_big("d1");
  EXPECT_EQ(h.call("SUNIONSTORE d1 s1"), ":2");
  EXPECT_EQ(freed(), 1u);
  make_big("d2");
  EXPECT_EQ(h.call("SINTERSTORE d2 s1 nosuch"), ":0");  // an empty result deletes d2
  EXPECT_EQ(h.call("EXISTS d2"), ":0");
  EXPECT_EQ(freed(), 2u);
  make_big("d3");
  EXPECT_EQ(h.call("RPUSH l 3 1 2"), ":3");
  EXPECT_EQ(h.call("SORT l STORE d3"), ":3");
  EXPECT_EQ(freed(), 3u);
  make_big("d4");
  EXPECT_EQ(h.call("ZADD z 1 a"), ":1");
  EXPECT_EQ(h.call("ZRANGESTORE d4 z 0 -1"), ":1");
  EXPECT_EQ(freed(), 4u);
}

TEST_F(LazyFreeCommandsTest, ImplicitDeletesStayInPlaceWithoutLazyServerDel) {
  make_big("target");
  EXPECT_EQ(h.call("SET src v"), "+OK");
  EXPECT_EQ(h.call("RENAME src target"), "+OK");
  make_big("dest");
  EXPECT_EQ(h.call("SADD s1 a"), ":1");
  EXPECT_EQ(h.call("SUNIONSTORE dest s1"), ":1");
  EXPECT_EQ(freed(), 0u);
}

TEST_F(LazyFreeCommandsTest, ActiveExpiryFollowsLazyExpire) {
  make_big("a");
  EXPECT_EQ(h.call("PEXPIRE a 10"), ":1");
  h.advance_ms(11);
  h.active_expire();
  EXPECT_EQ(h.call("DBSIZE"), ":0");
  EXPECT_EQ(freed(), 0u);

  storage_settings().lazy_expire = true;
  make_big("b");
  EXPECT_EQ(h.call("PEXPIRE b 10"), ":1");
  h.advance_ms(11);
  h.active_expire();
  EXPECT_EQ(h.call("DBSIZE"), ":0");
  EXPECT_EQ(freed(), 1u);
  EXPECT_EQ(h.propagated.lines.back(), "0:UNLINK b");
}

TEST_F(LazyFreeCommandsTest, LazyExpiryOnAccessFollowsLazyExpire) {
  storage_settings().lazy_expire = true;
  make_big("a");
  EXPECT_EQ(h.call("PEXPIRE a 10"), ":1");
  h.advance_ms(11);
  EXPECT_EQ(h.call("HLEN a"), ":0");
  EXPECT_EQ(freed(), 1u);
  EXPECT_EQ(h.propagated.lines.back(), "0:UNLINK a");
}

TEST_F(LazyFreeCommandsTest, ExpireInThePastFollowsLazyExpire) {
  storage_settings().lazy_expire = true;
  make_big("a");
  EXPECT_EQ(h.call("EXPIRE a -1"), ":1");
  EXPECT_EQ(freed(), 1u);
  EXPECT_EQ(h.propagated.lines.back(), "0:UNLINK a");
}

TEST_F(LazyFreeCommandsTest, FlushallAsyncEmptiesAtOnceAndCountsEveryKey) {
  make_big("a");
  EXPECT_EQ(h.call("SET b 1"), "+OK");
  EXPECT_EQ(h.call("SELECT 3"), "+OK");
  EXPECT_EQ(h.call("SET c 1"), "+OK");
  EXPECT_EQ(h.call("FLUSHALL ASYNC"), "+OK");
  EXPECT_EQ(h.call("DBSIZE"), ":0");
  EXPECT_EQ(h.call("SELECT 0"), "+OK");
  EXPECT_EQ(h.call("EXISTS a b"), ":0");
  EXPECT_EQ(h.call("SET a again"), "+OK");  // the emptied database is usable at once
  EXPECT_EQ(freed(), 3u);
  EXPECT_EQ(h.call("GET a"), "\"again\"");
}

TEST_F(LazyFreeCommandsTest, FlushdbAsyncTouchesOnlyTheCurrentDatabase) {
  EXPECT_EQ(h.call("SET a 1"), "+OK");
  EXPECT_EQ(h.call("SET b 1"), "+OK");
  EXPECT_EQ(h.call("SELECT 1"), "+OK");
  EXPECT_EQ(h.call("SET c 1"), "+OK");
  EXPECT_EQ(h.call("FLUSHDB ASYNC"), "+OK");
  EXPECT_EQ(freed(), 1u);
  EXPECT_EQ(h.call("SELECT 0"), "+OK");
  EXPECT_EQ(h.call("DBSIZE"), ":2");
}

TEST_F(LazyFreeCommandsTest, FlushSyncAndUnmodifiedFlushFreeInPlaceUnlessLazyUserFlush) {
  make_big("a");
  EXPECT_EQ(h.call("FLUSHALL SYNC"), "+OK");
  make_big("a");
  EXPECT_EQ(h.call("FLUSHALL"), "+OK");
  make_big("a");
  EXPECT_EQ(h.call("FLUSHDB"), "+OK");
  EXPECT_EQ(freed(), 0u);

  settings().lazyfree_lazy_user_flush = true;
  make_big("a");
  EXPECT_EQ(h.call("FLUSHDB"), "+OK");
  EXPECT_EQ(freed(), 1u);
  make_big("a");
  EXPECT_EQ(h.call("FLUSHALL"), "+OK");
  EXPECT_EQ(freed(), 2u);
  make_big("a");
  EXPECT_EQ(h.call("FLUSHALL SYNC"), "+OK");  // an explicit SYNC wins over the switch
  EXPECT_EQ(freed(), 2u);
}

TEST_F(LazyFreeCommandsTest, ThresholdIsMoreThanSixtyFourAllocations) {
  // A skiplist sorted set of exactly 64 members stays on the command thread; 65 go.
  settings().zset_limits.max_listpack_entries = 0;
  std::vector<std::string> args{"ZADD", "z64"};
  for (int i = 0; i < 64; ++i) {
    args.push_back(std::to_string(i));
    args.push_back("m" + std::to_string(i));
  }
  ASSERT_EQ(h.call_args(args), ":64");
  EXPECT_EQ(h.call("OBJECT ENCODING z64"), "\"skiplist\"");
  EXPECT_EQ(h.call("UNLINK z64"), ":1");
  EXPECT_EQ(freed(), 0u);
  args[1] = "z65";
  args.push_back("64");
  args.push_back("m64");
  ASSERT_EQ(h.call_args(args), ":65");
  EXPECT_EQ(h.call("UNLINK z65"), ":1");
  EXPECT_EQ(freed(), 1u);
}

TEST_F(LazyFreeCommandsTest, ListsCountQuicklistNodes) {
  settings().list_max_listpack_size = 1;  // one element per node
  std::vector<std::string> args{"RPUSH", "l"};
  for (int i = 0; i < 65; ++i) args.push_back(std::to_string(i));
  ASSERT_EQ(h.call_args(args), ":65");
  EXPECT_EQ(h.call("UNLINK l"), ":1");
  EXPECT_EQ(freed(), 1u);
  settings().list_max_listpack_size = -2;  // 8 KB nodes: 65 small elements fit in one
  ASSERT_EQ(h.call_args(args), ":65");
  EXPECT_EQ(h.call("UNLINK l"), ":1");
  EXPECT_EQ(freed(), 1u);
}

}  // namespace
}  // namespace keywarden::testing
