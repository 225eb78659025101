#include "common/lzf.h"

#include <algorithm>
#include <bit>
#include <cstdint>

namespace keywarden {

namespace {
constexpr size_t kLzfMaxExpansion = 88;  // 264 bytes out of 3 in
}  // namespace

bool lzf_decompress(std::string_view input, size_t expected_length, std::string* output) {
  output->clear();
  // No chunk expands more than a back reference of three bytes into 264: a length beyond
  // that ratio is a lie, refused before anything is reserved for it.
  if (expected_length / kLzfMaxExpansion > input.size()) return false;
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

namespace keywarden {
namespace {

constexpr size_t kLzfMaxLiteral = 32;         // a literal run holds 1..32 bytes
constexpr size_t kLzfMaxOffset = 8192;        // a back reference reaches 1..8192 bytes back
constexpr size_t kLzfMaxMatch = 7 + 255 + 2;  // length field 7, extension byte, +2 implied
// The hash table of three-byte sequences has up to 2^14 slots, fewer for short inputs: it is
// cleared for every input, and clearing 64 KiB to compress a 100-byte value cost four times
// the compression itself (an RDB of a million such values took 2 s to write, Redis 0.8 s).
constexpr int kLzfMaxHashBits = 14;
constexpr int kLzfMinHashBits = 8;

uint32_t lzf_hash(const unsigned char* p, int bits) {
  const uint32_t v = (uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2];
  return (v * 2654435761u) >> (32 - bits);
}

}  // namespace

bool lzf_compress(std::string_view input, size_t max_output, std::string* output) {
  output->clear();
  output->reserve(std::min(max_output, input.size() + input.size() / 32 + 1));
  const auto* in = reinterpret_cast<const unsigned char*>(input.data());
  const size_t size = input.size();
  // Positions + 1 of the last sighting of each hashed three-byte sequence (0: none): about
  // two slots per input byte.
  const int bits = std::clamp(static_cast<int>(std::bit_width(size)) + 1, kLzfMinHashBits,
                              kLzfMaxHashBits);
  uint32_t last_seen[size_t{1} << kLzfMaxHashBits];
  std::fill_n(last_seen, size_t{1} << bits, 0u);
  size_t literal_start = 0;  // first byte of the pending literal run
  size_t pos = 0;

  auto flush_literals = [&](size_t end) -> bool {
    while (literal_start < end) {
      const size_t run = std::min(kLzfMaxLiteral, end - literal_start);
      if (output->size() + 1 + run > max_output) return false;
      output->push_back(static_cast<char>(run - 1));
      output->append(reinterpret_cast<const char*>(in + literal_start), run);
      literal_start += run;
    }
    return true;
  };

  while (pos + 2 < size) {
    const uint32_t hash = lzf_hash(in + pos, bits);
    const size_t candidate = last_seen[hash];
    last_seen[hash] = static_cast<uint32_t>(pos + 1);
    if (candidate != 0) {
      const size_t ref = candidate - 1;
      const size_t distance = pos - ref;
      if (distance <= kLzfMaxOffset && in[ref] == in[pos] && in[ref + 1] == in[pos + 1] &&
          in[ref + 2] == in[pos + 2]) {
        size_t length = 3;
        const size_t limit = std::min(kLzfMaxMatch, size - pos);
        while (length < limit && in[ref + length] == in[pos + length]) ++length;
        if (!flush_literals(pos)) return false;
        const size_t code = length - 2;
        const size_t offset = distance - 1;
        if (output->size() + (code >= 7 ? 3 : 2) > max_output) return false;
        if (code < 7) {
          output->push_back(static_cast<char>((code << 5) | (offset >> 8)));
        } else {
          output->push_back(static_cast<char>((7 << 5) | (offset >> 8)));
          output->push_back(static_cast<char>(code - 7));
        }
        output->push_back(static_cast<char>(offset & 0xff));
        // Index the positions the match covered, so later data can refer into it.
        const size_t end = pos + length;
        for (size_t p = pos + 1; p + 2 < size && p < end; ++p) {
          last_seen[lzf_hash(in + p, bits)] = static_cast<uint32_t>(p + 1);
        }
        pos = end;
        literal_start = pos;
        continue;
      }
    }
    ++pos;
  }
  return flush_literals(size);
}

}  // namespace keywarden
