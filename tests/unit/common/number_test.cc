// Table-driven tests of the strict number conversions. Unless a test says otherwise, every row
// was observed on a real redis-server 7.0.15:
//   parse_int64        INCRBY k <text>                 (accepted, or "not an integer")
//   parse_scan_cursor  SCAN <text>                     (accepted, or "invalid cursor")
//   parse_long_double  INCRBYFLOAT k <text> on k = 0   (stored text, "not a valid float", or
//                      "would produce NaN or Infinity" for an accepted infinity)
//   parse_double       ZADD z <text> m; ZSCORE z m     (skiplist encoding, so -0 survives)
//   format_human_bytes CONFIG SET maxmemory <n>; INFO memory's maxmemory_human
#include "common/number.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>

namespace keywarden {
namespace {

using namespace std::string_view_literals;

std::string printable(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  return "\"" + out + "\"";
}

// ---------------------------------------------------------------------------------------------
// parse_int64

struct Int64Case {
  std::string_view text;
  bool ok;
  int64_t value;
};

constexpr Int64Case kInt64Cases[] = {
    {"0", true, 0},
    {"1", true, 1},
    {"-1", true, -1},
    {"99", true, 99},
    {"-99", true, -99},
    {"10", true, 10},
    {"100", true, 100},
    {"1234567890", true, 1234567890},
    {"-1234567890", true, -1234567890},
    {"9223372036854775807", true, 9223372036854775807LL},
    {"-9223372036854775808", true, INT64_MIN},
    {"9223372036854775806", true, 9223372036854775806LL},
    {"-9223372036854775807", true, -9223372036854775807LL},
    {"", false, 0},
    {"-", false, 0},
    {"+", false, 0},
    {"-0", false, 0},
    {"00", false, 0},
    {"01", false, 0},
    {"-01", false, 0},
    {"-00", false, 0},
    {"+1", false, 0},
    {"+0", false, 0},
    {" 1", false, 0},
    {"1 ", false, 0},
    {"\t1", false, 0},
    {"1\n", false, 0},
    {"1\r\n", false, 0},
    {"9223372036854775808", false, 0},
    {"-9223372036854775809", false, 0},
    {"18446744073709551615", false, 0},
    {"18446744073709551616", false, 0},
    {"99999999999999999999", false, 0},
    {"000000000000000000001", false, 0},
    {"1a", false, 0},
    {"a1", false, 0},
    {"0x10", false, 0},
    {"1e3", false, 0},
    {"1.0", false, 0},
    {"1.", false, 0},
    {"\0"sv, false, 0},
    {"1\0"sv, false, 0},
    {"\0001"sv, false, 0},
    {"--1", false, 0},
    {"+-1", false, 0},
    {"1-", false, 0},
    {"1_000", false, 0},
    {"1,000", false, 0},
    {"\xd9\xa3", false, 0},
};

TEST(ParseInt64Test, MatchesRedis) {
  for (const Int64Case& c : kInt64Cases) {
    int64_t value = 12345;
    EXPECT_EQ(parse_int64(c.text, &value), c.ok) << printable(c.text);
    EXPECT_EQ(value, c.ok ? c.value : 12345) << printable(c.text);
    EXPECT_EQ(parse_int64(c.text, nullptr), c.ok) << printable(c.text);
  }
}

TEST(ParseInt64Test, ReadsOnlyTheView) {
  // The bytes after the view are digits; they must not be consumed.
  const std::string_view digits = "12345";
  int64_t value = 0;
  ASSERT_TRUE(parse_int64(digits.substr(0, 2), &value));
  EXPECT_EQ(value, 12);
  EXPECT_FALSE(parse_int64(digits.substr(0, 0), &value));
}

TEST(ParseInt64Test, RoundTripsThroughInt64ToChars) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    // Spread over all magnitudes, not just huge ones.
    const int64_t value = static_cast<int64_t>(rng()) >> (rng() % 64);
    char buf[kMaxInt64Chars];
    const size_t length = int64_to_chars(value, buf);
    int64_t parsed = 0;
    ASSERT_TRUE(parse_int64(std::string_view(buf, length), &parsed)) << value;
    EXPECT_EQ(parsed, value);
  }
}

// ---------------------------------------------------------------------------------------------
// parse_uint64: Redis has no direct counterpart reachable from a command; these rows follow
// the canonical grammar of parse_int64 over the unsigned range.

struct Uint64Case {
  std::string_view text;
  bool ok;
  uint64_t value;
};

constexpr Uint64Case kUint64Cases[] = {
    {"0", true, 0},
    {"1", true, 1},
    {"42", true, 42},
    {"9223372036854775808", true, 9223372036854775808ULL},
    {"18446744073709551615", true, 18446744073709551615ULL},
    {"18446744073709551614", true, 18446744073709551614ULL},
    {"18446744073709551616", false, 0},
    {"18446744073709551620", false, 0},
    {"99999999999999999999", false, 0},
    {"184467440737095516150", false, 0},
    {"", false, 0},
    {"-0", false, 0},
    {"-1", false, 0},
    {"+1", false, 0},
    {"00", false, 0},
    {"01", false, 0},
    {" 1", false, 0},
    {"1 ", false, 0},
    {"1\0"sv, false, 0},
    {"0x1", false, 0},
    {"1e3", false, 0},
    {"1.0", false, 0},
};

TEST(ParseUint64Test, CanonicalGrammar) {
  for (const Uint64Case& c : kUint64Cases) {
    uint64_t value = 12345;
    EXPECT_EQ(parse_uint64(c.text, &value), c.ok) << printable(c.text);
    EXPECT_EQ(value, c.ok ? c.value : 12345) << printable(c.text);
    EXPECT_EQ(parse_uint64(c.text, nullptr), c.ok) << printable(c.text);
  }
}

TEST(ParseUint64Test, RoundTripsThroughUint64ToChars) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t value = rng() >> (rng() % 64);
    char buf[kMaxUint64Chars];
    const size_t length = uint64_to_chars(value, buf);
    uint64_t parsed = 0;
    ASSERT_TRUE(parse_uint64(std::string_view(buf, length), &parsed)) << value;
    EXPECT_EQ(parsed, value);
  }
}

// ---------------------------------------------------------------------------------------------
// parse_scan_cursor: acceptance observed with SCAN; values are what strtoul returns.

struct CursorCase {
  std::string_view text;
  bool ok;
  uint64_t value;
};

constexpr CursorCase kCursorCases[] = {
    {"0", true, 0ULL},
    {"1", true, 1ULL},
    {"-0", true, 0ULL},
    {"00", true, 0ULL},
    {"007", true, 7ULL},
    {"01", true, 1ULL},
    {"+1", true, 1ULL},
    {"+0", true, 0ULL},
    {"-1", true, 18446744073709551615ULL},
    {"-2", true, 18446744073709551614ULL},
    {"123", true, 123ULL},
    {"18446744073709551615", true, 18446744073709551615ULL},
    {"18446744073709551614", true, 18446744073709551614ULL},
    {"-18446744073709551615", true, 1ULL},
    {"-18446744073709551616", false, 0},
    {"18446744073709551616", false, 0},
    {"99999999999999999999999", false, 0},
    {"", true, 0ULL},
    {"\0"sv, true, 0ULL},
    {"1\0"sv, true, 1ULL},
    {"1\0abc"sv, true, 1ULL},
    {"\0abc"sv, true, 0ULL},
    {" 1", false, 0},
    {"1 ", false, 0},
    {"\t1", false, 0},
    {"\n1", false, 0},
    {"-", false, 0},
    {"+", false, 0},
    {"-+1", false, 0},
    {"+-1", false, 0},
    {"--1", false, 0},
    {"1a", false, 0},
    {"0x10", false, 0},
    {"1e3", false, 0},
    {"1.0", false, 0},
};

TEST(ParseScanCursorTest, MatchesRedis) {
  for (const CursorCase& c : kCursorCases) {
    uint64_t value = 12345;
    EXPECT_EQ(parse_scan_cursor(c.text, &value), c.ok) << printable(c.text);
    EXPECT_EQ(value, c.ok ? c.value : 12345) << printable(c.text);
    EXPECT_EQ(parse_scan_cursor(c.text, nullptr), c.ok) << printable(c.text);
  }
}

// ---------------------------------------------------------------------------------------------
// parse_long_double and format_long_double, through INCRBYFLOAT.

// What INCRBYFLOAT replies for an accepted increment that is infinite.
constexpr std::string_view kInfinite = "<inf>";

struct LongDoubleCase {
  std::string_view text;
  bool ok;
  // INCRBYFLOAT's result on a key holding "0": format_long_double(0 + value).
  std::string_view stored;
};

constexpr LongDoubleCase kLongDoubleCases[] = {
    {"0", true, "0"},
    {"-0", true, "0"},
    {"1", true, "1"},
    {"+1", true, "1"},
    {"-1", true, "-1"},
    {"1e5", true, "100000"},
    {"1E5", true, "100000"},
    {"1e+5", true, "100000"},
    {"1e-5", true, "0.00001"},
    {"0x10", true, "16"},
    {"0X10", true, "16"},
    {"0x1p3", true, "8"},
    {"0x.8", true, "0.5"},
    {"0x1.8p1", true, "3"},
    {".5", true, "0.5"},
    {"5.", true, "5"},
    {"-.5", true, "-0.5"},
    {"+.5", true, "0.5"},
    {"1.e3", true, "1000"},
    {"00012", true, "12"},
    {"0.1", true, "0.1"},
    {"3.0e-5", true, "0.00003"},
    {"5.0e3", true, "5000"},
    {"1e17", true, "100000000000000000"},
    {"1.23456789012345678", true, "1.23456789012345678"},
    {"123456789.123456789", true, "123456789.12345678899873747"},
    {"0.30000000000000004", true, "0.30000000000000004"},
    {"1.0000000000000000001", true, "1"},
    {"123456789012345678901234567890", true, "123456789012345678899921813504"},
    {"0.00000000000000001", true, "0.00000000000000001"},
    {"0.000000000000000005", true, "0"},
    {"1e-20", true, "0"},
    {"-1e-20", true, "0"},
    {"9999999999999999.5", true, "9999999999999999.5"},
    {"1e-4940", true, "0"},
    {"3.6e-4951", true, "0"},
    {"inf", true, "<inf>"},
    {"+inf", true, "<inf>"},
    {"-inf", true, "<inf>"},
    {"INF", true, "<inf>"},
    {"Infinity", true, "<inf>"},
    {"-infinity", true, "<inf>"},
    {"", false, ""},
    {" ", false, ""},
    {".", false, ""},
    {"nan", false, ""},
    {"NaN", false, ""},
    {"-nan", false, ""},
    {"nan(123)", false, ""},
    {"1e5000", false, ""},
    {"-1e5000", false, ""},
    {"1.2e4932", false, ""},
    {"1e-5000", false, ""},
    {"-1e-5000", false, ""},
    {" 1", false, ""},
    {"1 ", false, ""},
    {"\t1", false, ""},
    {"1\n", false, ""},
    {"\n1", false, ""},
    {"1\0"sv, false, ""},
    {"\0"sv, false, ""},
    {"1\0abc"sv, false, ""},
    {"\0abc"sv, false, ""},
    {"1,5", false, ""},
    {"1_0", false, ""},
    {"0b1", false, ""},
    {"e5", false, ""},
    {"1e", false, ""},
    {"1e+", false, ""},
    {"--1", false, ""},
    {"+-1", false, ""},
    {"1.2.3", false, ""},
    {"0x", false, ""},
    {"infinit", false, ""},
    {"infinityx", false, ""},
    {"abc", false, ""},
    {"1f", false, ""},
    {"1d", false, ""},
    {"1L", false, ""},
};

TEST(ParseLongDoubleTest, MatchesIncrByFloat) {
  for (const LongDoubleCase& c : kLongDoubleCases) {
    long double value = 12345;
    ASSERT_EQ(parse_long_double(c.text, &value), c.ok) << printable(c.text);
    EXPECT_EQ(parse_long_double(c.text, nullptr), c.ok) << printable(c.text);
    if (!c.ok) {
      EXPECT_EQ(value, 12345) << printable(c.text);
      continue;
    }
    const long double sum = 0.0L + value;
    if (c.stored == kInfinite) {
      EXPECT_TRUE(std::isinf(sum)) << printable(c.text);
    } else {
      EXPECT_EQ(format_long_double(sum), c.stored) << printable(c.text);
    }
  }
}

TEST(ParseLongDoubleTest, LengthLimit) {
  // 5119 bytes is the longest accepted argument; one more byte is rejected before parsing.
  std::string longest = "1." + std::string(5116, '0') + "1";
  ASSERT_EQ(longest.size(), kMaxLongDoubleChars - 1);
  long double value = 0;
  ASSERT_TRUE(parse_long_double(longest, &value));
  EXPECT_EQ(format_long_double(value), "1");
  std::string too_long = "1." + std::string(5117, '0') + "1";
  EXPECT_FALSE(parse_long_double(too_long, &value));
  // The same length rule applies to a value already stored in the key.
  EXPECT_FALSE(parse_long_double(std::string(5120, '1'), &value));
  // Long but overflowing: rejected for its value, not its length.
  EXPECT_FALSE(parse_long_double(std::string(5119, '1'), &value));
}

TEST(ParseLongDoubleTest, LargestFiniteValue) {
  long double value = 0;
  ASSERT_TRUE(parse_long_double("1.18973149535723176502e+4932", &value));
  EXPECT_EQ(value, std::numeric_limits<long double>::max());
  const std::string text = format_long_double(value);
  // Observed: a 4933-digit integer starting with these digits and no fractional part.
  EXPECT_EQ(text.size(), 4933u);
  EXPECT_EQ(text.substr(0, 40), "1189731495357231765021263853030970205169");
  EXPECT_EQ(text.find('.'), std::string::npos);
  EXPECT_EQ(format_long_double(-value), "-" + text);
}

struct IncrByFloatCase {
  std::string_view current;
  std::string_view increment;
  std::string_view stored;
};

constexpr IncrByFloatCase kIncrByFloatCases[] = {
    {"10.5", "0.1", "10.6"},
    {"0", "5.0e3", "5000"},
    {"0", "3.0e-5", "0.00003"},
    {"3", "1.1", "4.1"},
    {"0.1", "0.2", "0.3"},
    {"1e300", "0",
     "100000000000000000000899732407955919387052394427329074793826008232126564659618093575584915208"
     "375049719035037250861427483590359255618467298391309626052074864628732713564184365329408425510"
     "760601678972665293237003055138294762099454029477278188962060617926761162709741065056718738610"
     "5690089424915104006144"},
    {"-1", "1", "0"},
    {"-0.00000000000000001", "0", "-0.00000000000000001"},
    {"-0.000000000000000001", "0", "0"},
    {"0", "-3.5", "-3.5"},
    {"5", "-0.1", "4.9"},
    {"1", "1e-17", "1.00000000000000001"},
    {"1", "5e-18", "1"},
    {"0", "-0.0", "0"},
    {"10", "-20.25", "-10.25"},
    {"1.5", "1.5", "3"},
    {"100", "0.001", "100.001"},
    {"-5", "-5", "-10"},
    {"0.1", "-0.1", "0"},
    {"3.14159265358979323846", "0", "3.14159265358979324"},
    {"1e20", "1", "100000000000000000000"},
    {"1e-10", "1e-10", "0.0000000002"},
    {"5.0e3", "2.0e2", "5200"},
    {"1e4932", "1e4932", "<inf>"},
    {"-1e4932", "-1e4932", "<inf>"},
    {"1.18973149535723176502e+4932", "1e4931", "<inf>"},
};

TEST(FormatLongDoubleTest, MatchesIncrByFloat) {
  for (const IncrByFloatCase& c : kIncrByFloatCases) {
    long double current = 0;
    long double increment = 0;
    ASSERT_TRUE(parse_long_double(c.current, &current)) << c.current;
    ASSERT_TRUE(parse_long_double(c.increment, &increment)) << c.increment;
    const long double sum = current + increment;
    if (c.stored == kInfinite) {
      EXPECT_TRUE(std::isinf(sum)) << c.current << " + " << c.increment;
    } else {
      EXPECT_EQ(format_long_double(sum), c.stored) << c.current << " + " << c.increment;
    }
  }
}

TEST(FormatLongDoubleTest, SpecialValues) {
  EXPECT_EQ(format_long_double(0.0L), "0");
  EXPECT_EQ(format_long_double(-0.0L), "0");
  EXPECT_EQ(format_long_double(-1e-18L), "0");
  EXPECT_EQ(format_long_double(-1e-17L), "-0.00000000000000001");
  EXPECT_EQ(format_long_double(std::numeric_limits<long double>::infinity()), "inf");
  EXPECT_EQ(format_long_double(-std::numeric_limits<long double>::infinity()), "-inf");
  EXPECT_EQ(format_long_double(std::numeric_limits<long double>::quiet_NaN()), "nan");
  EXPECT_EQ(format_long_double(100.0L), "100");
  EXPECT_EQ(format_long_double(-100.5L), "-100.5");
}

// Whatever INCRBYFLOAT stores must read back as a valid float for the next INCRBYFLOAT.
TEST(FormatLongDoubleTest, OutputParsesBack) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 2000; ++i) {
    const long double value =
        std::ldexp(static_cast<long double>(rng() >> 11), static_cast<int>(rng() % 200) - 150) *
        ((rng() & 1) != 0 ? -1 : 1);
    const std::string text = format_long_double(value);
    long double parsed = 0;
    EXPECT_TRUE(parse_long_double(text, &parsed)) << text;
    // Fixed notation with 17 decimals loses anything below 5e-18.
    EXPECT_NEAR(static_cast<double>(parsed - value), 0.0,
                5e-18 + std::fabs(static_cast<double>(value)) * 1e-18)
        << text;
  }
}

// ---------------------------------------------------------------------------------------------
// parse_double and format_double, through ZADD and ZSCORE.

struct DoubleCase {
  std::string_view text;
  bool ok;
  std::string_view reply;  // ZSCORE's reply, in RESP2 and RESP3 alike
};

constexpr DoubleCase kDoubleCases[] = {
    {"0", true, "0"},
    {"-0", true, "-0"},
    {"1", true, "1"},
    {"+1", true, "1"},
    {"-2.5", true, "-2.5"},
    {"100", true, "100"},
    {"1.1", true, "1.1000000000000001"},
    {"0.1", true, "0.10000000000000001"},
    {"0.0001", true, "0.0001"},
    {"1e-5", true, "1.0000000000000001e-05"},
    {"1e-7", true, "9.9999999999999995e-08"},
    {"1e16", true, "10000000000000000"},
    {"1e17", true, "1e+17"},
    {"1e21", true, "1e+21"},
    {"1e308", true, "1e+308"},
    {"-1e308", true, "-1e+308"},
    {"123456789012345678", true, "1.2345678901234568e+17"},
    {"9007199254740993", true, "9007199254740992"},
    {"3.141592653589793238", true, "3.1415926535897931"},
    {"0.30000000000000004", true, "0.30000000000000004"},
    {"1.7976931348623157e308", true, "1.7976931348623157e+308"},
    {"2.2250738585072014e-308", true, "2.2250738585072014e-308"},
    {"1e-320", true, "9.9998886718268301e-321"},
    {"4.9e-324", true, "4.9406564584124654e-324"},
    {"0x10", true, "16"},
    {"0x1p-1074", true, "4.9406564584124654e-324"},
    {".5", true, "0.5"},
    {"5.", true, "5"},
    {"00012", true, "12"},
    {"1e+2", true, "100"},
    {"inf", true, "inf"},
    {"+inf", true, "inf"},
    {"-inf", true, "-inf"},
    {"INF", true, "inf"},
    {"Infinity", true, "inf"},
    {"-infinity", true, "-inf"},
    {"", false, ""},
    {" ", false, ""},
    {".", false, ""},
    {"nan", false, ""},
    {"-nan", false, ""},
    {"NaN", false, ""},
    {"1e309", false, ""},
    {"-1e309", false, ""},
    {"1e-330", false, ""},
    {"2.4e-324", false, ""},
    {"0x1p-1075", false, ""},
    {" 1", false, ""},
    {"1 ", false, ""},
    {"\t1", false, ""},
    {"1\n", false, ""},
    {"\0"sv, false, ""},
    {"1\0"sv, false, ""},
    {"1\0abc"sv, false, ""},
    {"1e", false, ""},
    {"1,5", false, ""},
    {"abc", false, ""},
    {"0x", false, ""},
    {"--1", false, ""},
    {"1.2.3", false, ""},
    {"infinityx", false, ""},
};

TEST(ParseDoubleTest, MatchesZadd) {
  for (const DoubleCase& c : kDoubleCases) {
    double value = 12345;
    ASSERT_EQ(parse_double(c.text, &value), c.ok) << printable(c.text);
    EXPECT_EQ(parse_double(c.text, nullptr), c.ok) << printable(c.text);
    if (!c.ok) {
      EXPECT_EQ(value, 12345) << printable(c.text);
      continue;
    }
    EXPECT_EQ(format_double(value), c.reply) << printable(c.text);
    char buf[kMaxDoubleChars];
    EXPECT_EQ(std::string_view(buf, double_to_chars(value, buf)), c.reply) << printable(c.text);
  }
}

TEST(ParseDoubleTest, LongTextsHaveNoLengthLimit) {
  // Unlike INCRBYFLOAT, ZADD puts no cap on the argument length.
  double value = 0;
  ASSERT_TRUE(parse_double("1." + std::string(10000, '0') + "1", &value));
  EXPECT_EQ(value, 1.0);
  ASSERT_TRUE(parse_double(std::string(300, '9'), &value));
  EXPECT_EQ(format_double(value), "1.0000000000000001e+300");
  EXPECT_FALSE(parse_double(std::string(400, '9'), &value));
  EXPECT_FALSE(parse_double("1." + std::string(10000, '0') + "1 ", &value));
}

TEST(FormatDoubleTest, SpecialValues) {
  EXPECT_EQ(format_double(0.0), "0");
  EXPECT_EQ(format_double(-0.0), "-0");
  EXPECT_EQ(format_double(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(format_double(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(format_double(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(format_double(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(format_double(-std::numeric_limits<double>::denorm_min()), "-4.9406564584124654e-324");
  EXPECT_EQ(format_double(std::numeric_limits<double>::min()), "2.2250738585072014e-308");
  EXPECT_EQ(format_double(-2.2250738585072014e-308), "-2.2250738585072014e-308");
  EXPECT_LE(format_double(-2.2250738585072014e-308).size(), kMaxDoubleChars);
}

// "%.17g" is enough digits for every double to survive a reply and come back unchanged.
TEST(FormatDoubleTest, RoundTripsExactly) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20000; ++i) {
    double value;
    uint64_t bits = rng();
    std::memcpy(&value, &bits, sizeof(value));
    if (std::isnan(value)) continue;
    const std::string text = format_double(value);
    double parsed = 0;
    ASSERT_TRUE(parse_double(text, &parsed)) << text;
    EXPECT_EQ(std::signbit(parsed), std::signbit(value)) << text;
    EXPECT_EQ(parsed, value) << text;
  }
}

// ---------------------------------------------------------------------------------------------
// Integer formatting.

TEST(Int64ToCharsTest, Boundaries) {
  struct Row {
    int64_t value;
    std::string_view text;
  };
  constexpr Row kRows[] = {
      {0, "0"},
      {1, "1"},
      {-1, "-1"},
      {9, "9"},
      {10, "10"},
      {-10, "-10"},
      {1000000007, "1000000007"},
      {std::numeric_limits<int64_t>::max(), "9223372036854775807"},
      {std::numeric_limits<int64_t>::min(), "-9223372036854775808"},
      {std::numeric_limits<int64_t>::min() + 1, "-9223372036854775807"},
  };
  for (const Row& row : kRows) {
    char buf[kMaxInt64Chars];
    EXPECT_EQ(std::string_view(buf, int64_to_chars(row.value, buf)), row.text);
    EXPECT_EQ(format_int64(row.value), row.text);
  }
  char buf[kMaxUint64Chars];
  EXPECT_EQ(std::string_view(buf, uint64_to_chars(0, buf)), "0");
  EXPECT_EQ(std::string_view(buf, uint64_to_chars(std::numeric_limits<uint64_t>::max(), buf)),
            "18446744073709551615");
}

// ---------------------------------------------------------------------------------------------
// format_human_bytes

struct HumanBytesCase {
  uint64_t bytes;
  std::string_view text;
};

constexpr HumanBytesCase kHumanBytesCases[] = {
    {0ULL, "0B"},
    {1ULL, "1B"},
    {1023ULL, "1023B"},
    {1024ULL, "1.00K"},
    {1025ULL, "1.00K"},
    {1536ULL, "1.50K"},
    {10240ULL, "10.00K"},
    {1048570ULL, "1023.99K"},
    {1048575ULL, "1024.00K"},
    {1048576ULL, "1.00M"},
    {1048577ULL, "1.00M"},
    {12939428ULL, "12.34M"},
    {1073741823ULL, "1024.00M"},
    {1073741824ULL, "1.00G"},
    {1099511627775ULL, "1024.00G"},
    {1099511627776ULL, "1.00T"},
    {1125899906842623ULL, "1024.00T"},
    {1125899906842624ULL, "1.00P"},
    {1152921504606846975ULL, "1024.00P"},
    {1152921504606846976ULL, "1152921504606846976B"},
    {9223372036854775807ULL, "9223372036854775807B"},
    {9223372036854775808ULL, "9223372036854775808B"},
    {18446744073709551615ULL, "18446744073709551615B"},
    {5125ULL, "5.00K"},
    {5126ULL, "5.01K"},
    {3758096384ULL, "3.50G"},
};

TEST(FormatHumanBytesTest, MatchesInfo) {
  for (const HumanBytesCase& c : kHumanBytesCases) {
    EXPECT_EQ(format_human_bytes(c.bytes), c.text) << c.bytes;
  }
}

}  // namespace
}  // namespace keywarden
