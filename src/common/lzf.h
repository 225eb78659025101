// LZF, the format Redis uses for compressed strings in RDB files and DUMP payloads
// (rdbcompression). A stream is a sequence of chunks, each introduced by a control byte: below
// 32, a literal run of control+1 bytes follows; otherwise the top three bits give a match
// length (7 means "plus the next byte") and the rest, with the next byte, the distance back
// into the output to copy length+2 bytes from. Both directions are Debian's liblzf (the code
// Redis embeds) behind std::string adapters.
#pragma once
#include <string>
#include <string_view>

namespace keywarden {

// Decompresses `input` into `*output`, which must come out exactly `expected_length` bytes;
// false on a malformed stream, and at once (nothing reserved) when `expected_length` is more
// than the input could ever expand to.
bool lzf_decompress(std::string_view input, size_t expected_length, std::string* output);

// Compresses `input` into `*output` in the same format. Returns false, leaving `*output`
// unspecified, when the input is empty or the result would be longer than `max_output`
// bytes: callers store the string uncompressed then, as Redis does when compression saves
// too little.
bool lzf_compress(std::string_view input, size_t max_output, std::string* output);

}  // namespace keywarden
