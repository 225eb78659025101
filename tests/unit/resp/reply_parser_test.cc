#include "resp/reply_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "resp/reply_writer.h"

namespace keywarden {

// Lets gtest print values readably in failure messages.
void PrintTo(const RespValue& value, std::ostream* os) { *os << to_debug_string(value); }

namespace {

using namespace std::string_literals;

RespValue text_value(RespType type, std::string text) {
  RespValue value;
  value.type = type;
  value.str = std::move(text);
  return value;
}
RespValue simple(std::string text) { return text_value(RespType::kSimpleString, std::move(text)); }
RespValue error_value(std::string text) { return text_value(RespType::kError, std::move(text)); }
RespValue bulk(std::string text) { return text_value(RespType::kBulkString, std::move(text)); }
RespValue big(std::string digits) { return text_value(RespType::kBigNumber, std::move(digits)); }
RespValue blob_error(std::string text) { return text_value(RespType::kBlobError, std::move(text)); }
RespValue null_value() { return RespValue(); }
RespValue integer(int64_t n) {
  RespValue value;
  value.type = RespType::kInteger;
  value.integer = n;
  return value;
}
RespValue boolean(bool b) {
  RespValue value;
  value.type = RespType::kBoolean;
  value.integer = b ? 1 : 0;
  return value;
}
RespValue dbl(double d) {
  RespValue value;
  value.type = RespType::kDouble;
  value.dbl = d;
  return value;
}
RespValue verbatim(std::string format, std::string text) {
  RespValue value = text_value(RespType::kVerbatim, std::move(text));
  value.format = std::move(format);
  return value;
}
RespValue aggregate(RespType type, std::vector<RespValue> elements) {
  RespValue value;
  value.type = type;
  value.elements = std::move(elements);
  return value;
}
RespValue array(std::vector<RespValue> elements) {
  return aggregate(RespType::kArray, std::move(elements));
}

struct Outcome {
  std::vector<RespValue> values;
  std::string error;
  size_t unconsumed = 0;
};

// Plays a client reading replies that arrive in pieces cut at `cuts`. Each call sees a fresh
// copy of the pending bytes, so nothing may be kept pointing into an earlier buffer.
Outcome feed(std::string_view stream, const std::vector<size_t>& cuts) {
  ReplyParser parser;
  Outcome outcome;
  std::string pending;
  size_t previous = 0;
  std::vector<size_t> ends = cuts;
  ends.push_back(stream.size());
  for (const size_t end : ends) {
    pending.append(stream.substr(previous, end - previous));
    previous = end;
    while (true) {
      auto copy = std::make_unique<char[]>(pending.size() + 1);
      pending.copy(copy.get(), pending.size());
      const ReplyParseStatus status = parser.parse(copy.get(), pending.size());
      pending.erase(0, parser.consumed());
      if (status == ReplyParseStatus::kValue) outcome.values.push_back(parser.take_value());
      if (status == ReplyParseStatus::kError) {
        outcome.error = std::string(parser.error());
        outcome.unconsumed = pending.size();
        return outcome;
      }
      if (status == ReplyParseStatus::kNeedMore) break;
    }
  }
  outcome.unconsumed = pending.size();
  return outcome;
}

Outcome feed_whole(std::string_view stream) { return feed(stream, {}); }

RespValue parse_one(std::string_view stream) {
  const Outcome outcome = feed_whole(stream);
  EXPECT_EQ(outcome.error, "") << stream;
  EXPECT_EQ(outcome.values.size(), 1u) << stream;
  EXPECT_EQ(outcome.unconsumed, 0u) << stream;
  return outcome.values.empty() ? RespValue() : outcome.values.front();
}

std::string parse_error(std::string_view stream) { return feed_whole(stream).error; }

TEST(ReplyParserTest, Resp2Types) {
  EXPECT_EQ(parse_one("+OK\r\n"), simple("OK"));
  EXPECT_EQ(parse_one("+\r\n"), simple(""));
  EXPECT_EQ(parse_one("-ERR unknown command\r\n"), error_value("ERR unknown command"));
  EXPECT_EQ(parse_one(":0\r\n"), integer(0));
  EXPECT_EQ(parse_one(":-9223372036854775808\r\n"), integer(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(parse_one("$5\r\nhello\r\n"), bulk("hello"));
  EXPECT_EQ(parse_one("$0\r\n\r\n"), bulk(""));
  EXPECT_EQ(parse_one("$4\r\n\r\n\0\n\r\n"s), bulk("\r\n\0\n"s));
  EXPECT_EQ(parse_one("$-1\r\n"), null_value());
  EXPECT_EQ(parse_one("*-1\r\n"), null_value());
  EXPECT_EQ(parse_one("*0\r\n"), array({}));
  EXPECT_EQ(parse_one("*3\r\n:1\r\n$1\r\na\r\n*2\r\n$-1\r\n+x\r\n"),
            array({integer(1), bulk("a"), array({null_value(), simple("x")})}));
}

TEST(ReplyParserTest, Resp3Types) {
  EXPECT_EQ(parse_one("_\r\n"), null_value());
  EXPECT_EQ(parse_one("#t\r\n"), boolean(true));
  EXPECT_EQ(parse_one("#f\r\n"), boolean(false));
  EXPECT_EQ(parse_one(",1.5\r\n"), dbl(1.5));
  EXPECT_EQ(parse_one(",-2\r\n"), dbl(-2));
  EXPECT_EQ(parse_one(",1.1000000000000001\r\n"), dbl(1.1));
  EXPECT_EQ(parse_one(",1e+300\r\n"), dbl(1e300));
  EXPECT_EQ(parse_one(",inf\r\n"), dbl(std::numeric_limits<double>::infinity()));
  EXPECT_EQ(parse_one(",-inf\r\n"), dbl(-std::numeric_limits<double>::infinity()));
  const RespValue nan = parse_one(",nan\r\n");
  EXPECT_EQ(nan.type, RespType::kDouble);
  EXPECT_TRUE(std::isnan(nan.dbl));
  EXPECT_EQ(parse_one("(3492890328409238509324850943850943825024385\r\n"),
            big("3492890328409238509324850943850943825024385"));
  EXPECT_EQ(parse_one("(-1\r\n"), big("-1"));
  EXPECT_EQ(parse_one("!21\r\nSYNTAX invalid syntax\r\n"), blob_error("SYNTAX invalid syntax"));
  EXPECT_EQ(parse_one("=15\r\ntxt:Some string\r\n"), verbatim("txt", "Some string"));
  EXPECT_EQ(parse_one("=4\r\nmkd:\r\n"), verbatim("mkd", ""));
  EXPECT_EQ(parse_one("%2\r\n+first\r\n:1\r\n+second\r\n:2\r\n"),
            aggregate(RespType::kMap, {simple("first"), integer(1), simple("second"), integer(2)}));
  EXPECT_EQ(parse_one("%0\r\n"), aggregate(RespType::kMap, {}));
  EXPECT_EQ(parse_one("~3\r\n+a\r\n+b\r\n+c\r\n"),
            aggregate(RespType::kSet, {simple("a"), simple("b"), simple("c")}));
  EXPECT_EQ(parse_one(">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"),
            aggregate(RespType::kPush, {bulk("message"), bulk("ch"), bulk("hi")}));
}

TEST(ReplyParserTest, AttributesAreSkipped) {
  // The example of the RESP3 specification: an attribute in front of the reply it annotates.
  EXPECT_EQ(parse_one("|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n"
                      "*2\r\n:2039123\r\n:9543892\r\n"),
            array({integer(2039123), integer(9543892)}));
  // Inside an aggregate it does not count as an element.
  EXPECT_EQ(parse_one("*2\r\n|1\r\n+ttl\r\n:3600\r\n:1\r\n:2\r\n"),
            array({integer(1), integer(2)}));
  EXPECT_EQ(parse_one("|0\r\n:5\r\n"), integer(5));
  // An attribute whose value is itself annotated.
  EXPECT_EQ(parse_one("|1\r\n+a\r\n|1\r\n+b\r\n+c\r\n+d\r\n+value\r\n"), simple("value"));
  // Two replies, the second annotated: each call returns exactly one.
  const Outcome two = feed_whole("+one\r\n|1\r\n+a\r\n+b\r\n+two\r\n");
  EXPECT_THAT(two.values, ::testing::ElementsAre(simple("one"), simple("two")));
}

TEST(ReplyParserTest, ReturnsOneReplyPerCall) {
  const std::string stream = "+OK\r\n:1\r\n$3\r\nabc\r\n";
  ReplyParser parser;
  ASSERT_EQ(parser.parse(stream), ReplyParseStatus::kValue);
  EXPECT_EQ(parser.consumed(), 5u);
  EXPECT_EQ(parser.value(), simple("OK"));
  ASSERT_EQ(parser.parse(stream.substr(5)), ReplyParseStatus::kValue);
  EXPECT_EQ(parser.consumed(), 4u);
  EXPECT_EQ(parser.value(), integer(1));
  ASSERT_EQ(parser.parse(stream.substr(9)), ReplyParseStatus::kValue);
  EXPECT_EQ(parser.take_value(), bulk("abc"));
  EXPECT_EQ(parser.parse(""), ReplyParseStatus::kNeedMore);
  EXPECT_EQ(parser.consumed(), 0u);
}

std::string mixed_stream() {
  return "+OK\r\n"
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
         ":-12\r\n"
         "$6\r\nfoo\r\nb\r\n"
         "$-1\r\n*-1\r\n_\r\n"
         "*2\r\n*1\r\n$0\r\n\r\n%1\r\n+k\r\n~1\r\n#t\r\n"
         ",3.25\r\n(12345678901234567890\r\n"
         "=8\r\ntxt:abcd\r\n"
         "!3\r\nERR\r\n"
         "|1\r\n+meta\r\n:1\r\n>2\r\n+invalidate\r\n*0\r\n";
}

std::vector<RespValue> mixed_values() {
  return {
      simple("OK"),
      error_value("WRONGTYPE Operation against a key holding the wrong kind of value"),
      integer(-12),
      bulk("foo\r\nb"),
      null_value(),
      null_value(),
      null_value(),
      array({array({bulk("")}),
             aggregate(RespType::kMap, {simple("k"), aggregate(RespType::kSet, {boolean(true)})})}),
      dbl(3.25),
      big("12345678901234567890"),
      verbatim("txt", "abcd"),
      blob_error("ERR"),
      aggregate(RespType::kPush, {simple("invalidate"), array({})})};
}

TEST(ReplyParserTest, StreamFedAtOnceByteByByteAndCutAnywhere) {
  const std::string stream = mixed_stream();
  const std::vector<RespValue> expected = mixed_values();
  EXPECT_EQ(feed_whole(stream).values, expected);

  std::vector<size_t> every_byte;
  for (size_t i = 1; i < stream.size(); ++i) every_byte.push_back(i);
  const Outcome bytewise = feed(stream, every_byte);
  EXPECT_EQ(bytewise.values, expected);
  EXPECT_EQ(bytewise.unconsumed, 0u);

  for (size_t first = 0; first <= stream.size(); ++first) {
    for (size_t second = first; second <= stream.size(); second += 3) {
      const Outcome outcome = feed(stream, {first, second});
      ASSERT_EQ(outcome.values, expected) << "cuts at " << first << ", " << second;
      ASSERT_EQ(outcome.unconsumed, 0u);
    }
  }
}

TEST(ReplyParserTest, LargeBulkIsCopiedAsItArrives) {
  const std::string body(1 << 20, 'q');
  const std::string stream = "$" + std::to_string(body.size()) + "\r\n" + body + "\r\n";
  ReplyParser parser;
  size_t offset = 0;
  // Every piece is consumed as soon as it arrives, so nothing is ever scanned twice.
  for (; offset + 4096 < stream.size(); offset += 4096) {
    ASSERT_EQ(parser.parse(stream.data() + offset, 4096), ReplyParseStatus::kNeedMore);
    ASSERT_EQ(parser.consumed(), 4096u);
  }
  ASSERT_EQ(parser.parse(stream.data() + offset, stream.size() - offset), ReplyParseStatus::kValue);
  EXPECT_EQ(parser.value().str, body);
}

TEST(ReplyParserTest, CutHeaderLineIsNotConsumed) {
  ReplyParser parser;
  ASSERT_EQ(parser.parse("*2\r\n:12"), ReplyParseStatus::kNeedMore);
  EXPECT_EQ(parser.consumed(), 4u);
  ASSERT_EQ(parser.parse(":12"), ReplyParseStatus::kNeedMore);
  EXPECT_EQ(parser.consumed(), 0u);
  ASSERT_EQ(parser.parse(":12\r"), ReplyParseStatus::kNeedMore);
  EXPECT_EQ(parser.consumed(), 0u);
  ASSERT_EQ(parser.parse(":12\r\n:3\r\n"), ReplyParseStatus::kValue);
  EXPECT_EQ(parser.value(), array({integer(12), integer(3)}));
}

TEST(ReplyParserTest, HugeDeclaredSizesAreNotReservedUpFront) {
  ReplyParser parser;
  EXPECT_EQ(parser.parse("*2147483647\r\n$9223372036854775807\r\nabc"),
            ReplyParseStatus::kNeedMore);
  EXPECT_EQ(parser.consumed(), 38u);
}

TEST(ReplyParserTest, ProtocolErrors) {
  EXPECT_EQ(parse_error("?\r\n"), "Protocol error: invalid reply type byte '?'");
  EXPECT_EQ(parse_error("+OK\n"), "");  // no CR yet: waits
  EXPECT_EQ(parse_error("+OK\rx"), "Protocol error: line not terminated by CRLF");
  EXPECT_EQ(parse_error(":12a\r\n"), "Protocol error: invalid integer");
  EXPECT_EQ(parse_error(":\r\n"), "Protocol error: invalid integer");
  EXPECT_EQ(parse_error("$-2\r\n"), "Protocol error: invalid bulk length");
  EXPECT_EQ(parse_error("$x\r\n"), "Protocol error: invalid bulk length");
  EXPECT_EQ(parse_error("!-1\r\n"), "Protocol error: invalid bulk length");
  EXPECT_EQ(parse_error("$3\r\nabcde"), "Protocol error: bulk string not followed by CRLF");
  EXPECT_EQ(parse_error("*-2\r\n"), "Protocol error: invalid aggregate length");
  EXPECT_EQ(parse_error("%-1\r\n"), "Protocol error: invalid aggregate length");
  EXPECT_EQ(parse_error("%4611686018427387904\r\n"), "Protocol error: invalid aggregate length");
  EXPECT_EQ(parse_error("*?\r\n"), "Protocol error: invalid aggregate length");
  EXPECT_EQ(parse_error("$?\r\n"), "Protocol error: invalid bulk length");
  EXPECT_EQ(parse_error("_x\r\n"), "Protocol error: invalid null");
  EXPECT_EQ(parse_error("#x\r\n"), "Protocol error: invalid boolean");
  EXPECT_EQ(parse_error(",\r\n"), "Protocol error: invalid double");
  EXPECT_EQ(parse_error(",1.5x\r\n"), "Protocol error: invalid double");
  EXPECT_EQ(parse_error("(12a\r\n"), "Protocol error: invalid big number");
  EXPECT_EQ(parse_error("(\r\n"), "Protocol error: invalid big number");
  EXPECT_EQ(parse_error("=3\r\ntxt\r\n"), "Protocol error: invalid verbatim string");
  EXPECT_EQ(parse_error("=5\r\ntxt-a\r\n"), "Protocol error: invalid verbatim string");
}

TEST(ReplyParserTest, NestingIsBounded) {
  std::string deep;
  for (size_t i = 0; i < ReplyParser::kMaxDepth; ++i) deep += "*1\r\n";
  EXPECT_EQ(feed_whole(deep + ":1\r\n").error, "");
  EXPECT_EQ(feed_whole(deep + "*1\r\n:1\r\n").error, "Protocol error: reply nested too deep");
}

TEST(ReplyParserTest, ErrorIsStickyUntilReset) {
  ReplyParser parser;
  ASSERT_EQ(parser.parse("?\r\n"), ReplyParseStatus::kError);
  EXPECT_EQ(parser.parse("+OK\r\n"), ReplyParseStatus::kError);
  parser.reset();
  EXPECT_EQ(parser.error(), "");
  ASSERT_EQ(parser.parse("+OK\r\n"), ReplyParseStatus::kValue);
}

TEST(ReplyParserTest, ResetDropsAPartialReply) {
  ReplyParser parser;
  ASSERT_EQ(parser.parse("*3\r\n:1\r\n$5\r\nab"), ReplyParseStatus::kNeedMore);
  parser.reset();
  ASSERT_EQ(parser.parse(":7\r\n"), ReplyParseStatus::kValue);
  EXPECT_EQ(parser.value(), integer(7));
}

TEST(ReplyParserTest, DebugString) {
  EXPECT_EQ(to_debug_string(parse_one(mixed_stream().substr(0, 5))), "+OK");
  const RespValue value = parse_one(
      "*9\r\n-ERR x\r\n:5\r\n$3\r\na\"\n\r\n_\r\n%1\r\n+k\r\n~1\r\n#f\r\n>1\r\n,1.5\r\n"
      "=7\r\ntxt:a\tb\r\n(9\r\n!1\r\n\x01\r\n");
  EXPECT_EQ(to_debug_string(value),
            "[-ERR x, :5, \"a\\\"\\n\", (nil), {+k: ~{#f}}, >[,1.5], =txt:\"a\\tb\", (9, "
            "!\"\\x01\"]");
}

// ---------------------------------------------------------------------------------------
// Writer -> parser round trips: every reply the writer can produce, in both protocols, reads
// back as the value it stands for.

struct RoundTrip {
  std::string name;
  void (*write)(ReplyWriter&);
  RespValue resp2;
  RespValue resp3;
};

constexpr double kInfinity = std::numeric_limits<double>::infinity();

std::vector<RoundTrip> round_trips() {
  return {
      {"simple_string", [](ReplyWriter& w) { w.simple_string("OK"); }, simple("OK"), simple("OK")},
      {"error", [](ReplyWriter& w) { w.error("ERR syntax error"); },
       error_value("ERR syntax error"), error_value("ERR syntax error")},
      {"integer", [](ReplyWriter& w) { w.integer(-99); }, integer(-99), integer(-99)},
      {"bulk", [](ReplyWriter& w) { w.bulk("bin\0\r\n"s); }, bulk("bin\0\r\n"s),
       bulk("bin\0\r\n"s)},
      {"bulk_integer", [](ReplyWriter& w) { w.bulk_integer(42); }, bulk("42"), bulk("42")},
      {"null", [](ReplyWriter& w) { w.null(); }, null_value(), null_value()},
      {"null_array", [](ReplyWriter& w) { w.null_array(); }, null_value(), null_value()},
      {"array",
       [](ReplyWriter& w) {
         w.array_header(2);
         w.integer(1);
         w.bulk("x");
       },
       array({integer(1), bulk("x")}), array({integer(1), bulk("x")})},
      {"map",
       [](ReplyWriter& w) {
         w.map_header(2);
         w.bulk("a");
         w.integer(1);
         w.bulk("b");
         w.null();
       },
       array({bulk("a"), integer(1), bulk("b"), null_value()}),
       aggregate(RespType::kMap, {bulk("a"), integer(1), bulk("b"), null_value()})},
      {"set",
       [](ReplyWriter& w) {
         w.set_header(1);
         w.bulk("m");
       },
       array({bulk("m")}), aggregate(RespType::kSet, {bulk("m")})},
      {"push",
       [](ReplyWriter& w) {
         w.push_header(3);
         w.bulk("message");
         w.bulk("ch");
         w.bulk("hello");
       },
       array({bulk("message"), bulk("ch"), bulk("hello")}),
       aggregate(RespType::kPush, {bulk("message"), bulk("ch"), bulk("hello")})},
      {"double", [](ReplyWriter& w) { w.double_value(1.1); }, bulk("1.1000000000000001"), dbl(1.1)},
      {"double_inf", [](ReplyWriter& w) { w.double_value(kInfinity); }, bulk("inf"),
       dbl(kInfinity)},
      {"double_minus_inf", [](ReplyWriter& w) { w.double_value(-kInfinity); }, bulk("-inf"),
       dbl(-kInfinity)},
      {"double_tiny", [](ReplyWriter& w) { w.double_value(5e-324); },
       bulk("4.9406564584124654e-324"), dbl(5e-324)},
      {"boolean_true", [](ReplyWriter& w) { w.boolean(true); }, integer(1), boolean(true)},
      {"boolean_false", [](ReplyWriter& w) { w.boolean(false); }, integer(0), boolean(false)},
      {"verbatim", [](ReplyWriter& w) { w.verbatim("line1\r\nline2"); }, bulk("line1\r\nline2"),
       verbatim("txt", "line1\r\nline2")},
      {"big_number", [](ReplyWriter& w) { w.big_number("-123456789012345678901234567890"); },
       bulk("-123456789012345678901234567890"), big("-123456789012345678901234567890")},
      {"raw", [](ReplyWriter& w) { w.raw("+QUEUED\r\n"); }, simple("QUEUED"), simple("QUEUED")},
      {"deferred_array",
       [](ReplyWriter& w) {
         const DeferredLength length = w.begin_deferred();
         for (int i = 0; i < 3; ++i) w.integer(i);
         w.end_deferred_array(length, 3);
       },
       array({integer(0), integer(1), integer(2)}), array({integer(0), integer(1), integer(2)})},
      {"deferred_map",
       [](ReplyWriter& w) {
         const DeferredLength length = w.begin_deferred();
         w.bulk("k");
         w.double_value(2.5);
         w.end_deferred_map(length, 1);
       },
       array({bulk("k"), bulk("2.5")}), aggregate(RespType::kMap, {bulk("k"), dbl(2.5)})},
      {"deferred_set",
       [](ReplyWriter& w) {
         const DeferredLength length = w.begin_deferred();
         w.end_deferred_set(length, 0);
       },
       array({}), aggregate(RespType::kSet, {})},
      {"nested",
       [](ReplyWriter& w) {
         w.array_header(2);
         w.map_header(1);
         w.simple_string("role");
         w.set_header(2);
         w.boolean(true);
         w.null_array();
         const DeferredLength length = w.begin_deferred();
         w.verbatim("v", "mkd");
         w.big_number("7");
         w.end_deferred_array(length, 2);
       },
       array({array({simple("role"), array({integer(1), null_value()})}),
              array({bulk("v"), bulk("7")})}),
       array({aggregate(RespType::kMap,
                        {simple("role"), aggregate(RespType::kSet, {boolean(true), null_value()})}),
              array({verbatim("mkd", "v"), big("7")})})},
  };
}

TEST(ReplyRoundTripTest, EveryTypeInBothProtocols) {
  for (const RoundTrip& trip : round_trips()) {
    for (const int resp : {2, 3}) {
      SCOPED_TRACE(trip.name + " RESP" + std::to_string(resp));
      std::string out;
      ReplyWriter writer(&out, resp);
      trip.write(writer);
      EXPECT_EQ(parse_one(out), resp == 2 ? trip.resp2 : trip.resp3);
    }
  }
}

TEST(ReplyRoundTripTest, AllRepliesPipelinedAndCutEverywhere) {
  for (const int resp : {2, 3}) {
    std::string out;
    ReplyWriter writer(&out, resp);
    std::vector<RespValue> expected;
    for (const RoundTrip& trip : round_trips()) {
      trip.write(writer);
      expected.push_back(resp == 2 ? trip.resp2 : trip.resp3);
    }
    for (size_t cut = 0; cut <= out.size(); ++cut) {
      ASSERT_EQ(feed(out, {cut}).values, expected) << "RESP" << resp << " cut at " << cut;
    }
  }
}

TEST(ReplyRoundTripTest, NanDouble) {
  std::string out;
  ReplyWriter writer(&out, 3);
  writer.double_value(std::nan(""));
  const RespValue value = parse_one(out);
  EXPECT_EQ(value.type, RespType::kDouble);
  EXPECT_TRUE(std::isnan(value.dbl));
}

}  // namespace
}  // namespace keywarden
