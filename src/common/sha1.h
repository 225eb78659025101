// SHA-1 (libcrypto's, underneath), for script identities: EVALSHA names a script by the hex
// digest of its body, and redis.sha1hex exposes the same function to scripts.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace keywarden {

std::array<uint8_t, 20> sha1(std::string_view data);
// The 40 lowercase hex digits of sha1(data).
std::string sha1_hex(std::string_view data);
// The same digits written to out[0..39] (no terminator), for callers that must not allocate.
void sha1_hex(std::string_view data, char* out);

}  // namespace keywarden
