#include "resp/reply_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "allocation_counter.h"

namespace keywarden {
namespace {

using namespace std::string_literals;

// Writes with `emit` under the given protocol and returns the bytes.
template <typename Emit>
std::string written(int resp, Emit emit) {
  std::string out;
  ReplyWriter writer(&out, resp);
  emit(writer);
  return out;
}

// The same call, in RESP2 and in RESP3.
template <typename Emit>
std::pair<std::string, std::string> both(Emit emit) {
  return {written(2, emit), written(3, emit)};
}

using Pair = std::pair<std::string, std::string>;

TEST(ReplyWriterTest, SimpleString) {
  EXPECT_EQ(both([](ReplyWriter& w) { w.simple_string("OK"); }), Pair("+OK\r\n", "+OK\r\n"));
  EXPECT_EQ(written(2, [](ReplyWriter& w) { w.simple_string(""); }), "+\r\n");
  EXPECT_EQ(written(2, [](ReplyWriter& w) { w.simple_string("a\r\nb\nc"); }), "+a  b c\r\n");
}

TEST(ReplyWriterTest, Error) {
  EXPECT_EQ(both([](ReplyWriter& w) { w.error("ERR unknown command 'foo'"); }),
            Pair("-ERR unknown command 'foo'\r\n", "-ERR unknown command 'foo'\r\n"));
  EXPECT_EQ(written(3,
                    [](ReplyWriter& w) {
                      w.error("WRONGTYPE Operation against a key holding the wrong kind of value");
                    }),
            "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
  // An error must stay on one line whatever text a caller formats into it.
  EXPECT_EQ(written(2, [](ReplyWriter& w) { w.error("ERR bad\r\nthing"); }), "-ERR bad  thing\r\n");
}

TEST(ReplyWriterTest, Integer) {
  EXPECT_EQ(both([](ReplyWriter& w) { w.integer(0); }), Pair(":0\r\n", ":0\r\n"));
  EXPECT_EQ(written(2, [](ReplyWriter& w) { w.integer(-42); }), ":-42\r\n");
  EXPECT_EQ(written(2, [](ReplyWriter& w) { w.integer(std::numeric_limits<int64_t>::max()); }),
            ":9223372036854775807\r\n");
  EXPECT_EQ(written(2, [](ReplyWriter& w) { w.integer(std::numeric_limits<int64_t>::min()); }),
            ":-9223372036854775808\r\n");
}

TEST(ReplyWriterTest, Bulk) {
  EXPECT_EQ(both([](ReplyWriter& w) { w.bulk("hello"); }),
            Pair("$5\r\nhello\r\n", "$5\r\nhello\r\n"));
  EXPECT_EQ(written(2, [](ReplyWriter& w) { w.bulk(""); }), "$0\r\n\r\n");
  EXPECT_EQ(written(2, [](ReplyWriter& w) { w.bulk("a\r\n\0b"s); }), "$5\r\na\r\n\0b\r\n"s);
  const std::string big(100000, 'z');
  EXPECT_EQ(written(2, [&big](ReplyWriter& w) { w.bulk(big); }), "$100000\r\n" + big + "\r\n");
}

TEST(ReplyWriterTest, BulkInteger) {
  EXPECT_EQ(both([](ReplyWriter& w) { w.bulk_integer(-17); }),
            Pair("$3\r\n-17\r\n", "$3\r\n-17\r\n"));
  EXPECT_EQ(written(2, [](ReplyWriter& w) { w.bulk_integer(std::numeric_limits<int64_t>::min()); }),
            "$20\r\n-9223372036854775808\r\n");
}

TEST(ReplyWriterTest, Nulls) {
  EXPECT_EQ(both([](ReplyWriter& w) { w.null(); }), Pair("$-1\r\n", "_\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.null_array(); }), Pair("*-1\r\n", "_\r\n"));
}

TEST(ReplyWriterTest, AggregateHeaders) {
  EXPECT_EQ(both([](ReplyWriter& w) { w.array_header(3); }), Pair("*3\r\n", "*3\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.array_header(0); }), Pair("*0\r\n", "*0\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.map_header(2); }), Pair("*4\r\n", "%2\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.map_header(0); }), Pair("*0\r\n", "%0\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.set_header(5); }), Pair("*5\r\n", "~5\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.push_header(3); }), Pair("*3\r\n", ">3\r\n"));
  EXPECT_EQ(written(2, [](ReplyWriter& w) { w.array_header(1234567890123); }),
            "*1234567890123\r\n");
}

TEST(ReplyWriterTest, DoubleUsesSeventeenSignificantDigitsLikeRedis70) {
  // Expected texts are what redis-server 7.0.15 sends for ZSCORE of these scores.
  EXPECT_EQ(both([](ReplyWriter& w) { w.double_value(1.1); }),
            Pair("$18\r\n1.1000000000000001\r\n", ",1.1000000000000001\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.double_value(2); }), Pair("$1\r\n2\r\n", ",2\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.double_value(1e300); }),
            Pair("$23\r\n1.0000000000000001e+300\r\n", ",1.0000000000000001e+300\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.double_value(0.1); }),
            Pair("$19\r\n0.10000000000000001\r\n", ",0.10000000000000001\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.double_value(3.5e-10); }),
            Pair("$22\r\n3.4999999999999998e-10\r\n", ",3.4999999999999998e-10\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.double_value(-0.0); }), Pair("$2\r\n-0\r\n", ",-0\r\n"));
  EXPECT_EQ(written(3, [](ReplyWriter& w) { w.double_value(-1.7976931348623157e308); }),
            ",-1.7976931348623157e+308\r\n");
}

TEST(ReplyWriterTest, DoubleSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(both([inf](ReplyWriter& w) { w.double_value(inf); }),
            Pair("$3\r\ninf\r\n", ",inf\r\n"));
  EXPECT_EQ(both([inf](ReplyWriter& w) { w.double_value(-inf); }),
            Pair("$4\r\n-inf\r\n", ",-inf\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.double_value(std::nan("")); }),
            Pair("$3\r\nnan\r\n", ",nan\r\n"));
  EXPECT_EQ(written(3, [](ReplyWriter& w) { w.double_value(-std::nan("")); }), ",nan\r\n");
}

TEST(ReplyWriterTest, Boolean) {
  EXPECT_EQ(both([](ReplyWriter& w) { w.boolean(true); }), Pair(":1\r\n", "#t\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.boolean(false); }), Pair(":0\r\n", "#f\r\n"));
}

TEST(ReplyWriterTest, Verbatim) {
  EXPECT_EQ(both([](ReplyWriter& w) { w.verbatim("# Server\r\nx:1\r\n"); }),
            Pair("$15\r\n# Server\r\nx:1\r\n\r\n", "=19\r\ntxt:# Server\r\nx:1\r\n\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.verbatim("", "mkd"); }),
            Pair("$0\r\n\r\n", "=4\r\nmkd:\r\n"));
}

TEST(ReplyWriterTest, BigNumber) {
  EXPECT_EQ(
      both([](ReplyWriter& w) { w.big_number("3492890328409238509324850943850943825024385"); }),
      Pair("$43\r\n3492890328409238509324850943850943825024385\r\n",
           "(3492890328409238509324850943850943825024385\r\n"));
  EXPECT_EQ(written(3, [](ReplyWriter& w) { w.big_number("-12"); }), "(-12\r\n");
}

TEST(ReplyWriterTest, RawIsCopiedAsIs) {
  EXPECT_EQ(both([](ReplyWriter& w) { w.raw("+QUEUED\r\n"); }), Pair("+QUEUED\r\n", "+QUEUED\r\n"));
}

TEST(ReplyWriterTest, AppendsAfterExistingBytes) {
  std::string out = "+PONG\r\n";
  ReplyWriter writer(&out);
  writer.integer(1);
  EXPECT_EQ(out, "+PONG\r\n:1\r\n");
}

TEST(ReplyWriterTest, SwitchingProtocolAndOutput) {
  std::string first;
  std::string second;
  ReplyWriter writer(&first);
  EXPECT_EQ(writer.resp(), 2);
  writer.null();
  writer.set_resp(3);
  EXPECT_EQ(writer.resp(), 3);
  writer.null();
  writer.set_output(&second);
  EXPECT_EQ(writer.output(), &second);
  writer.boolean(true);
  writer.set_resp(7);  // anything but 3 means RESP2
  EXPECT_EQ(writer.resp(), 2);
  writer.boolean(true);
  EXPECT_EQ(first, "$-1\r\n_\r\n");
  EXPECT_EQ(second, "#t\r\n:1\r\n");
}

TEST(ReplyWriterTest, DeferredArray) {
  std::string out = "+before\r\n";
  ReplyWriter writer(&out);
  const DeferredLength length = writer.begin_deferred();
  writer.bulk("a");
  writer.bulk("bc");
  writer.end_deferred_array(length, 2);
  writer.integer(7);
  EXPECT_EQ(out, "+before\r\n*2\r\n$1\r\na\r\n$2\r\nbc\r\n:7\r\n");
}

TEST(ReplyWriterTest, DeferredEmptyAndLarge) {
  std::string out;
  ReplyWriter writer(&out);
  writer.end_deferred_array(writer.begin_deferred(), 0);
  EXPECT_EQ(out, "*0\r\n");

  out.clear();
  const DeferredLength length = writer.begin_deferred();
  std::string expected;
  for (int i = 0; i < 12345; ++i) {
    writer.integer(i);
    expected += ":" + std::to_string(i) + "\r\n";
  }
  writer.end_deferred_array(length, 12345);
  EXPECT_EQ(out, "*12345\r\n" + expected);
}

TEST(ReplyWriterTest, DeferredMapAndSetFollowTheProtocol) {
  auto map_reply = [](ReplyWriter& w) {
    const DeferredLength length = w.begin_deferred();
    w.bulk("k");
    w.integer(1);
    w.end_deferred_map(length, 1);
  };
  EXPECT_EQ(both(map_reply), Pair("*2\r\n$1\r\nk\r\n:1\r\n", "%1\r\n$1\r\nk\r\n:1\r\n"));
  auto set_reply = [](ReplyWriter& w) {
    const DeferredLength length = w.begin_deferred();
    w.bulk("m");
    w.end_deferred_set(length, 1);
  };
  EXPECT_EQ(both(set_reply), Pair("*1\r\n$1\r\nm\r\n", "~1\r\n$1\r\nm\r\n"));
}

TEST(ReplyWriterTest, NestedDeferredLengths) {
  // SCAN's shape: [cursor, [keys...]] with the key count known only at the end, inside an
  // outer deferred array.
  std::string out;
  ReplyWriter writer(&out);
  const DeferredLength outer = writer.begin_deferred();
  writer.bulk("0");
  const DeferredLength inner = writer.begin_deferred();
  writer.bulk("k1");
  writer.bulk("k2");
  writer.bulk("k3");
  writer.end_deferred_array(inner, 3);
  writer.end_deferred_array(outer, 2);
  EXPECT_EQ(out, "*2\r\n$1\r\n0\r\n*3\r\n$2\r\nk1\r\n$2\r\nk2\r\n$2\r\nk3\r\n");
}

TEST(ReplyWriterTest, SmallRepliesAllocateNothingOnceTheBufferHasCapacity) {
  std::string out;
  out.reserve(64 * 1024);
  ReplyWriter writer(&out, 3);
  testing::AllocationScope scope;
  for (int i = 0; i < 200; ++i) {
    writer.simple_string("OK");
    writer.error("ERR no such key");
    writer.integer(i);
    writer.bulk("value");
    writer.bulk_integer(-i);
    writer.null();
    writer.null_array();
    writer.map_header(1);
    writer.set_header(2);
    writer.push_header(3);
    writer.double_value(i / 3.0);
    writer.boolean(i % 2 == 0);
    writer.verbatim("text");
    writer.big_number("123456789012345678901234567890");
    const DeferredLength length = writer.begin_deferred();
    writer.integer(1);
    writer.end_deferred_array(length, 1);
  }
  EXPECT_EQ(scope.stop().count, 0u);
}

}  // namespace
}  // namespace keywarden
