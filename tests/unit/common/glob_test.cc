// Table-driven tests of glob_match against Redis 7.0 stringmatchlen. Every case-sensitive row
// was checked against a real redis-server 7.0.15 (KEYS <pattern> over a database holding only
// <text>), every nocase row against COMMAND LIST FILTERBY PATTERN, which matches without case.
#include "common/glob.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace keywarden {
namespace {

using namespace std::string_view_literals;

struct GlobCase {
  const char* group;
  std::string_view pattern;
  std::string_view text;
  bool matches;
};

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
  return out;
}

std::string describe(const GlobCase& c) {
  return std::string(c.group) + ": pattern \"" + printable(c.pattern) + "\" text \"" +
         printable(c.text) + "\"";
}

constexpr GlobCase kCaseSensitive[] = {
    {"literal", "", "", true},
    {"literal", "", "a", false},
    {"literal", "a", "", false},
    {"literal", "abc", "abc", true},
    {"literal", "abc", "abd", false},
    {"literal", "abc", "ab", false},
    {"literal", "ab", "abc", false},
    {"literal", "abc", "ABC", false},
    {"literal", "a\0b"sv, "a\0b"sv, true},
    {"literal", "a\0b"sv, "a\0c"sv, false},
    {"literal", "\xff\x80", "\xff\x80", true},
    {"literal", "]", "]", true},
    {"literal", "^", "^", true},
    {"literal", "-", "-", true},
    {"literal", "a]b", "a]b", true},
    {"star", "*", "a", true},
    {"star", "*", "abc", true},
    {"star", "*", "", false},
    {"star", "**", "", false},
    {"star", "***", "abc", true},
    {"star", "a*", "a", true},
    {"star", "a*", "abc", true},
    {"star", "a*", "ba", false},
    {"star", "*a", "a", true},
    {"star", "*a", "bca", true},
    {"star", "*a", "ab", false},
    {"star", "a*c", "ac", true},
    {"star", "a*c", "abbbc", true},
    {"star", "a*c", "abbbd", false},
    {"star", "a**c", "abc", true},
    {"star", "*b*", "abc", true},
    {"star", "*b*", "b", true},
    {"star", "*b*", "acd", false},
    {"star", "a*b*c", "aXbYc", true},
    {"star", "a*b*c", "aXcYb", false},
    {"star", "*.txt", "notes.txt", true},
    {"star", "*.txt", "notes.txt.bak", false},
    {"star", "user:*:name", "user:42:name", true},
    {"star", "user:*:name", "user:42:age", false},
    {"star", "*ab", "aab", true},
    {"star", "*ab", "abab", true},
    {"star", "*aab", "aaab", true},
    {"star", "a*", "", false},
    {"star", "*a*", "\0a\0"sv, true},
    {"star", "a*b", "a\0b"sv, true},
    {"question", "?", "a", true},
    {"question", "?", "", false},
    {"question", "?", "ab", false},
    {"question", "??", "ab", true},
    {"question", "a?c", "abc", true},
    {"question", "a?c", "ac", false},
    {"question", "?*", "a", true},
    {"question", "*?", "a", true},
    {"question", "*?", "", false},
    {"question", "?", "\0"sv, true},
    {"question", "?", "\xff", true},
    {"question", "a?", "a", false},
    {"question", "?*?", "ab", true},
    {"question", "?*?", "a", false},
    {"class", "[abc]", "a", true},
    {"class", "[abc]", "c", true},
    {"class", "[abc]", "d", false},
    {"class", "[abc]", "", false},
    {"class", "[abc]", "ab", false},
    {"class", "h[ae]llo", "hello", true},
    {"class", "h[ae]llo", "hallo", true},
    {"class", "h[ae]llo", "hillo", false},
    {"class", "[a]", "A", false},
    {"class", "[]", "a", false},
    {"class", "[]", "]", false},
    {"class", "[]]", "]", false},
    {"class", "[]a]", "a", false},
    {"class", "[]a]", "]", false},
    {"class", "[[]", "[", true},
    {"class", "[*]", "*", true},
    {"class", "[*]", "a", false},
    {"class", "[?]", "?", true},
    {"class", "[?]", "a", false},
    {"class", "[-]", "-", true},
    {"class", "[a-]", "-", false},
    {"negated", "[^a]", "b", true},
    {"negated", "[^a]", "a", false},
    {"negated", "[^abc]", "d", true},
    {"negated", "[^abc]", "b", false},
    {"negated", "[^a]", "", false},
    {"negated", "h[^e]llo", "hallo", true},
    {"negated", "h[^e]llo", "hello", false},
    {"negated", "[^]", "a", true},
    {"negated", "[^]", "]", true},
    {"negated", "[^]", "", false},
    {"negated", "[^]", "ab", false},
    {"negated", "[^a-c]", "d", true},
    {"negated", "[^a-c]", "b", false},
    {"negated", "[a^]", "^", true},
    {"negated", "[a^]", "a", true},
    {"negated", "[^^]", "^", false},
    {"negated", "[^^]", "a", true},
    {"range", "[a-c]", "a", true},
    {"range", "[a-c]", "b", true},
    {"range", "[a-c]", "c", true},
    {"range", "[a-c]", "d", false},
    {"range", "[a-c]", "B", false},
    {"range", "[z-a]", "a", true},
    {"range", "[z-a]", "m", true},
    {"range", "[z-a]", "z", true},
    {"range", "[z-a]", "A", false},
    {"range", "[0-9]", "5", true},
    {"range", "[0-9]", "x", false},
    {"range", "[a-cx-z]", "y", true},
    {"range", "[a-cx-z]", "m", false},
    {"range", "[a-a]", "a", true},
    {"range", "[a-a]", "b", false},
    {"range", "[a-]", "]", true},
    {"range", "[a-]", "^", true},
    {"range", "[a-]", "a", true},
    {"range", "[a-]", "b", false},
    {"range", "[a-]", "\\", false},
    {"range", "[a-]x", "ax", false},
    {"range", "[a-]x]", "x", true},
    {"range", "[a-]x]", "a", true},
    {"range", "[a-]x]", "ax", false},
    {"range", "[a-]x]", "b", false},
    {"range", "[-a]", "-", true},
    {"range", "[-a]", "a", true},
    {"range", "[-a]", "b", false},
    {"range", "[!--]", "+", true},
    {"range", "[!--]", ".", false},
    {"range", "[a-\xff]", "\0"sv, true},
    {"range", "[a-\xff]", "A", true},
    {"range", "[a-\xff]", "a", true},
    {"range", "[a-\xff]", "b", false},
    {"range", "[a-\xff]", "\xff", true},
    {"range", "[a-\xff]", "\x80", false},
    {"range", "[\x80-\xff]", "\x90", true},
    {"range", "[\x80-\xff]", "a", false},
    {"range", "[\\a-c]", "b", false},
    {"range", "[\\a-c]", "-", true},
    {"range", "[a\\-c]", "b", false},
    {"range", "[a\\-c]", "-", true},
    {"range", "[a-\\c]", "b", false},
    {"range", "[a-\\c]", "]", true},
    {"range", "[a-\\c]", "c", true},
    {"escape", "\\*", "*", true},
    {"escape", "\\*", "a", false},
    {"escape", "\\?", "?", true},
    {"escape", "\\?", "a", false},
    {"escape", "\\[", "[", true},
    {"escape", "\\[a]", "[a]", true},
    {"escape", "\\\\", "\\", true},
    {"escape", "\\a", "a", true},
    {"escape", "a\\*b", "a*b", true},
    {"escape", "a\\*b", "axb", false},
    {"escape", "\\", "\\", true},
    {"escape", "\\", "", false},
    {"escape", "a\\", "a\\", true},
    {"escape", "a\\", "a", false},
    {"escape", "*\\", "ab\\", true},
    {"escape", "[\\]]", "]", true},
    {"escape", "[\\]]", "\\", false},
    {"escape", "[\\^a]", "^", true},
    {"escape", "[^\\]]", "]", false},
    {"escape", "[^\\]]", "a", true},
    {"escape", "[\\\\]", "\\", true},
    {"escape", "[a\\]", "\\", false},
    {"escape", "[a\\]", "a", true},
    {"escape", "[a\\]", "]", true},
    {"escape", "[\\", "\\", true},
    {"escape", "[\\", "a", false},
    {"escape", "[a\\", "\\", true},
    {"unterminated", "[", "[", false},
    {"unterminated", "[", "a", false},
    {"unterminated", "[", "", false},
    {"unterminated", "a[", "a", false},
    {"unterminated", "a[", "a[", false},
    {"unterminated", "[^", "a", true},
    {"unterminated", "[^", "^", true},
    {"unterminated", "[^", "", false},
    {"unterminated", "[abc", "a", true},
    {"unterminated", "[abc", "d", false},
    {"unterminated", "a[bc", "ab", true},
    {"unterminated", "a[bc", "ac", true},
    {"unterminated", "a[bc", "abc", false},
    {"unterminated", "[a-", "a", true},
    {"unterminated", "[a-", "-", true},
    {"unterminated", "[a-", "b", false},
    {"unterminated", "[a-c", "b", true},
    {"unterminated", "[^abc", "d", true},
    {"unterminated", "[^abc", "a", false},
    {"unterminated", "*[ab", "xxb", true},
    {"trailing_stars", "a*", "a", true},
    {"trailing_stars", "a**", "a", true},
    {"trailing_stars", "a?*", "a", false},
    {"trailing_stars", "ab*", "a", false},
    {"trailing_stars", "a*b*", "ab", true},
    {"trailing_stars", "a*[b]*", "ab", true},
    {"trailing_stars", "*a**", "a", true},
};

TEST(GlobMatchTest, MatchesRedisCaseSensitive) {
  for (const GlobCase& c : kCaseSensitive) {
    EXPECT_EQ(glob_match(c.pattern, c.text), c.matches) << describe(c);
  }
}

// Without case, only ASCII letters fold. A range folds its ends after putting them in order, so
// "[Z-a]" becomes the empty range ['z', 'a']; an escaped byte inside brackets compares exactly.
constexpr GlobCase kNoCase[] = {
    {"fold", "ACL", "acl", true},
    {"fold", "acl", "ACL", true},
    {"fold", "A*L", "acl", true},
    {"fold", "?CL", "acl", true},
    {"fold", "\xc4", "\xe4", false},
    {"fold", "\xc4", "\xc4", true},
    {"fold", "@", "`", false},
    {"fold", "[", "{", false},
    {"class", "[ABC]cl", "acl", true},
    {"class", "[abc]", "B", true},
    {"class", "[^A]cl", "acl", false},
    {"class", "[^a-b]cl", "acl", false},
    {"class", "[^A-B]cl", "acl", false},
    {"range", "[A-C]cl", "acl", true},
    {"range", "[a-c]CL", "acl", true},
    {"range", "[a-c]", "B", true},
    {"range", "[Z-a]cl", "acl", false},
    {"range", "[a-Z]cl", "acl", false},
    {"range", "[Z-a]", "_", false},
    {"range", "config[Z-|]get", "config|get", true},
    {"escape", "[\\A]cl", "acl", false},
    {"escape", "[\\a]cl", "acl", true},
    {"escape", "[\\A]", "A", true},
    {"escape", "\\Acl", "acl", true},
    {"escape", "CONFIG[|]GET", "config|get", true},
};

TEST(GlobMatchTest, MatchesRedisWithoutCase) {
  for (const GlobCase& c : kNoCase) {
    EXPECT_EQ(glob_match(c.pattern, c.text, /*nocase=*/true), c.matches) << describe(c);
  }
}

TEST(GlobMatchTest, CaseSensitiveByDefault) {
  EXPECT_FALSE(glob_match("ACL", "acl"));
  EXPECT_TRUE(glob_match("[Z-a]", "_"));
  EXPECT_TRUE(glob_match("[Z-a]", "a"));
  EXPECT_FALSE(glob_match("[Z-a]", "a", /*nocase=*/true));
}

// The rows above cover every construct with the case-sensitive table; nocase must agree with
// it wherever neither side holds a letter.
TEST(GlobMatchTest, NoCaseAgreesWhenNoLettersAreInvolved) {
  for (const GlobCase& c : kCaseSensitive) {
    const auto has_letter = [](std::string_view s) {
      for (char ch : s) {
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) return true;
      }
      return false;
    };
    // A range may span letters even when its ends are not letters, so skip any with a '-'.
    if (has_letter(c.pattern) || has_letter(c.text) ||
        c.pattern.find('-') != std::string_view::npos) {
      continue;
    }
    EXPECT_EQ(glob_match(c.pattern, c.text, /*nocase=*/true), c.matches) << describe(c);
  }
}

// Each '*' that has to try positions costs one level of nesting; Redis gives up beyond 1000.
// A trailing '*' matches on the spot and costs nothing. Checked against redis-server with a
// key of 1100 'a's.
TEST(GlobMatchTest, NestingLimit) {
  const std::string text(1100, 'a');
  const auto repeat = [](std::string_view unit, int times) {
    std::string out;
    for (int i = 0; i < times; ++i) out += unit;
    return out;
  };
  EXPECT_TRUE(glob_match(repeat("*a", 999), text));
  EXPECT_TRUE(glob_match(repeat("*a", 1000), text));
  EXPECT_FALSE(glob_match(repeat("*a", 1001), text));
  EXPECT_TRUE(glob_match(repeat("*a", 1000) + "*", text));
  EXPECT_FALSE(glob_match(repeat("*a", 1001) + "*", text));
  EXPECT_TRUE(glob_match(repeat("a*", 1000), text));
  EXPECT_TRUE(glob_match(repeat("a*", 1001), text));
  EXPECT_FALSE(glob_match(repeat("a*", 1002), text));
  EXPECT_TRUE(glob_match(repeat("?*", 1001), text));
  EXPECT_FALSE(glob_match(repeat("?*", 1002), text));
  EXPECT_FALSE(glob_match(repeat("*a", 1000), std::string(1100, 'b')));
}

// Without the early give-up these would backtrack through C(n, k) splits and never finish.
TEST(GlobMatchTest, PathologicalPatternsStayFast) {
  const std::string as(100000, 'a');
  EXPECT_FALSE(glob_match("*a*a*a*a*a*a*a*a*a*a*b", as));
  EXPECT_FALSE(glob_match("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", as));
  EXPECT_FALSE(glob_match("a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", as));
  EXPECT_FALSE(glob_match("*?*?*?*?*?*?*?*?*?*?*b", as));
  EXPECT_FALSE(glob_match("*[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*b", as));
  EXPECT_TRUE(glob_match("*a*a*a*a*a*a*a*a*a*a*a", as));
  EXPECT_TRUE(glob_match("*a*a*a*a*a*a*a*a*a*a*b", as + "b"));
  EXPECT_FALSE(glob_match("*A*A*A*A*A*A*A*A*A*A*b", as, /*nocase=*/false));
  EXPECT_FALSE(glob_match("*A*A*A*A*A*A*A*A*A*A*b", as, /*nocase=*/true));
  EXPECT_TRUE(glob_match("*A*A*A*A*A*A*A*A*A*A*A", as, /*nocase=*/true));
}

TEST(GlobMatchTest, BinarySafeOverLongTexts) {
  std::string text(1000, '\0');
  text.back() = 'z';
  EXPECT_TRUE(glob_match("*z", text));
  EXPECT_TRUE(glob_match("\0*"sv, text));
  EXPECT_FALSE(glob_match("*\0"sv, text));
  EXPECT_TRUE(glob_match("*\0z"sv, text));
}

TEST(GlobIsLiteralTest, DetectsSpecialBytes) {
  struct Row {
    std::string_view pattern;
    bool literal;
  };
  constexpr Row kRows[] = {
      {"", true},       {"user:1000", true}, {"a]b", true}, {"a^b", true},     {"a-b", true},
      {"a\0b"sv, true}, {"\xff", true},      {"*", false},  {"user:*", false}, {"a?", false},
      {"[ab]", false},  {"a\\b", false},     {"\\", false}, {"[", false},
  };
  for (const Row& row : kRows) {
    EXPECT_EQ(glob_is_literal(row.pattern), row.literal) << printable(row.pattern);
  }
}

// A literal pattern matches exactly the one text equal to it, which is what makes a direct
// lookup a valid replacement for the scan.
TEST(GlobIsLiteralTest, LiteralPatternsMatchOnlyThemselves) {
  for (const GlobCase& c : kCaseSensitive) {
    if (!glob_is_literal(c.pattern)) continue;
    EXPECT_EQ(glob_match(c.pattern, c.text), c.pattern == c.text) << describe(c);
  }
}

}  // namespace
}  // namespace keywarden
