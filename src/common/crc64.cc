#include "common/crc64.h"

#include <array>

namespace keywarden {
namespace {

// The Jones polynomial 0xad93d23594c935a9, bit-reversed for the reflected algorithm.
constexpr uint64_t kReflectedPolynomial = 0x95ac9329ac4bc9b5ULL;

constexpr std::array<uint64_t, 256> make_table() {
  std::array<uint64_t, 256> table{};
  for (uint64_t byte = 0; byte < 256; ++byte) {
    uint64_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ kReflectedPolynomial : crc >> 1;
    table[byte] = crc;
  }
  return table;
}

constexpr std::array<uint64_t, 256> kTable = make_table();

}  // namespace

uint64_t crc64(uint64_t crc, std::string_view data) {
  for (unsigned char byte : data) crc = kTable[(crc ^ byte) & 0xff] ^ (crc >> 8);
  return crc;
}

}  // namespace keywarden
