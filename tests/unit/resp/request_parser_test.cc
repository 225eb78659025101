#include "resp/request_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "allocation_counter.h"

namespace keywarden {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Command = std::vector<std::string>;

using namespace std::string_literals;  // "...\0..."s keeps embedded NULs

struct Outcome {
  std::vector<Command> commands;
  std::string error;      // empty unless the parser reported kError
  size_t unconsumed = 0;  // bytes still in the buffer at the end
  bool in_progress = false;
};

// Plays a connection: the stream arrives in pieces cut at `cuts` (ascending offsets); after
// each arrival the parser runs until it needs more, and consumed bytes are dropped. With
// `move_buffer`, every call sees a freshly allocated copy of the pending bytes and the old one
// is freed, so a parser that kept a pointer into an earlier buffer would read freed memory.
Outcome feed(std::string_view stream, const std::vector<size_t>& cuts,
             const ParserLimits& limits = {}, bool move_buffer = true) {
  RequestParser parser(limits);
  Outcome outcome;
  std::string pending;
  size_t previous = 0;
  std::vector<size_t> ends = cuts;
  ends.push_back(stream.size());
  for (const size_t end : ends) {
    pending.append(stream.substr(previous, end - previous));
    previous = end;
    while (true) {
      std::unique_ptr<char[]> copy;
      const char* data = pending.data();
      if (move_buffer) {
        copy = std::make_unique<char[]>(pending.size() + 1);
        pending.copy(copy.get(), pending.size());
        data = copy.get();
      }
      const ParseStatus status = parser.parse(data, pending.size());
      if (status == ParseStatus::kCommand) {
        outcome.commands.emplace_back(parser.args().begin(), parser.args().end());
      }
      pending.erase(0, parser.consumed());
      if (status == ParseStatus::kError) {
        outcome.error = std::string(parser.error());
        outcome.unconsumed = pending.size();
        return outcome;
      }
      if (status == ParseStatus::kNeedMore) break;
    }
  }
  outcome.unconsumed = pending.size();
  outcome.in_progress = parser.in_progress();
  return outcome;
}

Outcome feed_whole(std::string_view stream, const ParserLimits& limits = {}) {
  return feed(stream, {}, limits);
}

std::vector<size_t> every_byte(size_t size) {
  std::vector<size_t> cuts;
  for (size_t i = 1; i < size; ++i) cuts.push_back(i);
  return cuts;
}

// A pipeline mixing both request forms and their corner cases, with the commands it holds.
struct Pipeline {
  std::string stream;
  std::vector<Command> commands;
};

Pipeline mixed_pipeline() {
  Pipeline p;
  auto add = [&p](std::string bytes, Command command) {
    p.stream += bytes;
    if (!command.empty()) p.commands.push_back(std::move(command));
  };
  add("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n", {"SET", "key", "value"});
  add("*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", {"ECHO", ""});
  add("*2\r\n$4\r\nECHO\r\n$8\r\na\r\nb\0c\r\n\r\n"s, {"ECHO", "a\r\nb\0c\r\n"s});
  add("PING\r\n", {"PING"});
  add("\r\n", {});
  add("*0\r\n", {});
  add("*-1\r\n", {});
  add("  SET   \"a b\"  'c\\'d' \"\\x41\\n\"  \r\n", {"SET", "a b", "c'd", "A\n"});
  add("GET k\n", {"GET", "k"});
  add("\n", {});
  add("*1\r\n$4\r\nPINGxy", {"PING"});  // the 2 bytes after a bulk are skipped unread
  add("*1\rX$4\rXPING\r\n", {"PING"});  // so is the byte after a header's CR
  add("*-7\r\n", {});
  add("ECHO a\rb\r\n", {"ECHO", "a", "b"});
  add("*4\r\n$1\r\na\r\n$2\r\nbc\r\n$3\r\ndef\r\n$10\r\n0123456789\r\n",
      {"a", "bc", "def", "0123456789"});
  add("x\r\n", {"x"});
  return p;
}

TEST(RequestParserTest, ParsesAPipelineFedAtOnce) {
  const Pipeline p = mixed_pipeline();
  const Outcome outcome = feed_whole(p.stream);
  EXPECT_EQ(outcome.error, "");
  EXPECT_EQ(outcome.commands, p.commands);
  EXPECT_EQ(outcome.unconsumed, 0u);
  EXPECT_FALSE(outcome.in_progress);
}

TEST(RequestParserTest, ParsesAPipelineFedOneByteAtATime) {
  const Pipeline p = mixed_pipeline();
  const Outcome outcome = feed(p.stream, every_byte(p.stream.size()));
  EXPECT_EQ(outcome.error, "");
  EXPECT_EQ(outcome.commands, p.commands);
  EXPECT_EQ(outcome.unconsumed, 0u);
  EXPECT_FALSE(outcome.in_progress);
}

TEST(RequestParserTest, ParsesAPipelineCutAtEveryPoint) {
  const Pipeline p = mixed_pipeline();
  for (size_t cut = 0; cut <= p.stream.size(); ++cut) {
    const Outcome outcome = feed(p.stream, {cut});
    ASSERT_EQ(outcome.commands, p.commands) << "cut at " << cut;
    ASSERT_EQ(outcome.error, "") << "cut at " << cut;
    ASSERT_EQ(outcome.unconsumed, 0u) << "cut at " << cut;
  }
}

TEST(RequestParserTest, ParsesAPipelineCutAtEveryPairOfPoints) {
  const Pipeline p = mixed_pipeline();
  for (size_t first = 1; first < p.stream.size(); ++first) {
    for (size_t second = first; second < p.stream.size(); ++second) {
      const Outcome outcome = feed(p.stream, {first, second}, {}, /*move_buffer=*/false);
      ASSERT_EQ(outcome.commands, p.commands) << "cuts at " << first << ", " << second;
      ASSERT_EQ(outcome.unconsumed, 0u);
    }
  }
}

TEST(RequestParserTest, EachCommandAloneCutAtEveryPoint) {
  const std::vector<std::pair<std::string, Command>> cases = {
      {"*1\r\n$4\r\nPING\r\n", {"PING"}},
      {"*2\r\n$3\r\nGET\r\n$0\r\n\r\n", {"GET", ""}},
      {"PING\n", {"PING"}},
      {"SET 'a' \"b\"\r\n", {"SET", "a", "b"}},
      {"\r\n*1\r\n$1\r\nx\r\n", {"x"}},
  };
  for (const auto& [stream, command] : cases) {
    for (size_t cut = 0; cut <= stream.size(); ++cut) {
      const Outcome outcome = feed(stream, {cut});
      ASSERT_THAT(outcome.commands, ElementsAre(command)) << stream << " cut at " << cut;
      ASSERT_EQ(outcome.unconsumed, 0u);
    }
  }
}

TEST(RequestParserTest, MultibulkArgumentsPointIntoTheCallersBuffer) {
  const std::string buffer = "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n";
  RequestParser parser;
  ASSERT_EQ(parser.parse(buffer), ParseStatus::kCommand);
  ASSERT_EQ(parser.args().size(), 2u);
  EXPECT_EQ(parser.args()[0].data(), buffer.data() + 8);
  EXPECT_EQ(parser.args()[1].data(), buffer.data() + 17);
  EXPECT_EQ(parser.consumed(), buffer.size());
}

TEST(RequestParserTest, ReturnsOneCommandPerCallAndReportsItsBytes) {
  const std::string buffer = "*1\r\n$4\r\nPING\r\nPING\r\n*1\r\n$4\r\nPI";
  RequestParser parser;
  ASSERT_EQ(parser.parse(buffer), ParseStatus::kCommand);
  EXPECT_EQ(parser.consumed(), 14u);
  ASSERT_EQ(parser.parse(buffer.data() + 14, buffer.size() - 14), ParseStatus::kCommand);
  EXPECT_EQ(parser.consumed(), 6u);
  EXPECT_THAT(parser.args(), ElementsAre("PING"));
  ASSERT_EQ(parser.parse(buffer.data() + 20, buffer.size() - 20), ParseStatus::kNeedMore);
  EXPECT_EQ(parser.consumed(), 0u);
  EXPECT_THAT(parser.args(), IsEmpty());
  EXPECT_TRUE(parser.in_progress());
}

TEST(RequestParserTest, SkippedEmptyCommandsAreConsumedEvenWhenMoreIsNeeded) {
  const std::string buffer = "\r\n*0\r\n\n*-1\r\n*1\r\n$4\r\nPI";
  RequestParser parser;
  ASSERT_EQ(parser.parse(buffer), ParseStatus::kNeedMore);
  EXPECT_EQ(parser.consumed(), 12u);
  EXPECT_TRUE(parser.in_progress());

  // Only empty commands: all consumed, nothing in progress.
  const std::string blanks = "\r\n\r\n*0\r\n";
  RequestParser other;
  ASSERT_EQ(other.parse(blanks), ParseStatus::kNeedMore);
  EXPECT_EQ(other.consumed(), blanks.size());
  EXPECT_FALSE(other.in_progress());
}

TEST(RequestParserTest, EmptyBufferNeedsMore) {
  RequestParser parser;
  EXPECT_EQ(parser.parse("", 0), ParseStatus::kNeedMore);
  EXPECT_EQ(parser.consumed(), 0u);
  EXPECT_FALSE(parser.in_progress());
}

TEST(RequestParserTest, InlineArgumentsSurviveTheBufferAndLastUntilTheNextCall) {
  RequestParser parser;
  auto buffer = std::make_unique<std::string>("SET \"a\\x00b\" c\r\n");
  ASSERT_EQ(parser.parse(*buffer), ParseStatus::kCommand);
  buffer.reset();  // inline arguments live in the parser's arena, not in the buffer
  EXPECT_THAT(parser.args(), ElementsAre("SET", "a\0b"s, "c"));
}

// ---------------------------------------------------------------------------------------
// Protocol errors, each worded as Redis 7.0 words it (checked against redis-server 7.0.15).

struct ErrorCase {
  std::string stream;
  std::string error;
};

std::vector<ErrorCase> error_cases() {
  return {
      {"*2147483648\r\n", "ERR Protocol error: invalid multibulk length"},
      {"*9223372036854775808\r\n", "ERR Protocol error: invalid multibulk length"},
      {"*-0\r\n", "ERR Protocol error: invalid multibulk length"},
      {"*01\r\n", "ERR Protocol error: invalid multibulk length"},
      {"*+1\r\n", "ERR Protocol error: invalid multibulk length"},
      {"*\r\n", "ERR Protocol error: invalid multibulk length"},
      {"* 1\r\n", "ERR Protocol error: invalid multibulk length"},
      {"*1 \r\n", "ERR Protocol error: invalid multibulk length"},
      {"*1x\r\n", "ERR Protocol error: invalid multibulk length"},
      {"*-\r\n", "ERR Protocol error: invalid multibulk length"},
      {"*1\n\r\n", "ERR Protocol error: invalid multibulk length"},
      {"*1\r\n$-1\r\n", "ERR Protocol error: invalid bulk length"},
      {"*1\r\n$-0\r\n", "ERR Protocol error: invalid bulk length"},
      {"*1\r\n$01\r\n", "ERR Protocol error: invalid bulk length"},
      {"*1\r\n$\r\n", "ERR Protocol error: invalid bulk length"},
      {"*1\r\n$4 \r\n", "ERR Protocol error: invalid bulk length"},
      {"*1\r\n$536870913\r\n", "ERR Protocol error: invalid bulk length"},
      {"*1\r\n$99999999999999999999\r\n", "ERR Protocol error: invalid bulk length"},
      {"*1\r\nx\r\n", "ERR Protocol error: expected '$', got 'x'"},
      {"*1\r\n\r\n", "ERR Protocol error: expected '$', got ' '"},
      {"*1\r\n\n\r\n", "ERR Protocol error: expected '$', got ' '"},
      {"*1\r\n*1\r\n", "ERR Protocol error: expected '$', got '*'"},
      {"*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n", "ERR Protocol error: expected '$', got 'f'"},
      {"*1\r\n\xff\r\n", "ERR Protocol error: expected '$', got '\xff'"},
      {"ECHO \"abc\r\n", "ERR Protocol error: unbalanced quotes in request"},
      {"ECHO 'abc\r\n", "ERR Protocol error: unbalanced quotes in request"},
      {"ECHO \"abc\"d\r\n", "ERR Protocol error: unbalanced quotes in request"},
      {"ECHO 'abc'd\r\n", "ERR Protocol error: unbalanced quotes in request"},
      {"ECHO \"\\\"\r\n", "ERR Protocol error: unbalanced quotes in request"},
      {"ECHO \"a\\\r\n", "ERR Protocol error: unbalanced quotes in request"},
  };
}

TEST(RequestParserTest, ReportsEachProtocolErrorWhateverTheCuts) {
  for (const ErrorCase& c : error_cases()) {
    SCOPED_TRACE(c.stream);
    EXPECT_EQ(feed_whole(c.stream).error, c.error);
    EXPECT_EQ(feed(c.stream, every_byte(c.stream.size())).error, c.error);
    for (size_t cut = 0; cut <= c.stream.size(); ++cut) {
      ASSERT_EQ(feed(c.stream, {cut}).error, c.error) << "cut at " << cut;
    }
  }
}

TEST(RequestParserTest, CommandsBeforeAnErrorAreStillDelivered) {
  const Outcome outcome = feed_whole("PING\r\n*1\r\n$1\r\na\r\n*1\r\n$-5\r\nPING\r\n");
  EXPECT_THAT(outcome.commands, ElementsAre(Command{"PING"}, Command{"a"}));
  EXPECT_EQ(outcome.error, "ERR Protocol error: invalid bulk length");
}

TEST(RequestParserTest, ErrorIsStickyUntilReset) {
  RequestParser parser;
  ASSERT_EQ(parser.parse("*x\r\n"), ParseStatus::kError);
  EXPECT_EQ(parser.parse("PING\r\n"), ParseStatus::kError);
  EXPECT_EQ(parser.error(), "ERR Protocol error: invalid multibulk length");
  parser.reset();
  EXPECT_EQ(parser.error(), "");
  ASSERT_EQ(parser.parse("PING\r\n"), ParseStatus::kCommand);
  EXPECT_THAT(parser.args(), ElementsAre("PING"));
}

TEST(RequestParserTest, ResetDropsAPartialCommand) {
  RequestParser parser;
  ASSERT_EQ(parser.parse("*2\r\n$3\r\nGET\r\n"), ParseStatus::kNeedMore);
  EXPECT_TRUE(parser.in_progress());
  parser.reset();
  EXPECT_FALSE(parser.in_progress());
  ASSERT_EQ(parser.parse("PING\r\n"), ParseStatus::kCommand);
  EXPECT_THAT(parser.args(), ElementsAre("PING"));
}

TEST(RequestParserTest, MultibulkCountUpToIntMaxIsAccepted) {
  RequestParser parser;
  EXPECT_EQ(parser.parse("*2147483647\r\n"), ParseStatus::kNeedMore);
  EXPECT_TRUE(parser.in_progress());
  RequestParser bigger;
  EXPECT_EQ(bigger.parse("*1048577\r\n$1\r\na\r\n"), ParseStatus::kNeedMore);
}

TEST(RequestParserTest, ConfiguredMultibulkLimit) {
  ParserLimits limits;
  limits.max_multibulk = 3;
  EXPECT_THAT(feed_whole("*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", limits).commands,
              ElementsAre(Command{"a", "b", "c"}));
  EXPECT_EQ(feed_whole("*4\r\n", limits).error, "ERR Protocol error: invalid multibulk length");
}

TEST(RequestParserTest, BulkLengthLimitIsInclusive) {
  ParserLimits limits;
  limits.proto_max_bulk_len = 5;
  EXPECT_THAT(feed_whole("*1\r\n$5\r\nabcde\r\n", limits).commands, ElementsAre(Command{"abcde"}));
  EXPECT_EQ(feed_whole("*1\r\n$6\r\nabcdef\r\n", limits).error,
            "ERR Protocol error: invalid bulk length");
  RequestParser parser;  // the default is 512 MB
  EXPECT_EQ(parser.parse("*1\r\n$536870912\r\n"), ParseStatus::kNeedMore);
}

TEST(RequestParserTest, UnlimitedBulkForTheReplicationLink) {
  ParserLimits limits;
  limits.proto_max_bulk_len = ParserLimits::kUnlimitedBulk;
  RequestParser parser(limits);
  const std::string header = "*1\r\n$9223372036854775807\r\n";
  ASSERT_EQ(parser.parse(header), ParseStatus::kNeedMore);
  EXPECT_EQ(parser.bytes_wanted(), header.size() + 9223372036854775807ull + 2);
}

TEST(RequestParserTest, UnauthenticatedLimits) {
  ParserLimits limits;
  limits.auth_required = true;
  std::string ten = "*10\r\n";
  for (int i = 0; i < 10; ++i) ten += "$1\r\nx\r\n";
  EXPECT_EQ(feed_whole(ten, limits).commands.size(), 1u);
  EXPECT_EQ(feed_whole("*11\r\n", limits).error,
            "ERR Protocol error: unauthenticated multibulk length");
  EXPECT_EQ(feed_whole("*1\r\n$16385\r\n", limits).error,
            "ERR Protocol error: unauthenticated bulk length");
  // An invalid length is reported as such before the authentication check.
  EXPECT_EQ(feed_whole("*1\r\n$600000000\r\n", limits).error,
            "ERR Protocol error: invalid bulk length");
  EXPECT_EQ(feed_whole("*-20\r\nPING\r\n", limits).commands, std::vector<Command>{{"PING"}});

  RequestParser parser(limits);
  EXPECT_EQ(parser.parse("*1\r\n$16384\r\n"), ParseStatus::kNeedMore);
  RequestParser authenticated(limits);
  authenticated.set_auth_required(false);
  EXPECT_EQ(authenticated.parse("*11\r\n$16385\r\n"), ParseStatus::kNeedMore);
}

TEST(RequestParserTest, TooBigInlineRequest) {
  const std::string at_limit = "ECHO " + std::string(65536 - 5, 'a');
  RequestParser parser;
  EXPECT_EQ(parser.parse(at_limit), ParseStatus::kNeedMore);
  const std::string over = at_limit + "a";
  EXPECT_EQ(parser.parse(over), ParseStatus::kError);
  EXPECT_EQ(parser.error(), "ERR Protocol error: too big inline request");

  // The limit applies to a line still waiting for its newline; a longer line that arrives
  // whole is accepted, as in Redis.
  const Outcome whole = feed_whole("ECHO " + std::string(100000, 'b') + "\r\n");
  ASSERT_EQ(whole.commands.size(), 1u);
  EXPECT_EQ(whole.commands[0][1].size(), 100000u);
}

TEST(RequestParserTest, TooBigInlineRequestFedByteByByte) {
  const std::string stream = std::string(65537, 'a');
  const Outcome outcome = feed(stream, every_byte(stream.size()), {}, /*move_buffer=*/false);
  EXPECT_EQ(outcome.error, "ERR Protocol error: too big inline request");
}

TEST(RequestParserTest, TooBigHeaderLines) {
  EXPECT_EQ(feed_whole("*" + std::string(65535, '1')).error, "");
  EXPECT_EQ(feed_whole("*" + std::string(65536, '1')).error,
            "ERR Protocol error: too big mbulk count string");
  // For a bulk header the limit counts from the header's own start.
  EXPECT_EQ(feed_whole("*1\r\n$" + std::string(65535, '1')).error, "");
  EXPECT_EQ(feed_whole("*1\r\n$" + std::string(65536, '1')).error,
            "ERR Protocol error: too big bulk count string");
  const std::string stream = "*1\r\n$" + std::string(70000, '1');
  EXPECT_EQ(feed(stream, every_byte(stream.size()), {}, false).error,
            "ERR Protocol error: too big bulk count string");
}

TEST(RequestParserTest, ConfiguredInlineLimit) {
  ParserLimits limits;
  limits.inline_max = 8;
  EXPECT_EQ(feed_whole("PING PING", limits).error, "ERR Protocol error: too big inline request");
  EXPECT_EQ(feed_whole("PING PIN", limits).error, "");
  EXPECT_EQ(feed_whole("*1\r\n$1234567", limits).error, "");
  EXPECT_EQ(feed_whole("*1\r\n$12345678", limits).error,
            "ERR Protocol error: too big bulk count string");
}

TEST(RequestParserTest, NulBeforeTheLineEndHidesItAsInRedis) {
  // Redis looks for line ends with strchr(), which stops at a NUL: the request then waits,
  // and turns into "too big" once the inline limit is passed.
  EXPECT_EQ(feed_whole("PING\0\r\n"s).commands.size(), 0u);
  EXPECT_EQ(feed_whole("*1\0\r\n"s).error, "");
  EXPECT_EQ(feed_whole("*1\r\n$4\0\r\nPING\r\n"s).commands.size(), 0u);
  EXPECT_EQ(feed_whole("PING\0\r\n"s + std::string(65536, 'x')).error,
            "ERR Protocol error: too big inline request");
  EXPECT_EQ(feed_whole("*1\0\r\n"s + std::string(65536, 'x')).error,
            "ERR Protocol error: too big mbulk count string");
  // Bulk bodies are binary and may hold NULs anywhere.
  EXPECT_THAT(feed_whole("*1\r\n$3\r\n\0\0\0\r\n"s).commands, ElementsAre(Command{"\0\0\0"s}));
}

TEST(RequestParserTest, WaitsForTheByteAfterAHeaderCr) {
  RequestParser parser;
  EXPECT_EQ(parser.parse("*1\r"), ParseStatus::kNeedMore);
  EXPECT_EQ(parser.parse("*1\r\n$4\r"), ParseStatus::kNeedMore);
  EXPECT_EQ(parser.parse("*1\r\n$4\r\nPING\r"), ParseStatus::kNeedMore);
  EXPECT_EQ(parser.parse("*1\r\n$4\r\nPING\r\n"), ParseStatus::kCommand);
}

TEST(RequestParserTest, HugeDeclaredBulkIsNotAllocatedUpFront) {
  const std::string header = "*2\r\n$3\r\nSET\r\n$536870912\r\n";
  RequestParser parser;
  testing::AllocationScope scope;
  ASSERT_EQ(parser.parse(header + "abc"), ParseStatus::kNeedMore);
  const testing::AllocationStats stats = scope.stop();
  EXPECT_LT(stats.largest, 4096u);
  EXPECT_EQ(parser.consumed(), 0u);
  EXPECT_EQ(parser.bytes_wanted(), header.size() + 536870912u + 2);
}

TEST(RequestParserTest, HugeDeclaredCountIsNotAllocatedUpFront) {
  RequestParser parser;
  testing::AllocationScope scope;
  ASSERT_EQ(parser.parse("*2147483647\r\n$1\r\na\r\n"), ParseStatus::kNeedMore);
  EXPECT_LT(scope.stop().largest, 64u * 1024);
}

TEST(RequestParserTest, BytesWantedTracksTheAwaitedBody) {
  RequestParser parser;
  ASSERT_EQ(parser.parse("*1\r\n$10\r\n01234"), ParseStatus::kNeedMore);
  EXPECT_EQ(parser.bytes_wanted(), 9u + 12u);
  ASSERT_EQ(parser.parse("*1\r\n$10\r\n0123456789\r"), ParseStatus::kNeedMore);
  EXPECT_EQ(parser.bytes_wanted(), 21u);
  parser.reset();
  ASSERT_EQ(parser.parse("*1\r\n$"), ParseStatus::kNeedMore);
  EXPECT_EQ(parser.bytes_wanted(), 0u);  // waiting for a line: size unknown
}

TEST(RequestParserTest, LargeBulkArrivingInChunks) {
  std::string body(3 * 1024 * 1024 + 17, '\0');
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>(i * 7);
  const std::string stream = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + std::to_string(body.size()) +
                             "\r\n" + body + "\r\n*1\r\n$4\r\nPING\r\n";
  std::vector<size_t> cuts;
  for (size_t at = 4096; at < stream.size(); at += 4096) cuts.push_back(at);
  const Outcome outcome = feed(stream, cuts, {}, /*move_buffer=*/false);
  ASSERT_EQ(outcome.commands.size(), 2u);
  EXPECT_EQ(outcome.commands[0][2], body);
  EXPECT_THAT(outcome.commands[1], ElementsAre("PING"));
}

TEST(RequestParserTest, ManyArgumentsInOneCommand) {
  std::string stream = "*5000\r\n";
  Command expected;
  for (int i = 0; i < 5000; ++i) {
    const std::string arg = std::to_string(i);
    stream += "$" + std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
    expected.push_back(arg);
  }
  stream += "PING\r\n";
  const Outcome outcome = feed_whole(stream);
  EXPECT_THAT(outcome.commands, ElementsAre(expected, Command{"PING"}));
}

TEST(RequestParserTest, SmallCommandsAllocateNothingOnceWarm) {
  const std::string multibulk = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n";
  const std::string inline_command = "SET key \"value with spaces\"\r\n";
  RequestParser parser;
  ASSERT_EQ(parser.parse(multibulk), ParseStatus::kCommand);  // warm-up sizes the tables
  ASSERT_EQ(parser.parse(inline_command), ParseStatus::kCommand);
  testing::AllocationScope scope;
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(parser.parse(multibulk), ParseStatus::kCommand);
    ASSERT_EQ(parser.parse(inline_command), ParseStatus::kCommand);
    ASSERT_EQ(parser.parse(multibulk.data(), 20), ParseStatus::kNeedMore);
    ASSERT_EQ(parser.parse(multibulk), ParseStatus::kCommand);
  }
  EXPECT_EQ(scope.stop().count, 0u);
}

TEST(RequestParserTest, GivesBackMemoryAfterAnUnusuallyLargeCommand) {
  std::string big = "*3000\r\n";
  for (int i = 0; i < 3000; ++i) big += "$1\r\nx\r\n";
  RequestParser parser;
  ASSERT_EQ(parser.parse(big), ParseStatus::kCommand);
  ASSERT_EQ(parser.args().size(), 3000u);
  ASSERT_EQ(parser.parse("PING\r\n"), ParseStatus::kCommand);
  EXPECT_THAT(parser.args(), ElementsAre("PING"));
}

// ---------------------------------------------------------------------------------------
// Inline splitting (sdssplitargs rules; each expectation checked against redis-server).

Command split(std::string_view line, bool* ok = nullptr) {
  std::string arena;
  std::vector<ArgSpan> spans;
  const bool balanced = split_inline_arguments(line, arena, spans);
  if (ok != nullptr) *ok = balanced;
  Command out;
  for (const ArgSpan& span : spans) out.push_back(arena.substr(span.offset, span.length));
  return out;
}

bool splits(std::string_view line) {
  bool ok = false;
  split(line, &ok);
  return ok;
}

TEST(InlineSplitTest, Whitespace) {
  EXPECT_THAT(split(""), IsEmpty());
  EXPECT_THAT(split("   \t "), IsEmpty());
  EXPECT_THAT(split("  ECHO   x  "), ElementsAre("ECHO", "x"));
  EXPECT_THAT(split("ECHO\tx"), ElementsAre("ECHO", "x"));
  EXPECT_THAT(split("a\rb"), ElementsAre("a", "b"));
  EXPECT_THAT(split("x\r"), ElementsAre("x"));
  // \v and \f are skipped between words but do not end one.
  EXPECT_THAT(split("\va"), ElementsAre("a"));
  EXPECT_THAT(split("a\vb"), ElementsAre("a\vb"));
  EXPECT_THAT(split("x\f"), ElementsAre("x\f"));
  EXPECT_THAT(split("\xff \x80"), ElementsAre("\xff", "\x80"));
}

TEST(InlineSplitTest, DoubleQuotes) {
  EXPECT_THAT(split("\"\""), ElementsAre(""));
  EXPECT_THAT(split("\"a b\" c"), ElementsAre("a b", "c"));
  EXPECT_THAT(split(R"("a\x41\x4g\n\r\t\b\a\\\"\q")"), ElementsAre("aAx4g\n\r\t\b\a\\\"q"));
  EXPECT_THAT(split(R"("\xff\xFf\x00")"), ElementsAre("\xff\xff\0"s));
  EXPECT_THAT(split(R"("\x")"), ElementsAre("x"));
  EXPECT_THAT(split(R"("\x4")"), ElementsAre("x4"));
  EXPECT_THAT(split(R"("a\xZZ")"), ElementsAre("axZZ"));
  EXPECT_THAT(split("a\"b c\""), ElementsAre("ab c"));  // quotes may open mid-word
  EXPECT_THAT(split("\"a\"\vb"), ElementsAre("a", "b"));
  EXPECT_THAT(split("\"a\"\f"), ElementsAre("a"));
  EXPECT_THAT(split("\"'\""), ElementsAre("'"));
}

TEST(InlineSplitTest, SingleQuotes) {
  EXPECT_THAT(split("''"), ElementsAre(""));
  EXPECT_THAT(split(R"('a\'b\n"')"), ElementsAre("a'b\\n\""));
  EXPECT_THAT(split(R"('\x41')"), ElementsAre("\\x41"));
  EXPECT_THAT(split(R"('a\\' b')"), ElementsAre("a\\' b"));
}

TEST(InlineSplitTest, BackslashOutsideQuotesIsLiteral) {
  EXPECT_THAT(split(R"(\x41 a\b)"), ElementsAre("\\x41", "a\\b"));
}

TEST(InlineSplitTest, Unbalanced) {
  EXPECT_FALSE(splits("\"abc"));
  EXPECT_FALSE(splits("'abc"));
  EXPECT_FALSE(splits("\"abc\"d"));
  EXPECT_FALSE(splits("'abc'd"));
  EXPECT_FALSE(splits("\"abc\"'d'"));
  EXPECT_FALSE(splits(R"("\")"));
  EXPECT_FALSE(splits(R"("a\)"));
  EXPECT_FALSE(splits(R"('a\')"));
  EXPECT_TRUE(splits("\"abc\" d"));
  EXPECT_TRUE(splits("'abc'\td"));
}

TEST(InlineSplitTest, AppendsToTheArena) {
  std::string arena = "keep";
  std::vector<ArgSpan> spans;
  ASSERT_TRUE(split_inline_arguments("a \"b c\"", arena, spans));
  EXPECT_EQ(arena, "keepab c");
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].offset, 4u);
  EXPECT_EQ(spans[1].offset, 5u);
  EXPECT_EQ(spans[1].length, 3u);
}

// The connection's hand-off of a big bulk: the body is taken out of the buffer, read elsewhere,
// and the argument views it there; the command goes on in the buffer after the cut.
TEST(RequestParserTest, DetachedBulkIsViewedWhereTheCallerPutIt) {
  RequestParser parser;
  std::string buffer = "*1\r\n$4\r\nPING\r\n*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\n0123";
  ASSERT_EQ(parser.parse(buffer), ParseStatus::kCommand);
  buffer.erase(0, parser.consumed());
  ASSERT_EQ(parser.parse(buffer), ParseStatus::kNeedMore);
  buffer.erase(0, parser.consumed());
  const std::optional<RequestParser::AwaitedBulk> awaited = parser.awaited_bulk();
  ASSERT_TRUE(awaited.has_value());
  EXPECT_EQ(awaited->length, 10u);
  EXPECT_EQ(buffer.substr(awaited->offset), "0123");

  std::string body = buffer.substr(awaited->offset);  // what arrived of it moves aside
  buffer.resize(awaited->offset);
  body.reserve(12);
  EXPECT_EQ(parser.detach_bulk({body.data(), 10}), 2u);
  EXPECT_FALSE(parser.awaited_bulk().has_value());
  EXPECT_EQ(parser.bytes_wanted(), 0u);
  body += "456789\r\n";  // the rest arrives into the caller's place, not the buffer

  // The options after the big argument arrive in the buffer, cut anywhere.
  const std::string rest = "$2\r\nEX\r\n$3\r\n100\r\n*1\r\n$4\r\nPING\r\n";
  for (char c : rest.substr(0, 10)) {
    buffer += c;
    ASSERT_EQ(parser.parse(buffer), ParseStatus::kNeedMore);
    buffer.erase(0, parser.consumed());
  }
  buffer += rest.substr(10);
  ASSERT_EQ(parser.parse(buffer), ParseStatus::kCommand);
  EXPECT_THAT(parser.args(), ElementsAre("SET", "k", "0123456789", "EX", "100"));
  EXPECT_EQ(parser.args()[2].data(), body.data());
  buffer.erase(0, parser.consumed());
  ASSERT_EQ(parser.parse(buffer), ParseStatus::kCommand);
  EXPECT_THAT(parser.args(), ElementsAre("PING"));
}

TEST(RequestParserTest, DetachedLastBulkCompletesTheCommand) {
  RequestParser parser;
  std::string buffer = "*2\r\n$5\r\nHELLO\r\n$6\r\nab";
  ASSERT_EQ(parser.parse(buffer), ParseStatus::kNeedMore);
  ASSERT_TRUE(parser.awaited_bulk().has_value());
  std::string body = "abcdef\r\n";
  buffer.resize(parser.awaited_bulk()->offset);
  EXPECT_EQ(parser.detach_bulk({body.data(), 6}), 1u);
  // Two big bulks in one command and an ordinary one between them.
  ASSERT_EQ(parser.parse(buffer), ParseStatus::kCommand);
  EXPECT_THAT(parser.args(), ElementsAre("HELLO", "abcdef"));
  EXPECT_EQ(parser.consumed(), buffer.size());

  buffer = "*3\r\n$1\r\nx\r\n$3\r\n";
  ASSERT_EQ(parser.parse(buffer), ParseStatus::kNeedMore);
  std::string first = "one\r\n";
  buffer.resize(parser.awaited_bulk()->offset);
  EXPECT_EQ(parser.detach_bulk({first.data(), 3}), 1u);
  buffer += "$3\r\nt";
  ASSERT_EQ(parser.parse(buffer), ParseStatus::kNeedMore);
  std::string second = "two\r\n";
  buffer.resize(parser.awaited_bulk()->offset);
  EXPECT_EQ(parser.detach_bulk({second.data(), 3}), 2u);
  ASSERT_EQ(parser.parse(buffer), ParseStatus::kCommand);
  EXPECT_THAT(parser.args(), ElementsAre("x", "one", "two"));
}

TEST(RequestParserTest, ResetForgetsDetachedBulks) {
  RequestParser parser;
  std::string buffer = "*2\r\n$3\r\nGET\r\n$5\r\nab";
  ASSERT_EQ(parser.parse(buffer), ParseStatus::kNeedMore);
  std::string body = "abcde\r\n";
  parser.detach_bulk({body.data(), 5});
  parser.reset();
  EXPECT_FALSE(parser.awaited_bulk().has_value());
  ASSERT_EQ(parser.parse("*2\r\n$3\r\nGET\r\n$5\r\nabcde\r\n"), ParseStatus::kCommand);
  EXPECT_THAT(parser.args(), ElementsAre("GET", "abcde"));
  // No bulk is awaited while a header line is.
  parser.reset();
  ASSERT_EQ(parser.parse("*2\r\n$3\r\nGET\r\n$5"), ParseStatus::kNeedMore);
  EXPECT_FALSE(parser.awaited_bulk().has_value());
}

}  // namespace
}  // namespace keywarden
