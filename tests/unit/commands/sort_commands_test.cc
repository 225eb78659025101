// SORT and SORT_RO at the dispatcher: options, types, patterns, STORE and its side effects.
// The reply bytes of many more cases are compared with redis-server in tests/compat/test_sort.py.
#include <gtest/gtest.h>

#include "command_harness.h"

namespace keywarden::testing {
namespace {

TEST(SortCommands, SortsListsSetsAndSortedSetsNumericallyOrAlphabetically) {
  CommandHarness h;
  h.call("RPUSH l 3 1 2 10");
  h.call("SADD s 5 1 3");
  h.call("ZADD z 1 b 2 a 3 c");
  EXPECT_EQ(h.call("SORT l"), "[\"1\", \"2\", \"3\", \"10\"]");
  EXPECT_EQ(h.call("SORT l DESC"), "[\"10\", \"3\", \"2\", \"1\"]");
  EXPECT_EQ(h.call("SORT l ALPHA"), "[\"1\", \"10\", \"2\", \"3\"]");
  EXPECT_EQ(h.call("SORT s"), "[\"1\", \"3\", \"5\"]");
  EXPECT_EQ(h.call("SORT z ALPHA"), "[\"a\", \"b\", \"c\"]");
  EXPECT_EQ(h.call("SORT z BY nosort DESC"), "[\"c\", \"a\", \"b\"]");
  EXPECT_EQ(h.call("SORT z"), "-ERR One or more scores can't be converted into double");
  EXPECT_EQ(h.call("SORT missing"), "[]");
  h.call("SET str x");
  EXPECT_EQ(h.call("SORT str"), kWrongType);
  // SORT leaves a sorted set in the skiplist encoding, as Redis does.
  EXPECT_EQ(h.call("OBJECT ENCODING z"), "\"skiplist\"");
}

TEST(SortCommands, LimitWindowsAndPatterns) {
  CommandHarness h;
  h.call("RPUSH ids 1 2 3");
  h.call("MSET w_1 30 w_2 10 w_3 20 n_1 one n_3 three");
  h.call("HSET h_2 f two");
  EXPECT_EQ(h.call("SORT ids LIMIT 1 1"), "[\"2\"]");
  EXPECT_EQ(h.call("SORT ids LIMIT 5 1"), "[]");
  EXPECT_EQ(h.call("SORT ids LIMIT x 1"), "-ERR value is not an integer or out of range");
  EXPECT_EQ(h.call("SORT ids BY w_*"), "[\"2\", \"3\", \"1\"]");
  EXPECT_EQ(h.call("SORT ids BY w_* GET # GET n_* GET h_*->f"),
            "[\"2\", (nil), \"two\", \"3\", \"three\", (nil), \"1\", \"one\", (nil)]");
  EXPECT_EQ(h.call("SORT ids BY nosort DESC LIMIT 0 2"), "[\"3\", \"2\"]");
  EXPECT_EQ(h.call("SORT ids GET nostar"), "[(nil), (nil), (nil)]");
  EXPECT_EQ(h.call("SORT ids BOGUS"), "-ERR syntax error");
  EXPECT_EQ(h.call("SORT_RO ids STORE d"), "-ERR syntax error");
  EXPECT_EQ(h.call("SORT_RO ids DESC"), "[\"3\", \"2\", \"1\"]");
}

TEST(SortCommands, StoreReplacesOrDeletesTheDestinationAndPropagates) {
  CommandHarness h;
  h.call("RPUSH ids 2 1");
  h.call("SET d old EX 100");
  h.propagated.lines.clear();
  EXPECT_EQ(h.call("SORT ids STORE d"), ":2");
  EXPECT_EQ(h.call("LRANGE d 0 -1"), "[\"1\", \"2\"]");
  EXPECT_EQ(h.call("TTL d"), ":-1");
  EXPECT_EQ(h.call("SORT missing STORE d"), ":0");
  EXPECT_EQ(h.call("EXISTS d"), ":0");
  EXPECT_EQ(h.call("SORT missing STORE d"), ":0");  // nothing to delete: no effect
  EXPECT_EQ(h.propagated.lines,
            (std::vector<std::string>{"0:SORT ids STORE d", "0:SORT missing STORE d"}));
}

TEST(SortCommands, StoreWakesClientsBlockedOnTheDestination) {
  CommandHarness h;
  HarnessClient& waiter = h.new_client();
  EXPECT_EQ(h.call_as(waiter, "BLPOP d 0"), "(blocked)");
  h.call("RPUSH ids 3 1 2");
  EXPECT_EQ(h.call("SORT ids STORE d"), ":3");
  EXPECT_EQ(h.replies_of(waiter), "[\"d\", \"1\"]");
  EXPECT_EQ(h.call("LRANGE d 0 -1"), "[\"2\", \"3\"]");
}

}  // namespace
}  // namespace keywarden::testing
