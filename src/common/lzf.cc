#include "common/lzf.h"

namespace keywarden {

bool lzf_decompress(std::string_view input, size_t expected_length, std::string* output) {
  output->clear();
  output->reserve(expected_length);
  size_t at = 0;
  while (at < input.size()) {
    const unsigned control = static_cast<unsigned char>(input[at++]);
    if (control < 32) {
      const size_t run = control + 1;
      if (at + run > input.size() || output->size() + run > expected_length) return false;
      output->append(input.substr(at, run));
      at += run;
      continue;
    }
    size_t length = control >> 5;
    if (length == 7) {
      if (at >= input.size()) return false;
      length += static_cast<unsigned char>(input[at++]);
    }
    if (at >= input.size()) return false;
    const size_t distance = ((control & 0x1f) << 8) + static_cast<unsigned char>(input[at++]) + 1;
    length += 2;
    if (distance > output->size() || output->size() + length > expected_length) return false;
    // Byte by byte: a match may overlap the bytes it produces.
    size_t from = output->size() - distance;
    for (size_t i = 0; i < length; ++i) output->push_back((*output)[from + i]);
  }
  return output->size() == expected_length;
}

}  // namespace keywarden
