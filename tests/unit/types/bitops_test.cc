// Unit tests of the bit algorithms (types/bitops): the word-at-a-time kernels against a plain
// per-bit model on random data, Redis 7.0's range rules (negative, clamped, crossed, BYTE and
// BIT units) and the BITFIELD integer reads, writes and overflow rules at widths 1…64.
#include "types/bitops.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace keywarden::bitops {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

bool bit_at(std::string_view bytes, uint64_t index) {
  return (static_cast<uint8_t>(bytes[index >> 3]) >> (7 - (index & 7))) & 1;
}

// Redis's range rules in the plainest form, for the model.
bool model_range(size_t length, int64_t start, int64_t end, Unit unit, int64_t* first,
                 int64_t* last) {
  const int64_t total = static_cast<int64_t>(length) * (unit == Unit::kBit ? 8 : 1);
  if (start < 0) start += total;
  if (end < 0) end += total;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= total) end = total - 1;
  if (start > end) return false;
  *first = unit == Unit::kBit ? start : start * 8;
  *last = unit == Unit::kBit ? end : end * 8 + 7;
  return true;
}

int64_t model_count(std::string_view bytes, int64_t start, int64_t end, Unit unit) {
  if (start < 0 && end < 0 && start > end) return 0;
  int64_t first, last;
  if (!model_range(bytes.size(), start, end, unit, &first, &last)) return 0;
  int64_t count = 0;
  for (int64_t i = first; i <= last; ++i) count += bit_at(bytes, static_cast<uint64_t>(i));
  return count;
}

int64_t model_find(std::string_view bytes, bool bit, int64_t start, std::optional<int64_t> end,
                   Unit unit) {
  const int64_t total = static_cast<int64_t>(bytes.size()) * (unit == Unit::kBit ? 8 : 1);
  int64_t first, last;
  if (!model_range(bytes.size(), start, end.value_or(total - 1), unit, &first, &last)) return -1;
  for (int64_t i = first; i <= last; ++i) {
    if (bit_at(bytes, static_cast<uint64_t>(i)) == bit) return i;
  }
  return bit || end ? -1 : last + 1;
}

std::string random_bytes(std::mt19937_64& rng, size_t length, int density) {
  std::string bytes(length, '\0');
  for (char& c : bytes) {
    switch (density) {
      case 0: c = static_cast<char>(rng() % 64 == 0 ? 1u << (rng() % 8) : 0); break;
      case 1: c = static_cast<char>(rng() % 64 == 0 ? ~(1u << (rng() % 8)) : 0xFF); break;
      default: c = static_cast<char>(rng()); break;
    }
  }
  return bytes;
}

const uint8_t* bytes_of(const std::string& bytes) {
  return reinterpret_cast<const uint8_t*>(bytes.data());
}

TEST(BitopsTest, CountOnesMatchesModelAtEveryLengthAndAlignment) {
  std::mt19937_64 rng(1);
  const std::string bytes = random_bytes(rng, 300, 2);
  for (size_t from = 0; from < 9; ++from) {
    for (size_t length = 0; from + length <= bytes.size(); length += 1 + length / 7) {
      uint64_t expected = 0;
      for (size_t i = 0; i < length * 8; ++i) expected += bit_at(bytes.substr(from), i);
      EXPECT_EQ(count_ones(bytes_of(bytes) + from, length), expected) << from << " " << length;
    }
  }
}

TEST(BitopsTest, FindFirstFindsEveryPositionOfALoneBit) {
  for (size_t length : {1u, 7u, 8u, 9u, 31u, 32u, 33u, 63u, 64u, 65u, 100u, 127u, 128u, 1000u}) {
    for (size_t position = 0; position < length * 8; ++position) {
      std::string zeros(length, '\0');
      zeros[position >> 3] = static_cast<char>(0x80 >> (position & 7));
      EXPECT_EQ(find_first(bytes_of(zeros), length, true), static_cast<int64_t>(position));
      std::string ones(length, '\xff');
      ones[position >> 3] = static_cast<char>(~(0x80 >> (position & 7)));
      EXPECT_EQ(find_first(bytes_of(ones), length, false), static_cast<int64_t>(position));
    }
    EXPECT_EQ(find_first(bytes_of(std::string(length, '\0')), length, true), -1);
    EXPECT_EQ(find_first(bytes_of(std::string(length, '\xff')), length, false), -1);
  }
  EXPECT_EQ(find_first(nullptr, 0, true), -1);
}

TEST(BitopsTest, CountRangeFollowsRedisRules) {
  const std::string foobar = "foobar";
  EXPECT_EQ(count_range(foobar, 0, -1, Unit::kByte), 26);
  EXPECT_EQ(count_range(foobar, 1, 1, Unit::kByte), 6);
  EXPECT_EQ(count_range(foobar, 1, 1, Unit::kBit), 1);
  EXPECT_EQ(count_range(foobar, 5, 30, Unit::kBit), 17);
  EXPECT_EQ(count_range(foobar, -1, -2, Unit::kByte), 0);   // crossed negatives
  EXPECT_EQ(count_range(foobar, -100, -90, Unit::kByte), 4);  // both clamp to byte 0
  EXPECT_EQ(count_range(foobar, -100, 100, Unit::kByte), 26);
  EXPECT_EQ(count_range(foobar, 3, 1, Unit::kByte), 0);
  EXPECT_EQ(count_range(foobar, kMin, kMax, Unit::kBit), 26);
  EXPECT_EQ(count_range(foobar, kMax, kMin, Unit::kBit), 0);
  EXPECT_EQ(count_range("", 0, -1, Unit::kByte), 0);
  EXPECT_EQ(count_range("", 0, 0, Unit::kBit), 0);
}

TEST(BitopsTest, RangesMatchModelOnRandomData) {
  std::mt19937_64 rng(2);
  for (int round = 0; round < 3000; ++round) {
    const std::string bytes = random_bytes(rng, rng() % 80, static_cast<int>(rng() % 3));
    const Unit unit = rng() % 2 ? Unit::kBit : Unit::kByte;
    const int64_t span = static_cast<int64_t>(bytes.size()) * (unit == Unit::kBit ? 8 : 1) + 5;
    const int64_t start = static_cast<int64_t>(rng() % (2 * span + 1)) - span;
    const int64_t end = static_cast<int64_t>(rng() % (2 * span + 1)) - span;
    ASSERT_EQ(count_range(bytes, start, end, unit), model_count(bytes, start, end, unit));
    for (bool bit : {false, true}) {
      ASSERT_EQ(find_in_range(bytes, bit, start, end, unit),
                model_find(bytes, bit, start, end, unit));
      ASSERT_EQ(find_in_range(bytes, bit, start, std::nullopt, Unit::kByte),
                model_find(bytes, bit, start, std::nullopt, Unit::kByte));
    }
  }
}

TEST(BitopsTest, FindInRangeWithoutEndSeesZeroPadding) {
  EXPECT_EQ(find_in_range("\xff\xff", false, 0, std::nullopt, Unit::kByte), 16);
  EXPECT_EQ(find_in_range("\xff\xff", false, 0, 1, Unit::kByte), -1);
  EXPECT_EQ(find_in_range("\xff\xff", true, 5, std::nullopt, Unit::kByte), -1);
  EXPECT_EQ(find_in_range("", false, 0, std::nullopt, Unit::kByte), -1);
  const std::string_view low_bit("\x00\x01", 2);
  EXPECT_EQ(find_in_range(low_bit, true, 0, -1, Unit::kBit), 15);
  EXPECT_EQ(find_in_range(low_bit, true, 0, -2, Unit::kBit), -1);
  EXPECT_EQ(find_in_range(low_bit, false, 15, -1, Unit::kBit), -1);
  EXPECT_EQ(find_in_range(low_bit, false, 1, std::nullopt, Unit::kByte), 8);
  EXPECT_EQ(find_in_range(low_bit, false, 15, std::nullopt, Unit::kByte), -1);
}

TEST(BitopsTest, CombineMatchesModelWithUnequalLengths) {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> owned;
    const size_t count = 1 + rng() % 4;
    for (size_t i = 0; i < count; ++i) owned.push_back(random_bytes(rng, rng() % 20000, 2));
    std::vector<std::string_view> sources(owned.begin(), owned.end());
    size_t longest = 0;
    for (auto& s : owned) longest = std::max(longest, s.size());
    for (Op op : {Op::kAnd, Op::kOr, Op::kXor, Op::kNot}) {
      std::span<const std::string_view> used(sources.data(), op == Op::kNot ? 1 : count);
      const size_t length = op == Op::kNot ? owned[0].size() : longest;
      std::vector<uint8_t> out(length + 1, 0xAA);
      combine(op, used, out.data());
      for (size_t j = 0; j < length; ++j) {
        auto byte = [&](size_t i) {
          return j < owned[i].size() ? static_cast<uint8_t>(owned[i][j]) : uint8_t{0};
        };
        uint8_t expected = byte(0);
        if (op == Op::kNot) expected = static_cast<uint8_t>(~expected);
        for (size_t i = 1; i < used.size(); ++i) {
          if (op == Op::kAnd) expected &= byte(i);
          if (op == Op::kOr) expected |= byte(i);
          if (op == Op::kXor) expected ^= byte(i);
        }
        ASSERT_EQ(out[j], expected) << round << " " << j;
      }
      ASSERT_EQ(out[length], 0xAA);  // nothing written past the result
    }
  }
}

TEST(BitopsTest, FieldsReadBackWhatWasWrittenAtEveryWidthAndOffset) {
  std::mt19937_64 rng(4);
  for (unsigned bits = 1; bits <= 64; ++bits) {
    for (uint64_t offset = 0; offset < 20; ++offset) {
      std::string bytes = random_bytes(rng, 12, 2);
      const std::string before = bytes;
      const uint64_t value = rng();
      auto* raw = reinterpret_cast<uint8_t*>(bytes.data());
      set_unsigned(raw, offset, bits, value);
      const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      EXPECT_EQ(get_unsigned(raw, bytes.size(), offset, bits), value & mask);
      // Bits outside the field are untouched.
      for (uint64_t i = 0; i < 96; ++i) {
        if (i < offset || i >= offset + bits) {
          ASSERT_EQ(bit_at(bytes, i), bit_at(before, i));
        }
      }
      const int64_t as_signed = get_signed(raw, bytes.size(), offset, bits);
      if (bits < 64) {
        const bool negative = (value >> (bits - 1)) & 1;
        EXPECT_EQ(as_signed < 0, negative);
        EXPECT_EQ(static_cast<uint64_t>(as_signed) & mask, value & mask);
      } else {
        EXPECT_EQ(as_signed, static_cast<int64_t>(value));
      }
    }
  }
}

TEST(BitopsTest, FieldReadsPastTheEndSeeZeros) {
  const std::string bytes = "\xff\xff";
  EXPECT_EQ(get_unsigned(reinterpret_cast<const uint8_t*>(bytes.data()), 2, 12, 8), 0xF0u);
  EXPECT_EQ(get_signed(reinterpret_cast<const uint8_t*>(bytes.data()), 2, 8, 16), -256);
  EXPECT_EQ(get_unsigned(reinterpret_cast<const uint8_t*>(bytes.data()), 2, 1000, 64), 0u);
}

TEST(BitopsTest, UnsignedOverflowWrapsSaturatesOrFails) {
  uint64_t result = 7;
  EXPECT_EQ(check_unsigned(250, 5, 8, Overflow::kWrap, &result), 0);
  EXPECT_EQ(check_unsigned(250, 10, 8, Overflow::kWrap, &result), 1);
  EXPECT_EQ(result, 4u);
  EXPECT_EQ(check_unsigned(250, 10, 8, Overflow::kSat, &result), 1);
  EXPECT_EQ(result, 255u);
  EXPECT_EQ(check_unsigned(5, -10, 8, Overflow::kSat, &result), -1);
  EXPECT_EQ(result, 0u);
  EXPECT_EQ(check_unsigned(5, -10, 8, Overflow::kWrap, &result), -1);
  EXPECT_EQ(result, 251u);
  result = 99;
  EXPECT_EQ(check_unsigned(5, -10, 8, Overflow::kFail, &result), -1);
  EXPECT_EQ(result, 99u);
  // A SET value out of range (checked with increment 0): negative values are huge unsigned.
  EXPECT_EQ(check_unsigned(static_cast<uint64_t>(-1), 0, 8, Overflow::kSat, &result), 1);
  EXPECT_EQ(result, 255u);
  // u63 at its limits.
  const uint64_t max63 = (uint64_t{1} << 63) - 1;
  EXPECT_EQ(check_unsigned(max63, 1, 63, Overflow::kWrap, &result), 1);
  EXPECT_EQ(result, 0u);
  EXPECT_EQ(check_unsigned(0, kMin, 63, Overflow::kWrap, &result), -1);
  EXPECT_EQ(result, 0u);
  EXPECT_EQ(check_unsigned(0, kMax, 63, Overflow::kWrap, &result), 0);
  EXPECT_EQ(check_unsigned(1, kMax, 63, Overflow::kSat, &result), 1);
  EXPECT_EQ(result, max63);
}

TEST(BitopsTest, SignedOverflowWrapsSaturatesOrFails) {
  int64_t result = 0;
  EXPECT_EQ(check_signed(100, 27, 8, Overflow::kWrap, &result), 0);
  EXPECT_EQ(check_signed(100, 28, 8, Overflow::kWrap, &result), 1);
  EXPECT_EQ(result, -128);
  EXPECT_EQ(check_signed(-100, -29, 8, Overflow::kWrap, &result), -1);
  EXPECT_EQ(result, 127);
  EXPECT_EQ(check_signed(-100, -29, 8, Overflow::kSat, &result), -1);
  EXPECT_EQ(result, -128);
  EXPECT_EQ(check_signed(1, 0, 1, Overflow::kSat, &result), 1);
  EXPECT_EQ(result, 0);
  EXPECT_EQ(check_signed(-1, -1, 1, Overflow::kWrap, &result), -1);
  EXPECT_EQ(result, 0);
  // i64: the sum itself would overflow the machine type.
  EXPECT_EQ(check_signed(kMax, 1, 64, Overflow::kWrap, &result), 1);
  EXPECT_EQ(result, kMin);
  EXPECT_EQ(check_signed(kMin, -1, 64, Overflow::kSat, &result), -1);
  EXPECT_EQ(result, kMin);
  EXPECT_EQ(check_signed(kMin, kMax, 64, Overflow::kSat, &result), 0);
  EXPECT_EQ(check_signed(-5, kMin, 64, Overflow::kWrap, &result), -1);
  EXPECT_EQ(result, kMax - 4);
  EXPECT_EQ(check_signed(5, kMax, 64, Overflow::kSat, &result), 1);
  EXPECT_EQ(result, kMax);
  // i63 with increments beyond its range.
  const int64_t max63 = (int64_t{1} << 62) - 1;
  EXPECT_EQ(check_signed(0, kMax, 63, Overflow::kSat, &result), 1);
  EXPECT_EQ(result, max63);
  EXPECT_EQ(check_signed(-1, kMin, 63, Overflow::kSat, &result), -1);
  EXPECT_EQ(result, -max63 - 1);
  EXPECT_EQ(check_signed(0, kMax, 63, Overflow::kWrap, &result), 1);
  EXPECT_EQ(result, -1);
  // SET values out of range.
  EXPECT_EQ(check_signed(128, 0, 8, Overflow::kWrap, &result), 1);
  EXPECT_EQ(result, -128);
  EXPECT_EQ(check_signed(-129, 0, 8, Overflow::kWrap, &result), -1);
  EXPECT_EQ(result, 127);
}

}  // namespace
}  // namespace keywarden::bitops
