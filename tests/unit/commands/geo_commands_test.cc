// Geo family through the dispatcher: what each write propagates and counts (GEOADD as the ZADD
// Redis rewrites it into, the store forms as sent), encodings of created and stored sets, the
// store forms' handling of empty results, expired destinations and a destination that is the
// source, and MULTI. Replies byte for byte against Redis are the job of tests/compat/test_geo.py.
#include <string>
#include <vector>

#include "command_harness.h"

namespace keywarden::testing {
namespace {

using Lines = std::vector<std::string>;

class GeoCommands : public ::testing::Test {
 protected:
  CommandHarness h;
};

TEST_F(GeoCommands, GeoaddPropagatesAsZaddAndCountsChanges) {
  EXPECT_EQ(h.call("GEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania"), ":2");
  EXPECT_EQ(h.dirty(), 2u);
  // Nothing changed: no propagation, no count.
  EXPECT_EQ(h.call("GEOADD g 13.361389 38.115556 Palermo"), ":0");
  EXPECT_EQ(h.dirty(), 2u);
  EXPECT_EQ(h.call("GEOADD g nx CH 1 1 Palermo 1 1 x"), ":1");
  EXPECT_EQ(h.call("GEOADD g XX ch 1 1 Palermo 1 1 y"), ":1");
  EXPECT_EQ(h.dirty(), 4u);
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:zadd g 3479099956230698 Palermo 3479447370796909 Catania",
                   "0:zadd g nx CH 3377822707026402 Palermo 3377822707026402 x",
                   "0:zadd g XX ch 3377822707026402 Palermo 3377822707026402 y"}));
  // Errors change nothing, even when earlier triples were valid.
  EXPECT_EQ(h.call("GEOADD g 1 1 a 181 1 b"),
            "-ERR invalid longitude,latitude pair 181.000000,1.000000");
  EXPECT_EQ(h.call("ZSCORE g a"), "(nil)");
  EXPECT_EQ(h.call("GEOADD g XX 1 1 a"), ":0");
  EXPECT_EQ(h.call("GEOADD nokey XX 1 1 a"), ":0");
  EXPECT_EQ(h.call("EXISTS nokey"), ":0");
  EXPECT_TRUE(h.take_propagated().empty());
}

TEST_F(GeoCommands, GeoaddEncodingFollowsZadd) {
  EXPECT_EQ(h.call("GEOADD small 1 1 a 2 2 b"), ":2");
  EXPECT_EQ(h.encoding("small"), "\"listpack\"");
  const std::string long_member(65, 'x');
  EXPECT_EQ(h.call("GEOADD long 1 1 " + long_member), ":1");
  EXPECT_EQ(h.encoding("long"), "\"skiplist\"");
  EXPECT_EQ(h.call("GEOADD small 3 3 " + long_member), ":1");
  EXPECT_EQ(h.encoding("small"), "\"skiplist\"");
}

TEST_F(GeoCommands, StoreFormsPropagateAsSentAndCountResults) {
  h.call("GEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania");
  h.take_propagated();
  const uint64_t before = h.dirty();
  EXPECT_EQ(h.call("GEORADIUS g 15 37 200 km STORE d"), ":2");
  EXPECT_EQ(h.dirty(), before + 2);
  EXPECT_EQ(h.encoding("d"), "\"listpack\"");
  EXPECT_EQ(h.call("ZRANGE d 0 -1 WITHSCORES"),
            "[\"Palermo\", \"3479099956230698\", \"Catania\", \"3479447370796909\"]");
  EXPECT_EQ(h.call("GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 200 km STOREDIST COUNT 1"), ":1");
  EXPECT_EQ(h.call("ZRANGE d 0 -1 WITHSCORES"), "[\"Catania\", \"56.441257870158204\"]");
  // An empty result deletes the destination; with no destination, nothing happens.
  EXPECT_EQ(h.call("GEORADIUSBYMEMBER g Palermo 1 m STORE d COUNT 1"), ":1");
  EXPECT_EQ(h.call("GEOSEARCHSTORE d g FROMLONLAT 0 0 BYRADIUS 1 m"), ":0");
  EXPECT_EQ(h.call("EXISTS d"), ":0");
  EXPECT_EQ(h.call("GEOSEARCHSTORE d g FROMLONLAT 0 0 BYRADIUS 1 m"), ":0");
  EXPECT_EQ(h.call("GEOSEARCHSTORE d nosuch FROMMEMBER x BYRADIUS 1 m"), ":0");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:GEORADIUS g 15 37 200 km STORE d",
                   "0:GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 200 km STOREDIST COUNT 1",
                   "0:GEORADIUSBYMEMBER g Palermo 1 m STORE d COUNT 1",
                   "0:GEOSEARCHSTORE d g FROMLONLAT 0 0 BYRADIUS 1 m"}));
  // Reads propagate nothing.
  h.call("GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 200 km");
  h.call("GEORADIUS g 15 37 200 km");
  h.call("GEORADIUS_RO g 15 37 200 km");
  EXPECT_TRUE(h.take_propagated().empty());
}

TEST_F(GeoCommands, StoreOverwritesAnyTypeAndDropsTheTtl) {
  h.call("GEOADD g 1 1 a 1.001 1.001 b");
  h.call("SET d x EX 100");
  EXPECT_EQ(h.call("GEOSEARCHSTORE d g FROMMEMBER a BYRADIUS 1 km"), ":2");
  EXPECT_EQ(h.call("TYPE d"), "+zset");
  EXPECT_EQ(h.call("TTL d"), ":-1");
  // The source as destination: the result is computed before the source is replaced.
  EXPECT_EQ(h.call("GEOSEARCHSTORE g g FROMMEMBER a BYRADIUS 1 km STOREDIST"), ":2");
  EXPECT_EQ(h.call("ZRANGE g 0 -1 WITHSCORES"), "[\"a\", \"0\", \"b\", \"0.15720711546944865\"]");
}

TEST_F(GeoCommands, StoreOfManyResultsIsASkiplist) {
  std::string line = "GEOADD g";
  for (int i = 0; i < 200; ++i) {
    line += " " + std::to_string(i * 0.001) + " 0 m" + std::to_string(i);
  }
  EXPECT_EQ(h.call(line), ":200");
  EXPECT_EQ(h.call("GEOSEARCHSTORE d g FROMLONLAT 0 0 BYRADIUS 100 km"), ":200");
  EXPECT_EQ(h.encoding("d"), "\"skiplist\"");
  EXPECT_EQ(h.call("GEOSEARCHSTORE d g FROMLONLAT 0 0 BYRADIUS 100 km COUNT 128"), ":128");
  EXPECT_EQ(h.encoding("d"), "\"listpack\"");
  EXPECT_EQ(h.call("GEOSEARCH g FROMLONLAT 0 0 BYRADIUS 100 km COUNT 3 DESC"),
            "[\"m199\", \"m198\", \"m197\"]");
  EXPECT_EQ(h.call("GEOSEARCH g FROMLONLAT 0 0 BYRADIUS 100 km COUNT 3"),
            "[\"m0\", \"m1\", \"m2\"]");
}

TEST_F(GeoCommands, InsideMulti) {
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("GEOADD g 1 1 a"), "+QUEUED");
  EXPECT_EQ(h.call("GEOSEARCHSTORE d g FROMMEMBER a BYRADIUS 1 m"), "+QUEUED");
  EXPECT_EQ(h.call("GEOPOS g a"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC"), "[:1, :1, [[\"0.99999994039535522\", \"0.99999945914297683\"]]]");
}

}  // namespace
}  // namespace keywarden::testing
