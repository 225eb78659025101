// CRC-64 with the Jones polynomial (reflected, initial value 0, no final xor): the checksum
// Redis puts at the end of RDB files and of DUMP / FUNCTION DUMP payloads.
#pragma once
#include <cstdint>
#include <string_view>

namespace keywarden {

// Continues `crc` over `data` (start with 0).
uint64_t crc64(uint64_t crc, std::string_view data);

}  // namespace keywarden
