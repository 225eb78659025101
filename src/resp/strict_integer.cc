#include "resp/strict_integer.h"

#include <limits>

namespace keywarden {

bool parse_strict_int64(std::string_view text, int64_t* out) {
  // 20 characters already hold every int64_t ("-9223372036854775808"); longer input is
  // rejected up front so the digit loop never has to worry about absurd lengths.
  if (text.empty() || text.size() > 20) return false;
  if (text == "0") {
    *out = 0;
    return true;
  }
  size_t i = 0;
  const bool negative = text[0] == '-';
  if (negative) i = 1;
  if (i == text.size() || text[i] < '1' || text[i] > '9') return false;

  // Accumulate the magnitude as unsigned so that INT64_MIN, whose magnitude does not fit in
  // int64_t, can still be represented before the sign is applied.
  constexpr uint64_t kMaxMagnitude = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  const uint64_t limit = negative ? kMaxMagnitude + 1 : kMaxMagnitude;
  uint64_t magnitude = 0;
  if (text.size() - i <= 18) {
    // 18 digits stay below 10^18 < INT64_MAX: no bound check (a division per digit) needed,
    // and bulk lengths and counts are almost always this short.
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (c < '0' || c > '9') return false;
      magnitude = magnitude * 10 + static_cast<uint64_t>(c - '0');
    }
    *out = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    return true;
  }
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (magnitude > (limit - digit) / 10) return false;
    magnitude = magnitude * 10 + digit;
  }
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

}  // namespace keywarden
