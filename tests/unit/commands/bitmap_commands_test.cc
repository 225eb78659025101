// Bitmap commands through the dispatcher: what they propagate (only real changes, verbatim),
// encodings of what they write, TTL handling and the offset limit. Replies and errors are compared with redis-server in
// tests/compat/test_bitmap.py.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "command_harness.h"

namespace keywarden {
namespace {

using testing::CommandHarness;
using Lines = std::vector<std::string>;

TEST(BitmapCommands, SetbitPropagatesOnlyWhenABitChangesOrTheStringGrows) {
  CommandHarness h;
  EXPECT_EQ(h.call("SETBIT k 7 0"), ":0");  // creates the key: counts
  EXPECT_EQ(h.call("SETBIT k 7 0"), ":0");  // no change
  EXPECT_EQ(h.call("SETBIT k 7 1"), ":0");
  EXPECT_EQ(h.call("SETBIT k 7 1"), ":1");  // no change
  EXPECT_EQ(h.call("SETBIT k 20 0"), ":0");  // grows the string
  EXPECT_EQ(h.call("GETBIT k 7"), ":1");
  EXPECT_EQ(h.take_propagated(), (Lines{"0:SETBIT k 7 0", "0:SETBIT k 7 1", "0:SETBIT k 20 0"}));
  EXPECT_EQ(h.call("STRLEN k"), ":3");
  EXPECT_EQ(h.call("OBJECT ENCODING k"), "\"raw\"");
}

TEST(BitmapCommands, SetbitOnAnIntegerTurnsItRawEvenWithoutAChange) {
  CommandHarness h;
  EXPECT_EQ(h.call("SET n 123"), "+OK");
  EXPECT_EQ(h.call("OBJECT ENCODING n"), "\"int\"");
  h.take_propagated();
  EXPECT_EQ(h.call("SETBIT n 0 0"), ":0");
  EXPECT_EQ(h.call("OBJECT ENCODING n"), "\"raw\"");
  EXPECT_TRUE(h.take_propagated().empty());
  EXPECT_EQ(h.call("SETBIT n 7 0"), ":1");  // '1' is 0x31
  EXPECT_EQ(h.call("GET n"), "\"023\"");
}

TEST(BitmapCommands, BitfieldPropagatesOnlyEffectiveWrites) {
  CommandHarness h;
  EXPECT_EQ(h.call("BITFIELD k GET u8 0"), "[:0]");
  EXPECT_EQ(h.call("EXISTS k"), ":0");
  EXPECT_EQ(h.call("BITFIELD k SET u8 0 5"), "[:0]");
  EXPECT_EQ(h.call("BITFIELD k SET u8 0 5"), "[:5]");  // same value: nothing to propagate
  EXPECT_EQ(h.call("BITFIELD k OVERFLOW FAIL INCRBY u8 0 300"), "[(nil)]");
  EXPECT_EQ(h.call("BITFIELD k INCRBY u8 0 1 GET u8 0"), "[:6, :6]");
  EXPECT_EQ(h.call("BITFIELD_RO k GET u8 0"), "[:6]");
  EXPECT_EQ(h.call("BITFIELD_RO k SET u8 0 1"),
            "-ERR BITFIELD_RO only supports the GET subcommand");
  EXPECT_EQ(h.take_propagated(),
            (Lines{"0:BITFIELD k SET u8 0 5", "0:BITFIELD k INCRBY u8 0 1 GET u8 0"}));
}

TEST(BitmapCommands, BitopReplacesTheDestinationAndItsTtlOrDeletesIt) {
  CommandHarness h;
  EXPECT_EQ(h.call("SET a abc"), "+OK");
  EXPECT_EQ(h.call("SET d x EX 100"), "+OK");
  EXPECT_EQ(h.call("BITOP NOT d a"), ":3");
  EXPECT_EQ(h.call("TTL d"), ":-1");
  EXPECT_EQ(h.call("OBJECT ENCODING d"), "\"raw\"");
  EXPECT_EQ(h.call("GET d"), "\"\\x9e\\x9d\\x9c\"");
  h.take_propagated();
  EXPECT_EQ(h.call("BITOP AND d nokey other"), ":0");
  EXPECT_EQ(h.call("EXISTS d"), ":0");
  EXPECT_EQ(h.call("BITOP AND d nokey other"), ":0");  // nothing left to delete
  EXPECT_EQ(h.take_propagated(), (Lines{"0:BITOP AND d nokey other"}));
}

// Unlike Redis 7.0, the limit holds for a primary's stream and the AOF too (as SETRANGE's):
// an offset near 2^63 from a hostile stream must not ask for an exabyte.
TEST(BitmapCommands, OffsetLimitFollowsProtoMaxBulkLenEvenForWhatMustBeObeyed) {
  CommandHarness h;
  h.state.settings().proto_max_bulk_len = 4;
  EXPECT_EQ(h.call("SETBIT k 31 1"), ":0");
  EXPECT_EQ(h.call("SETBIT k 32 1"), "-ERR bit offset is not an integer or out of range");
  EXPECT_EQ(h.call("BITFIELD k SET u8 #4 1"),
            "-ERR bit offset is not an integer or out of range");
  h.session.must_obey = true;
  EXPECT_EQ(h.call("SETBIT k 32 1"), "-ERR bit offset is not an integer or out of range");
  EXPECT_EQ(h.call("SETBIT k 9223372036854775807 1"),
            "-ERR bit offset is not an integer or out of range");
  EXPECT_EQ(h.call("STRLEN k"), ":4");
}

}  // namespace
}  // namespace keywarden
