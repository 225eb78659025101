// HyperLogLog commands through the dispatcher: what each hands to the propagation path (the
// part the differential tests cannot see), WATCH, and the errors of values that are not HLLs.
// Replies, bytes and counts against redis-server are in tests/compat/test_hyperloglog.py.
#include <string>
#include <vector>

#include "command_harness.h"

namespace keywarden::testing {
namespace {

using Lines = std::vector<std::string>;

TEST(HyperLogLogCommands, WritesPropagateAsReceived) {
  CommandHarness h;
  EXPECT_EQ(h.call("PFADD h a b c"), ":1");
  EXPECT_EQ(h.call("PFADD h a"), ":0");
  EXPECT_EQ(h.call("PFMERGE m h"), "+OK");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:PFADD h a b c", "0:PFMERGE m h"}));
}

TEST(HyperLogLogCommands, PfcountPropagatesOnlyACacheRefresh) {
  CommandHarness h;
  h.call("PFADD h a b c");
  h.take_propagated();
  EXPECT_EQ(h.call("PFCOUNT h"), ":3");  // stale cache: refreshed, a change
  EXPECT_EQ(h.call("PFCOUNT h"), ":3");  // cached: nothing
  EXPECT_EQ(h.call("PFCOUNT h h"), ":3");  // a union: nothing written
  EXPECT_EQ(h.take_propagated(), (Lines{"0:PFCOUNT h"}));
}

TEST(HyperLogLogCommands, PfdebugConversionsPropagate) {
  CommandHarness h;
  h.call("PFADD h a");
  h.call("PFADD g a");
  h.take_propagated();
  EXPECT_EQ(h.call("PFDEBUG ENCODING h"), "+sparse");
  EXPECT_EQ(h.call("PFDEBUG TODENSE h"), ":1");
  EXPECT_EQ(h.call("PFDEBUG TODENSE h"), ":0");
  EXPECT_EQ(h.call("PFDEBUG ENCODING h"), "+dense");
  h.call("PFDEBUG GETREG g");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:PFDEBUG TODENSE h", "0:PFDEBUG GETREG g"}));
}

TEST(HyperLogLogCommands, CacheRefreshTouchesWatchers) {
  CommandHarness h;
  h.call("PFADD h a");
  h.call("WATCH h");
  h.call("MULTI");
  h.call("PING");
  // Another client's PFCOUNT rewrites the cached cardinality: the transaction fails, as Redis.
  auto& other = h.new_client();
  h.call_as(other, "PFCOUNT h");
  EXPECT_EQ(h.call("EXEC"), "(nil)");
}

TEST(HyperLogLogCommands, ValuesThatAreNotHlls) {
  CommandHarness h;
  h.call("SET s hello");
  h.call("SET n 12345678901234567");
  h.call("RPUSH l a");
  const std::string not_hll = "-WRONGTYPE Key is not a valid HyperLogLog string value.";
  EXPECT_EQ(h.call("PFADD s a"), not_hll);
  EXPECT_EQ(h.call("PFCOUNT n"), not_hll);
  EXPECT_EQ(h.call("PFMERGE d s"), not_hll);
  EXPECT_EQ(h.call("PFADD l a"),
            "-WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(h.call("PFDEBUG GETREG missing"), "-ERR The specified key does not exist");
  EXPECT_EQ(h.call("EXISTS d"), ":0");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:SET s hello", "0:SET n 12345678901234567", "0:RPUSH l a"}));
}

}  // namespace
}  // namespace keywarden::testing
