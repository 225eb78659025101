#include "common/glob.h"

#include <cstddef>
#include <utility>

namespace keywarden {
namespace {

// The reference matcher runs in the C locale, where case folding touches ASCII letters only.
constexpr int fold_ascii(int c) { return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c; }

// Ranges in the reference compare plain `char`s, which are signed on the platforms Redis
// ships for: "[a-\xff]" is the range [-1, 'a'], so it matches "\x00" and "A" but not "b".
constexpr int signed_byte(char c) { return static_cast<signed char>(c); }

class GlobMatcher {
 public:
  GlobMatcher(std::string_view pattern, std::string_view text, bool nocase)
      : pattern_(pattern), text_(text), nocase_(nocase) {}

  bool run() { return match_from(0, 0, 0); }

 private:
  bool same_byte(char a, char b) const {
    if (nocase_)
      return fold_ascii(static_cast<unsigned char>(a)) == fold_ascii(static_cast<unsigned char>(b));
    return a == b;
  }

  // Matches the pattern from `p` against the text from `t`, both to their ends.
  bool match_from(size_t p, size_t t, int nesting);

  // Decides whether `c` belongs to the bracket set whose body starts at `p` (just past '[').
  // Leaves `p` on the closing ']' or, for an unterminated set, on the last pattern byte, so
  // that the caller's usual one-byte step moves past the whole set.
  bool class_contains(size_t& p, char c) const;

  std::string_view pattern_;
  std::string_view text_;
  bool nocase_;
  // Set once the rest of the pattern after some '*' matched no suffix of the text. Any
  // enclosing '*' could only retry that same rest at even later starts, which must fail too,
  // so everyone unwinds immediately. This is what bounds "*a*a*a*...b" to polynomial time.
  bool hopeless_ = false;
};

bool GlobMatcher::class_contains(size_t& p, char c) const {
  const size_t end = pattern_.size();
  const bool negated = p < end && pattern_[p] == '^';
  if (negated) ++p;
  bool found = false;
  while (true) {
    if (p + 1 < end && pattern_[p] == '\\') {
      // Escapes inside a set compare exactly, even when matching without case.
      ++p;
      if (pattern_[p] == c) found = true;
    } else if (p < end && pattern_[p] == ']') {
      break;
    } else if (p == end) {
      --p;
      break;
    } else if (end - p >= 3 && pattern_[p + 1] == '-') {
      int low = signed_byte(pattern_[p]);
      int high = signed_byte(pattern_[p + 2]);
      int probe = signed_byte(c);
      if (low > high) std::swap(low, high);
      if (nocase_) {
        low = fold_ascii(low);
        high = fold_ascii(high);
        probe = fold_ascii(probe);
      }
      if (probe >= low && probe <= high) found = true;
      p += 2;
    } else if (same_byte(pattern_[p], c)) {
      found = true;
    }
    ++p;
  }
  return found != negated;
}

bool GlobMatcher::match_from(size_t p, size_t t, int nesting) {
  if (nesting > kMaxGlobNesting) return false;
  const size_t pattern_end = pattern_.size();
  const size_t text_end = text_.size();

  while (p < pattern_end && t < text_end) {
    switch (pattern_[p]) {
      case '*': {
        while (p + 1 < pattern_end && pattern_[p + 1] == '*') ++p;
        if (p + 1 == pattern_end) return true;
        // Let the star swallow 0, 1, 2... bytes; the rest of the pattern is never tried
        // against the empty suffix, which it could not match anyway (see the header).
        for (; t < text_end; ++t) {
          if (match_from(p + 1, t, nesting + 1)) return true;
          if (hopeless_) return false;
        }
        hopeless_ = true;
        return false;
      }
      case '?':
        ++t;
        break;
      case '[':
        ++p;
        if (!class_contains(p, text_[t])) return false;
        ++t;
        break;
      case '\\':
        if (pattern_end - p >= 2) ++p;
        [[fallthrough]];
      default:
        if (!same_byte(pattern_[p], text_[t])) return false;
        ++t;
        break;
    }
    ++p;
    if (t == text_end) {
      // Trailing stars may match the empty remainder.
      while (p < pattern_end && pattern_[p] == '*') ++p;
      break;
    }
  }
  return p == pattern_end && t == text_end;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text, bool nocase) {
  return GlobMatcher(pattern, text, nocase).run();
}

bool glob_is_literal(std::string_view pattern) {
  return pattern.find_first_of("*?[\\") == std::string_view::npos;
}

}  // namespace keywarden
