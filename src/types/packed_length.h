// Byte-string lengths for the flat "listpack" encodings of small hashes, sorted sets and sets:
// LEB128 (7 bits a byte, low bits first, high bit = more follows), so a length under 128 costs
// one byte. A backward length stores the same bytes in reverse order, right after an entry, so a
// walk can step from an entry's start back to the previous entry's start (Redis's listpack
// "backlen" idea).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace keywarden::packed {

// Bytes the LEB128 form of `length` takes.
inline size_t length_size(size_t length) {
  size_t size = 1;
  while (length >= 0x80) {
    length >>= 7;
    ++size;
  }
  return size;
}

// `Bytes`: std::string or any byte buffer with push_back(char).
template <typename Bytes>
void append_length(Bytes& out, size_t length) {
  while (length >= 0x80) {
    out.push_back(static_cast<char>((length & 0x7F) | 0x80));
    length >>= 7;
  }
  out.push_back(static_cast<char>(length));
}

// Reads a LEB128 length at *offset and advances *offset past it.
inline size_t read_length(std::string_view bytes, size_t* offset) {
  size_t length = 0;
  int shift = 0;
  for (;;) {
    const auto byte = static_cast<uint8_t>(bytes[(*offset)++]);
    length |= static_cast<size_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return length;
    shift += 7;
  }
}

// Appends `length` readable from its end by read_back_length().
inline void append_back_length(std::string& out, size_t length) {
  const size_t size = length_size(length);
  out.append(size, '\0');
  char* at = out.data() + out.size();
  while (length >= 0x80) {
    *--at = static_cast<char>((length & 0x7F) | 0x80);
    length >>= 7;
  }
  *--at = static_cast<char>(length);
}

// Reads a backward length that ends just before *end and moves *end to its first byte.
inline size_t read_back_length(std::string_view bytes, size_t* end) {
  size_t length = 0;
  int shift = 0;
  for (;;) {
    const auto byte = static_cast<uint8_t>(bytes[--*end]);
    length |= static_cast<size_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return length;
    shift += 7;
  }
}

}  // namespace keywarden::packed
