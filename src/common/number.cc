#include "common/number.h"

#include <locale.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace keywarden {
namespace {

constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }

// isspace() in the C locale: strtod/strtoul skip exactly these before a number, so they are
// the bytes Redis has to reject explicitly in first position.
constexpr bool is_c_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Parses the canonical unsigned form shared by parse_int64 and parse_uint64: "0", or a
// digit 1-9 followed by digits, no larger than `limit`.
bool parse_canonical_magnitude(std::string_view digits, uint64_t limit, uint64_t* out) {
  if (digits.empty()) return false;
  if (digits == "0") {
    *out = 0;
    return true;
  }
  if (digits[0] < '1' || digits[0] > '9') return false;
  uint64_t value = 0;
  for (char c : digits) {
    if (!is_digit(c)) return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (limit - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *out = value;
  return true;
}

// strtod and strtold follow LC_NUMERIC; Redis runs with the C locale there, so we pin it
// rather than depend on whatever the embedding process chose.
locale_t c_locale() {
  static const locale_t locale = newlocale(LC_ALL_MASK, "C", locale_t{});
  return locale;
}

// The strto* family needs a NUL-terminated copy. Arguments are short in practice, so they go
// through a stack buffer and only unusually long ones pay for an allocation.
class TerminatedCopy {
 public:
  explicit TerminatedCopy(std::string_view text) {
    if (text.size() < sizeof(inline_)) {
      std::memcpy(inline_, text.data(), text.size());
      inline_[text.size()] = '\0';
      data_ = inline_;
    } else {
      heap_.assign(text);
      data_ = heap_.data();
    }
  }
  const char* c_str() const { return data_; }

 private:
  char inline_[128];
  std::string heap_;
  const char* data_;
};

// The checks Redis applies around strtod/strtold: no leading space (strto* would skip it),
// every byte consumed (so an embedded NUL fails), no NaN, and no overflow to infinity or
// underflow to zero. A spelled-out "inf" parses without ERANGE and so is accepted, and a
// subnormal result is accepted although it also raises ERANGE.
template <typename Float, typename Convert>
bool parse_float(std::string_view text, Float* out, Convert convert) {
  if (text.empty() || is_c_space(text[0])) return false;
  TerminatedCopy copy(text);
  char* end = nullptr;
  const int saved_errno = errno;
  errno = 0;
  const Float value = convert(copy.c_str(), &end, c_locale());
  const bool out_of_range =
      errno == ERANGE && (std::isinf(value) || value == static_cast<Float>(0));
  errno = saved_errno;
  if (static_cast<size_t>(end - copy.c_str()) != text.size() || out_of_range || std::isnan(value)) {
    return false;
  }
  if (out != nullptr) *out = value;
  return true;
}

}  // namespace

bool parse_int64(std::string_view text, int64_t* out) {
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) text.remove_prefix(1);
  // The magnitude of INT64_MIN is one more than INT64_MAX.
  const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + negative;
  uint64_t magnitude = 0;
  if (!parse_canonical_magnitude(text, limit, &magnitude)) return false;
  if (negative && magnitude == 0) return false;  // "-0" is not canonical
  if (out != nullptr) {
    *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  }
  return true;
}

bool parse_uint64(std::string_view text, uint64_t* out) {
  uint64_t value = 0;
  if (!parse_canonical_magnitude(text, std::numeric_limits<uint64_t>::max(), &value)) {
    return false;
  }
  if (out != nullptr) *out = value;
  return true;
}

bool parse_scan_cursor(std::string_view text, uint64_t* out) {
  // Redis hands the argument to strtoul as a C string, which stops at the first NUL.
  text = text.substr(0, text.find('\0'));
  if (text.empty()) {
    // strtoul converts nothing, leaves the end pointer at the terminator, and Redis only
    // checks that the end pointer sits on a NUL.
    if (out != nullptr) *out = 0;
    return true;
  }
  if (is_c_space(text[0])) return false;
  const bool negative = text[0] == '-';
  if (negative || text[0] == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (!is_digit(c)) return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) return false;
    value = value * 10 + digit;
  }
  if (out != nullptr) *out = negative ? 0 - value : value;
  return true;
}

bool parse_long_double(std::string_view text, long double* out) {
  if (text.size() >= kMaxLongDoubleChars) return false;
  return parse_float<long double>(text, out, strtold_l);
}

bool parse_double(std::string_view text, double* out) {
  return parse_float<double>(text, out, strtod_l);
}

size_t int64_to_chars(int64_t value, char* buf) {
  return static_cast<size_t>(std::to_chars(buf, buf + kMaxInt64Chars, value).ptr - buf);
}

size_t uint64_to_chars(uint64_t value, char* buf) {
  return static_cast<size_t>(std::to_chars(buf, buf + kMaxUint64Chars, value).ptr - buf);
}

std::string format_int64(int64_t value) {
  char buf[kMaxInt64Chars];
  return std::string(buf, int64_to_chars(value, buf));
}

std::string format_long_double(long double value) {
  // Spelled out rather than left to the formatter, as Redis does, so the text never varies.
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (std::isnan(value)) return "nan";
  // 17 decimals: enough that small decimal inputs (0.1, 10.6) come back as typed once the
  // long double's extra precision rounds away, and the widest finite long double (4933
  // integer digits) still fits.
  std::string text(kMaxLongDoubleChars, '\0');
  const auto result =
      std::to_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed, 17);
  size_t length = static_cast<size_t>(result.ptr - text.data());
  // Fixed notation always has a '.' here, followed by exactly 17 digits.
  while (text[length - 1] == '0') --length;
  if (text[length - 1] == '.') --length;
  text.resize(length);
  if (text == "-0") text = "0";
  return text;
}

size_t double_to_chars(double value, char* buf) {
  if (std::isinf(value)) {
    const std::string_view text = value > 0 ? "inf" : "-inf";
    std::memcpy(buf, text.data(), text.size());
    return text.size();
  }
  const auto result =
      std::to_chars(buf, buf + kMaxDoubleChars, value, std::chars_format::general, 17);
  return static_cast<size_t>(result.ptr - buf);
}

std::string format_double(double value) {
  char buf[kMaxDoubleChars];
  return std::string(buf, double_to_chars(value, buf));
}

std::string format_human_bytes(uint64_t bytes) {
  static constexpr char kUnits[] = {'K', 'M', 'G', 'T', 'P'};
  // Each unit covers [1024^k, 1024^(k+1)); from 1024 PiB on Redis falls back to plain bytes.
  uint64_t unit_size = 1024;
  for (char unit : kUnits) {
    const uint64_t next = unit_size * 1024;
    if (bytes >= unit_size && bytes < next) {
      char buf[32];
      const double scaled = static_cast<double>(bytes) / static_cast<double>(unit_size);
      auto result = std::to_chars(buf, buf + sizeof(buf) - 1, scaled, std::chars_format::fixed, 2);
      *result.ptr++ = unit;
      return std::string(buf, result.ptr);
    }
    unit_size = next;
  }
  char buf[kMaxUint64Chars + 1];
  const size_t length = uint64_to_chars(bytes, buf);
  buf[length] = 'B';
  return std::string(buf, length + 1);
}

}  // namespace keywarden
