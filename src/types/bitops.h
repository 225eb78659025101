// Bit algorithms over string bytes for the bitmap commands (SETBIT, BITCOUNT, BITPOS, BITOP,
// BITFIELD), as plain functions on byte ranges: no keyspace, no RESP.
//
// Bit numbering is Redis's: bit 0 is the most significant bit of the first byte, so a string
// reads as one big-endian bit array. Ranges follow Redis 7.0's rules: negative indexes count
// from the end, indexes are clamped to the string, BYTE or BIT units. Counting and searching
// work a machine word at a time (hardware popcount and count-leading-zeros, with an AVX2 path
// for BITOP), never a loop per bit; the CPU features are checked once at run time, so the
// binary stays portable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace keywarden::bitops {

// Number of bits set in `length` bytes.
uint64_t count_ones(const uint8_t* bytes, size_t length);

// The index of the first bit equal to `bit` in `length` bytes, or -1 when there is none.
int64_t find_first(const uint8_t* bytes, size_t length, bool bit);

// The unit of a BITCOUNT/BITPOS range.
enum class Unit : uint8_t { kByte, kBit };

// BITCOUNT key start end [BYTE|BIT] on an existing string's bytes.
int64_t count_range(std::string_view bytes, int64_t start, int64_t end, Unit unit);

// BITPOS key bit [start [end [BYTE|BIT]]] on an existing string's bytes; `start` defaults to
// 0. Without an end, a search for a 0 bit that finds none answers the first bit past the
// string (the string is taken as padded with zeros); with an end it answers -1.
int64_t find_in_range(std::string_view bytes, bool bit, int64_t start,
                      std::optional<int64_t> end, Unit unit);

enum class Op : uint8_t { kAnd, kOr, kXor, kNot };

// BITOP: writes the result of `op` over `sources` into `out`, which holds as many bytes as the
// longest source; shorter sources count as padded with zero bytes. kNot takes one source.
void combine(Op op, std::span<const std::string_view> sources, uint8_t* out);

// --- BITFIELD integers -----------------------------------------------------------------------
//
// A field is `bits` wide (1…64) at bit `offset`, most significant bit first. The readers
// take the bytes' length and read zeros past it; the writers need every byte of the field.

uint64_t get_unsigned(const uint8_t* bytes, size_t length, uint64_t offset, unsigned bits);
int64_t get_signed(const uint8_t* bytes, size_t length, uint64_t offset, unsigned bits);
void set_unsigned(uint8_t* bytes, uint64_t offset, unsigned bits, uint64_t value);
inline void set_signed(uint8_t* bytes, uint64_t offset, unsigned bits, int64_t value) {
  set_unsigned(bytes, offset, bits, static_cast<uint64_t>(value));
}

enum class Overflow : uint8_t { kWrap, kSat, kFail };

// Whether `value` + `increment` fits a field of `bits` bits: 0 when it does, 1 on overflow,
// -1 on underflow. When it does not fit, *result is what WRAP or SAT store (left alone for
// FAIL). `value` may itself be out of range (a SET value checked with increment 0).
int check_unsigned(uint64_t value, int64_t increment, unsigned bits, Overflow overflow,
                   uint64_t* result);
int check_signed(int64_t value, int64_t increment, unsigned bits, Overflow overflow,
                 int64_t* result);

}  // namespace keywarden::bitops
