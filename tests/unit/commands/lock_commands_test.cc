// LOCK.ACQUIRE / LOCK.RELEASE / LOCK.INFO through the dispatcher: grants on the Redisson hash
// layout, reentrancy, the FIFO queue and every way a lock becomes free handing it to the
// queue's head, the non-blocking forms, bound grants, propagation and INFO's counters.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "command_harness.h"
#include "commands/locks.h"
#include "common/fence_keys.h"

namespace keywarden {
namespace {

using testing::CommandHarness;
using testing::HarnessClient;

TEST(LockCommandsTest, FreeLockIsGrantedAsARedissonHashWithItsLease) {
  CommandHarness h;
  EXPECT_EQ(h.call("LOCK.ACQUIRE lk owner-1 30000"), ":1");
  EXPECT_EQ(h.call("HGETALL lk"), "[\"owner-1\", \"1\"]");
  EXPECT_EQ(h.call("PTTL lk"), ":30000");
  const std::vector<std::string> lines = h.take_propagated();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "0:HINCRBY lk owner-1 1");
  EXPECT_EQ(lines[1], "0:PEXPIREAT lk " + std::to_string(h.clock.wall_ms() + 30000));
}

TEST(LockCommandsTest, SameOwnerReentersAndRenewsTheLease) {
  CommandHarness h;
  EXPECT_EQ(h.call("LOCK.ACQUIRE lk o 1000"), ":1");
  h.advance_ms(500);
  EXPECT_EQ(h.call("LOCK.ACQUIRE lk o 5000"), ":2");
  EXPECT_EQ(h.call("PTTL lk"), ":5000");
  EXPECT_EQ(h.call("LOCK.RELEASE lk o"), ":1");
  EXPECT_EQ(h.call("HGET lk o"), "\"1\"");
  EXPECT_EQ(h.call("LOCK.RELEASE lk o"), ":0");
  EXPECT_EQ(h.call("EXISTS lk"), ":0");
  EXPECT_EQ(h.call("LOCK.RELEASE lk o"), "(nil)");
}

TEST(LockCommandsTest, ReleasePropagatesAsOrdinaryHashCommands) {
  CommandHarness h;
  h.call("LOCK.ACQUIRE lk o 1000");
  h.call("LOCK.ACQUIRE lk o 1000");
  h.take_propagated();
  h.call("LOCK.RELEASE lk o");
  EXPECT_EQ(h.take_propagated(), (std::vector<std::string>{"0:HINCRBY lk o -1"}));
  h.call("LOCK.RELEASE lk o");
  EXPECT_EQ(h.take_propagated(), (std::vector<std::string>{"0:DEL lk"}));
  h.call("LOCK.ACQUIRE lk o 1000");
  h.call("LOCK.ACQUIRE lk o 1000");
  h.take_propagated();
  EXPECT_EQ(h.call("LOCK.RELEASE lk o ALL"), ":0");
  EXPECT_EQ(h.take_propagated(), (std::vector<std::string>{"0:DEL lk"}));
  // Not a plain lock: only the owner's field goes.
  h.call("HSET multi other 1 o 1");
  h.take_propagated();
  EXPECT_EQ(h.call("LOCK.RELEASE multi o"), ":0");
  EXPECT_EQ(h.take_propagated(), (std::vector<std::string>{"0:HDEL multi o"}));
  EXPECT_EQ(h.call("HGETALL multi"), "[\"other\", \"1\"]");
}

TEST(LockCommandsTest, BadArgumentsAndWrongTypes) {
  CommandHarness h;
  h.call("SET s x");
  EXPECT_EQ(h.call("LOCK.ACQUIRE lk o"),
            "-ERR wrong number of arguments for 'lock.acquire' command");
  EXPECT_EQ(h.call("LOCK.ACQUIRE lk o 0"), "-ERR lease must be a positive integer (milliseconds)");
  EXPECT_EQ(h.call("LOCK.ACQUIRE lk o -5"), "-ERR lease must be a positive integer (milliseconds)");
  EXPECT_EQ(h.call("LOCK.ACQUIRE lk o x"), "-ERR lease must be a positive integer (milliseconds)");
  EXPECT_EQ(h.call("LOCK.ACQUIRE lk o 9223372036854775807"),
            "-ERR invalid expire time in 'lock.acquire' command");
  EXPECT_EQ(h.call("LOCK.ACQUIRE lk o 10 TIMEOUT"), "-ERR syntax error");
  EXPECT_EQ(h.call("LOCK.ACQUIRE lk o 10 TIMEOUT -1"), "-ERR timeout is negative");
  EXPECT_EQ(h.call("LOCK.ACQUIRE lk o 10 TIMEOUT 1.5"),
            "-ERR timeout is not an integer or out of range");
  EXPECT_EQ(h.call("LOCK.ACQUIRE lk o 10 FOO"), "-ERR syntax error");
  EXPECT_EQ(h.call("LOCK.ACQUIRE s o 10"), std::string(testing::kWrongType));
  EXPECT_EQ(h.call("LOCK.RELEASE s o"), std::string(testing::kWrongType));
  EXPECT_EQ(h.call("LOCK.INFO s"), std::string(testing::kWrongType));
  EXPECT_EQ(h.call("LOCK.RELEASE lk o FOO"), "-ERR syntax error");
  EXPECT_EQ(h.call("LOCK.RELEASE lk o ALL x"), "-ERR syntax error");
  h.call("HSET bad o notanumber");
  EXPECT_EQ(h.call("LOCK.ACQUIRE bad o 10"), "-ERR hash value is not an integer");
  EXPECT_EQ(h.call("LOCK.RELEASE bad o"), "-ERR hash value is not an integer");
  EXPECT_EQ(h.call("EXISTS lk"), ":0");
}

TEST(LockCommandsTest, HeldLockWithoutTimeoutRepliesNil) {
  CommandHarness h;
  h.call("LOCK.ACQUIRE lk a 1000");
  EXPECT_EQ(h.call("LOCK.ACQUIRE lk b 1000"), "(nil)");
}

TEST(LockCommandsTest, WaitersAreGrantedInStrictArrivalOrder) {
  CommandHarness h;
  EXPECT_EQ(h.call("LOCK.ACQUIRE lk holder 60000"), ":1");
  std::vector<HarnessClient*> waiters;
  for (int i = 0; i < 5; ++i) {
    HarnessClient& waiter = h.new_client();
    EXPECT_EQ(h.call_as(waiter, "LOCK.ACQUIRE lk w" + std::to_string(i) + " 60000 TIMEOUT 0"),
              "(blocked)");
    waiters.push_back(&waiter);
  }
  EXPECT_EQ(h.call("LOCK.INFO lk"),
            "[\"holder\", \"holder\", \"holds\", :1, \"lease-ms\", :60000, \"waiters\", "
            "[[\"w0\", :0], [\"w1\", :0], [\"w2\", :0], [\"w3\", :0], [\"w4\", :0]], "
            "\"fencing-token\", (nil)]");
  std::string previous = "holder";
  for (int i = 0; i < 5; ++i) {
    h.take_propagated();
    EXPECT_EQ(h.call("LOCK.RELEASE lk " + previous), ":0");
    const std::string owner = "w" + std::to_string(i);
    // The release and the grant reach the AOF and the replicas in order.
    const std::vector<std::string> lines = h.take_propagated();
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0], "0:DEL lk");
    EXPECT_EQ(lines[1], "0:HINCRBY lk " + owner + " 1");
    for (int j = 0; j < 5; ++j) {
      EXPECT_EQ(h.replies_of(*waiters[j]), j == i ? ":1" : "") << "release " << i;
    }
    EXPECT_EQ(h.call("HGETALL lk"), "[\"" + owner + "\", \"1\"]");
    previous = owner;
  }
  EXPECT_EQ(h.state.locks().stats().handoffs, 5u);
}

TEST(LockCommandsTest, NewcomerDoesNotOvertakeTheQueue) {
  CommandHarness h;
  HarnessClient& first = h.new_client();
  HarnessClient& newcomer = h.new_client();
  h.call("LOCK.ACQUIRE lk holder 100");
  EXPECT_EQ(h.call_as(first, "LOCK.ACQUIRE lk first 1000 TIMEOUT 0"), "(blocked)");
  // The lease ran out but nothing reclaimed the key yet: the newcomer's own lookup expires it,
  // and the queue's head gets it.
  h.advance_ms(101);
  EXPECT_EQ(h.call_as(newcomer, "LOCK.ACQUIRE lk newcomer 1000"), "(nil)");
  EXPECT_EQ(h.replies_of(first), ":1");
  EXPECT_EQ(h.call("HGETALL lk"), "[\"first\", \"1\"]");
  EXPECT_EQ(h.state.locks().stats().expired_while_held, 1u);
}

TEST(LockCommandsTest, EveryWayTheKeyGoesHandsTheLockOver) {
  const char* frees[] = {"DEL lk", "UNLINK lk", "HDEL lk holder", "RENAME lk elsewhere",
                         "MOVE lk 1", "FLUSHALL", "FLUSHDB"};
  for (const char* free : frees) {
    CommandHarness h;
    HarnessClient& waiter = h.new_client();
    h.call("LOCK.ACQUIRE lk holder 60000");
    EXPECT_EQ(h.call_as(waiter, "LOCK.ACQUIRE lk next 60000 TIMEOUT 0"), "(blocked)") << free;
    h.call(free);
    EXPECT_EQ(h.replies_of(waiter), ":1") << free;
    EXPECT_EQ(h.call("HGETALL lk"), "[\"next\", \"1\"]") << free;
  }
}

TEST(LockCommandsTest, ActiveExpiryHandsTheLockOver) {
  CommandHarness h;
  HarnessClient& waiter = h.new_client();
  h.call("LOCK.ACQUIRE lk holder 100");
  EXPECT_EQ(h.call_as(waiter, "LOCK.ACQUIRE lk next 5000 TIMEOUT 0"), "(blocked)");
  h.advance_ms(200);
  h.active_expire();
  EXPECT_EQ(h.replies_of(waiter), "");  // served by the server loop, after the cron step
  h.call("PING");
  EXPECT_EQ(h.replies_of(waiter), ":1");
  EXPECT_EQ(h.state.locks().stats().expired_while_held, 1u);
}

TEST(LockCommandsTest, WritesThatKeepTheLockHeldWakeNobody) {
  CommandHarness h;
  HarnessClient& waiter = h.new_client();
  h.call("LOCK.ACQUIRE lk holder 60000");
  EXPECT_EQ(h.call_as(waiter, "LOCK.ACQUIRE lk next 60000 TIMEOUT 0"), "(blocked)");
  h.call("PEXPIRE lk 90000");
  h.call("LOCK.ACQUIRE lk holder 60000");
  h.call("LOCK.RELEASE lk holder");
  EXPECT_EQ(h.replies_of(waiter), "");
  EXPECT_TRUE(waiter.session.blocked.blocked());
  h.call("DEL lk");
  EXPECT_EQ(h.replies_of(waiter), ":1");
}

TEST(LockCommandsTest, TimeoutRepliesNilAndLeavesTheQueue) {
  CommandHarness h;
  HarnessClient& a = h.new_client();
  HarnessClient& b = h.new_client();
  h.call("LOCK.ACQUIRE lk holder 60000");
  EXPECT_EQ(h.call_as(a, "LOCK.ACQUIRE lk a 1000 TIMEOUT 100"), "(blocked)");
  EXPECT_EQ(h.call_as(b, "LOCK.ACQUIRE lk b 1000 TIMEOUT 0"), "(blocked)");
  h.advance_ms(150);
  h.time_out_blocked();
  EXPECT_EQ(h.replies_of(a), "(nil)");
  EXPECT_FALSE(a.session.blocked.blocked());
  h.call("LOCK.RELEASE lk holder");
  EXPECT_EQ(h.replies_of(b), ":1");
}

TEST(LockCommandsTest, DisconnectedWaiterLeavesTheQueue) {
  CommandHarness h;
  HarnessClient& gone = h.new_client();
  HarnessClient& next = h.new_client();
  h.call("LOCK.ACQUIRE lk holder 60000");
  EXPECT_EQ(h.call_as(gone, "LOCK.ACQUIRE lk gone 1000 TIMEOUT 0"), "(blocked)");
  EXPECT_EQ(h.call_as(next, "LOCK.ACQUIRE lk next 1000 TIMEOUT 0"), "(blocked)");
  h.state.blocking().unblock(gone.session);  // what a closing connection does
  h.call("LOCK.RELEASE lk holder");
  EXPECT_EQ(h.replies_of(next), ":1");
  EXPECT_EQ(h.replies_of(gone), "");
}

// Scripts' forms are tested end to end (tests/e2e/test_native_locks.py).
TEST(LockCommandsTest, MultiNeverBlocks) {
  CommandHarness h;
  h.call("LOCK.ACQUIRE lk holder 60000");
  h.call("MULTI");
  h.call("LOCK.ACQUIRE lk other 1000 TIMEOUT 0");
  h.call("LOCK.ACQUIRE free other 1000 TIMEOUT 0");
  EXPECT_EQ(h.call("EXEC"), "[(nil), :1]");
}

TEST(LockCommandsTest, BoundGrantsAreReleasedWithTheConnection) {
  CommandHarness h;
  HarnessClient& holder = h.new_client();
  HarnessClient& waiter = h.new_client();
  EXPECT_EQ(h.call_as(holder, "LOCK.ACQUIRE lk holder 60000 BIND"), ":1");
  EXPECT_EQ(h.call_as(holder, "LOCK.ACQUIRE lk holder 60000 BIND"), ":2");
  EXPECT_EQ(h.call_as(holder, "LOCK.ACQUIRE gone holder 60000 BIND"), ":1");
  EXPECT_EQ(holder.session.bound_locks.size(), 2u);
  h.call("DEL gone");  // released meanwhile: nothing to do for it at close
  EXPECT_EQ(h.call_as(waiter, "LOCK.ACQUIRE lk next 60000 TIMEOUT 0"), "(blocked)");
  h.take_propagated();
  release_bound_locks(h.dispatcher, holder.session, h.clock.wall_ms());
  EXPECT_EQ(h.take_propagated(), (std::vector<std::string>{"0:DEL lk"}));
  EXPECT_TRUE(holder.session.bound_locks.empty());
  h.call("PING");  // the server serves the queue after
  EXPECT_EQ(h.replies_of(waiter), ":1");
  EXPECT_EQ(h.call("HGETALL lk"), "[\"next\", \"1\"]");
}

TEST(LockCommandsTest, InfoShowsHolderLeaseAndQueue) {
  CommandHarness h;
  EXPECT_EQ(h.call("LOCK.INFO lk"),
            "[\"holder\", (nil), \"holds\", :0, \"lease-ms\", :-2, \"waiters\", [], "
            "\"fencing-token\", (nil)]");
  h.call("LOCK.ACQUIRE lk o 1000");
  h.call("LOCK.ACQUIRE lk o 1000");
  HarnessClient& waiter = h.new_client();
  h.call_as(waiter, "LOCK.ACQUIRE lk w 1000 TIMEOUT 0");
  h.advance_ms(250);
  EXPECT_EQ(h.call("LOCK.INFO lk"),
            "[\"holder\", \"o\", \"holds\", :2, \"lease-ms\", :750, \"waiters\", [[\"w\", :250]], "
            "\"fencing-token\", (nil)]");
}

TEST(LockCommandsTest, NamesOfLocksDeletedBehindItsBackAreForgotten) {
  CommandHarness h;
  for (int i = 0; i < 1100; ++i) {
    h.call("LOCK.ACQUIRE lk" + std::to_string(i) + " o 60000");
    h.call("DEL lk" + std::to_string(i));  // as a script would, without LOCK.RELEASE
  }
  h.call("LOCK.ACQUIRE kept o 60000");
  EXPECT_LT(h.state.locks().held().size(), 100u);
  EXPECT_EQ(h.state.locks().held().count({0, "kept"}), 1u);
}

TEST(LockCommandsTest, FenceDrawsTokensFromTheSlotCounterAndPropagatesThemTogether) {
  CommandHarness h;
  h.take_propagated();
  EXPECT_EQ(h.call("LOCK.ACQUIRE lk a 1000 FENCE"), "[:1, :1]");
  const std::string counter = fence_counter_key("lk");
  const std::vector<std::string> lines = h.take_propagated();
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0], "0:MULTI");
  EXPECT_EQ(lines[1], "0:SET " + counter + " 1 KEEPTTL");
  EXPECT_EQ(lines[2], "0:HINCRBY lk a 1");
  EXPECT_EQ(lines[3], "0:HSET lk keywarden:fencing-token 1");
  EXPECT_EQ(lines[5], "0:EXEC");
  EXPECT_EQ(h.call("LOCK.ACQUIRE lk a 1000 FENCE"), "[:2, :1]");
  EXPECT_EQ(h.call("LOCK.RELEASE lk a ALL"), ":0");
  EXPECT_EQ(h.call("EXISTS lk"), ":0");
  // A queued waiter gets the next token when the lock is handed over.
  EXPECT_EQ(h.call("LOCK.ACQUIRE lk a 1000 FENCE"), "[:1, :2]");
  HarnessClient& waiter = h.new_client();
  EXPECT_EQ(h.call_as(waiter, "LOCK.ACQUIRE lk b 1000 TIMEOUT 0 FENCE"), "(blocked)");
  EXPECT_EQ(h.call("LOCK.RELEASE lk a"), ":0");
  EXPECT_EQ(h.replies_of(waiter), "[:1, :3]");
  EXPECT_EQ(h.call("GET " + counter), "\"3\"");
}

TEST(LockCommandsTest, LeaseEndWithWaitersIsWatched) {
  CommandHarness h;
  h.call("LOCK.ACQUIRE lk a 1000");
  EXPECT_EQ(h.state.locks().earliest_lease_ms(), 0);
  HarnessClient& waiter = h.new_client();
  EXPECT_EQ(h.call_as(waiter, "LOCK.ACQUIRE lk b 1000 TIMEOUT 0"), "(blocked)");
  const int64_t deadline = h.state.locks().earliest_lease_ms();
  EXPECT_GT(deadline, 0);
  EXPECT_TRUE(h.state.locks().take_ended_leases(deadline).empty());
  const std::vector<LockTable::Name> ended = h.state.locks().take_ended_leases(deadline + 1);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].second, "lk");
  EXPECT_EQ(h.state.locks().earliest_lease_ms(), 0);
}

TEST(LockCommandsTest, FencedWritesCheckAndRecordTheToken) {
  CommandHarness h;
  h.take_propagated();
  EXPECT_EQ(h.call("LOCK.FENCED r 5 SET r v"), "+OK");
  const std::string marks = fence_marks_key("r");
  std::vector<std::string> lines = h.take_propagated();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "0:MULTI");
  EXPECT_EQ(lines[1], "0:HSET " + marks + " r 5");
  EXPECT_EQ(lines[2], "0:SET r v");
  EXPECT_EQ(lines[3], "0:EXEC");
  EXPECT_EQ(h.call("LOCK.FENCED r 4 SET r w"),
            "-FENCED token 4 is below 5, the highest token already used for this resource");
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(h.call("LOCK.FENCED r 5 SET r w"), "+OK");
  lines = h.take_propagated();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "0:SET r w");
  // SPOP with a count wraps its own effects: the mark joins that one transaction.
  h.call("SADD s a b c d");
  h.take_propagated();
  h.call("LOCK.FENCED s 1 SPOP s 2");
  lines = h.take_propagated();
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], "0:MULTI");
  EXPECT_EQ(lines[1], "0:HSET " + fence_marks_key("s") + " s 1");
  EXPECT_EQ(lines[2].substr(0, 9), "0:SREM s ");
  EXPECT_EQ(lines[3].substr(0, 9), "0:SREM s ");
  EXPECT_EQ(lines[4], "0:EXEC");
  EXPECT_EQ(h.call("LOCK.FENCED r x SET r v"), "-ERR fencing token is not an integer");
  EXPECT_EQ(h.call("LOCK.FENCED r 9 GET r"),
            "-ERR LOCK.FENCED runs only write commands that take keys");
  EXPECT_EQ(h.call("LOCK.FENCED r 9 BLPOP r 0"), "-ERR LOCK.FENCED cannot run a blocking command");
  EXPECT_EQ(h.call("LOCK.FENCED r 9 LOCK.FENCED r 9 SET r v"),
            "-ERR LOCK.FENCED cannot run LOCK.FENCED");
  EXPECT_EQ(h.call("GET r"), "\"w\"");
}

}  // namespace
}  // namespace keywarden
