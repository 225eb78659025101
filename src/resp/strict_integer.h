// The integer grammar RESP lengths and counts are read with, shared by the request and reply
// parsers. It is the strict grammar Redis applies to protocol headers: an optional '-' then
// decimal digits, no leading zeros (except "0" itself), no '+', no spaces, no "-0", and the
// value must fit in int64_t. Anything else is rejected rather than partially read, so "12x" or
// " 5" never pass as numbers.
#pragma once

#include <cstdint>
#include <string_view>

namespace keywarden {

// Returns true and stores the value in *out when `text` is exactly one integer in the grammar
// above; returns false (and leaves *out untouched) otherwise.
bool parse_strict_int64(std::string_view text, int64_t* out);

}  // namespace keywarden
