// Strict conversions between numbers and their text form, with exactly the acceptance rules
// and output of Redis 7.0, because clients see both: which arguments earn "value is not an
// integer or out of range", and the bytes INCRBYFLOAT stores or ZSCORE replies.
//
// Every parser takes the whole view (no NUL terminator needed, embedded NULs are ordinary
// bytes unless a function says otherwise), returns false on any rejection, writes `*out` only
// on success, and accepts a null `out` to merely validate. Parsers allocate only for floating
// point texts of 128 bytes or more; nothing here depends on the process locale.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace keywarden {

// Longest text of an int64 ("-9223372036854775808") and of a uint64 ("18446744073709551615").
inline constexpr size_t kMaxInt64Chars = 20;
inline constexpr size_t kMaxUint64Chars = 20;
// Longest text format_double_to_chars writes ("-2.2250738585072014e-308" is 24).
inline constexpr size_t kMaxDoubleChars = 32;
// Redis' MAX_LONG_DOUBLE_CHARS: a long double argument must be shorter than this.
inline constexpr size_t kMaxLongDoubleChars = 5 * 1024;

// Canonical decimal integer, as Redis' string2ll: an optional '-', then "0" alone or a digit
// 1-9 followed by digits, within int64. Rejects "", "+1", " 1", "1 ", "01", "-0", "1.0", "1e3".
bool parse_int64(std::string_view text, int64_t* out);

// The same canonical grammar without a sign, over the whole uint64 range.
bool parse_uint64(std::string_view text, uint64_t* out);

// A SCAN/HSCAN/SSCAN/ZSCAN cursor as Redis 7.0 reads it (strtoul in base 10): the text ends at
// its first NUL byte; the first byte must not be whitespace; then an optional sign, and digits
// (leading zeros fine) up to UINT64_MAX, a '-' negating modulo 2^64 ("-1" is UINT64_MAX). An
// empty text is cursor 0; a sign without digits, trailing bytes or overflow are rejected.
bool parse_scan_cursor(std::string_view text, uint64_t* out);

// A long double as INCRBYFLOAT/HINCRBYFLOAT read it (Redis string2ld over strtold): non-empty,
// shorter than kMaxLongDoubleChars, no leading whitespace, all of it consumed. Accepts '+',
// leading zeros, ".5", "5.", exponents, hexadecimal ("0x1p3") and infinities ("inf",
// "-Infinity"); rejects NaN, and values that overflow to infinity or underflow to zero
// ("1e5000", "1e-5000") while accepting subnormals.
bool parse_long_double(std::string_view text, long double* out);

// A double as ZADD and other score arguments read it (Redis string2d over strtod): the same
// rules as parse_long_double at double precision, without the length limit.
bool parse_double(std::string_view text, double* out);

// Decimal text of `value` into `buf` (at least kMaxInt64Chars bytes, not NUL-terminated);
// returns the length.
size_t int64_to_chars(int64_t value, char* buf);
size_t uint64_to_chars(uint64_t value, char* buf);
std::string format_int64(int64_t value);

// A long double as INCRBYFLOAT stores it (Redis ld2string, human mode): fixed notation with 17
// decimals, then trailing zeros and a trailing '.' removed, "-0" turned into "0"; infinities
// are "inf" / "-inf" and NaN is "nan". 10.5 + 0.1 gives "10.6", 5e3 gives "5000".
std::string format_long_double(long double value);

// A double as Redis 7.0 replies it (addReplyDouble, RESP2 bulk and RESP3 double alike): "%.17g",
// so 1.1 is "1.1000000000000001", 1e17 is "1e+17", -0.0 is "-0"; infinities are "inf"/"-inf".
// The _to_chars form writes into `buf` (at least kMaxDoubleChars bytes) and returns the length.
size_t double_to_chars(double value, char* buf);
std::string format_double(double value);

// A byte count as INFO's *_human fields show it (Redis bytesToHuman): "0B".."1023B", then two
// decimals with K, M, G, T or P (powers of 1024, e.g. "1.00K", "12.34M", "1024.00K" just below
// 1M), and plain "<n>B" again from 1024 PiB on.
std::string format_human_bytes(uint64_t bytes);

}  // namespace keywarden
