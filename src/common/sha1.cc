// The digest itself is OpenSSL's libcrypto (SHA-NI or AVX2 where the CPU has them). It
// replaced our own FIPS 180-4 code in round two: bench/codec_bench.cc measured libcrypto 3.4x
// faster on a 300-byte script and 9x on 16 KiB (docs/benchmarks.md, "LZF and SHA-1").
#include "common/sha1.h"

#include <openssl/sha.h>

namespace keywarden {

std::array<uint8_t, 20> sha1(std::string_view data) {
  std::array<uint8_t, 20> digest;
  SHA1(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest.data());
  return digest;
}

void sha1_hex(std::string_view data, char* out) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const std::array<uint8_t, 20> digest = sha1(data);
  for (size_t i = 0; i < digest.size(); ++i) {
    out[2 * i] = kDigits[digest[i] >> 4];
    out[2 * i + 1] = kDigits[digest[i] & 15];
  }
}

std::string sha1_hex(std::string_view data) {
  std::string hex(40, '0');
  sha1_hex(data, hex.data());
  return hex;
}

}  // namespace keywarden
