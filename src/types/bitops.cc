// Bit algorithms of the bitmap commands (see bitops.h).
#include "types/bitops.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

namespace keywarden::bitops {
namespace {

// The kernels are written once and compiled twice: for the baseline x86-64 and for a CPU
// with the instructions that make them fast (POPCNT for counting, AVX2 for BITOP's loops,
// which the compiler vectorizes). One check at first use picks the variant, so the binary
// runs anywhere and still uses the hardware where it exists.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KEYWARDEN_BITOPS_DISPATCH 1
#endif

// Loads 8 bytes as one big-endian word, so that bit 0 of the bitmap is the word's top bit.
inline uint64_t load_big_endian(const uint8_t* bytes) {
  uint64_t word;
  std::memcpy(&word, bytes, sizeof(word));
  return __builtin_bswap64(word);
}

[[gnu::always_inline]] inline uint64_t count_ones_kernel(const uint8_t* bytes, size_t length) {
  // Four independent sums let the popcounts of consecutive words overlap in the pipeline.
  uint64_t sums[4] = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 32 <= length; i += 32) {
    uint64_t words[4];
    std::memcpy(words, bytes + i, sizeof(words));
    sums[0] += static_cast<uint64_t>(__builtin_popcountll(words[0]));
    sums[1] += static_cast<uint64_t>(__builtin_popcountll(words[1]));
    sums[2] += static_cast<uint64_t>(__builtin_popcountll(words[2]));
    sums[3] += static_cast<uint64_t>(__builtin_popcountll(words[3]));
  }
  uint64_t total = sums[0] + sums[1] + sums[2] + sums[3];
  for (; i + 8 <= length; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + i, sizeof(word));
    total += static_cast<uint64_t>(__builtin_popcountll(word));
  }
  for (; i < length; ++i) total += static_cast<uint64_t>(__builtin_popcount(bytes[i]));
  return total;
}

uint64_t count_ones_baseline(const uint8_t* bytes, size_t length) {
  return count_ones_kernel(bytes, length);
}

#ifdef KEYWARDEN_BITOPS_DISPATCH
[[gnu::target("popcnt")]] uint64_t count_ones_popcnt(const uint8_t* bytes, size_t length) {
  return count_ones_kernel(bytes, length);
}
#endif

// BITOP over one chunk: out[0, length) = op over the sources' bytes [base, base + length).
// Working chunk by chunk keeps the output in the L1 cache while every source is folded in,
// so each byte of memory is read once and the result written once.
[[gnu::always_inline]] inline void combine_chunk(Op op, std::span<const std::string_view> sources,
                                                 size_t base, size_t length, uint8_t* out) {
  auto available = [&](std::string_view source) {
    return source.size() > base ? std::min(length, source.size() - base) : size_t{0};
  };
  const std::string_view first = sources[0];
  const size_t first_length = available(first);
  const auto* first_bytes = reinterpret_cast<const uint8_t*>(first.data()) + base;
  if (op == Op::kNot) {
    for (size_t j = 0; j < first_length; ++j) out[j] = static_cast<uint8_t>(~first_bytes[j]);
    return;
  }
  if (first_length > 0) std::memcpy(out, first_bytes, first_length);
  std::memset(out + first_length, 0, length - first_length);
  for (size_t i = 1; i < sources.size(); ++i) {
    const size_t n = available(sources[i]);
    const auto* bytes = reinterpret_cast<const uint8_t*>(sources[i].data()) + base;
    switch (op) {
      case Op::kAnd:
        for (size_t j = 0; j < n; ++j) out[j] &= bytes[j];
        // Past a source's end it contributes zeros, which clear the AND.
        std::memset(out + n, 0, length - n);
        break;
      case Op::kOr:
        for (size_t j = 0; j < n; ++j) out[j] |= bytes[j];
        break;
      case Op::kXor:
        for (size_t j = 0; j < n; ++j) out[j] ^= bytes[j];
        break;
      case Op::kNot: break;
    }
  }
}

constexpr size_t kCombineChunk = 8192;

[[gnu::always_inline]] inline void combine_kernel(Op op, std::span<const std::string_view> sources,
                                                  size_t total, uint8_t* out) {
  for (size_t base = 0; base < total; base += kCombineChunk) {
    combine_chunk(op, sources, base, std::min(kCombineChunk, total - base), out + base);
  }
}

void combine_baseline(Op op, std::span<const std::string_view> sources, size_t total,
                      uint8_t* out) {
  combine_kernel(op, sources, total, out);
}

#ifdef KEYWARDEN_BITOPS_DISPATCH
[[gnu::target("avx2")]] void combine_avx2(Op op, std::span<const std::string_view> sources,
                                          size_t total, uint8_t* out) {
  combine_kernel(op, sources, total, out);
}
#endif

// How many leading bytes of `bytes` hold only bits other than the one sought, in whole blocks
// (the caller finishes the search a word at a time from there). `flip` is all ones when a 0
// bit is sought, so that a block to skip is all zeros once flipped.
size_t skip_baseline(const uint8_t* bytes, size_t length, uint64_t flip) {
  size_t i = 0;
  for (; i + 32 <= length; i += 32) {
    uint64_t words[4];
    std::memcpy(words, bytes + i, sizeof(words));
    if (((words[0] ^ flip) | (words[1] ^ flip) | (words[2] ^ flip) | (words[3] ^ flip)) != 0) {
      break;
    }
  }
  return i;
}

#ifdef KEYWARDEN_BITOPS_DISPATCH
// 64 bytes per test: a long run is skipped at the speed memory delivers it.
[[gnu::target("avx2")]] size_t skip_avx2(const uint8_t* bytes, size_t length, uint64_t flip) {
  const __m256i flip_vector = _mm256_set1_epi64x(static_cast<long long>(flip));
  size_t i = 0;
  for (; i + 64 <= length; i += 64) {
    const __m256i low = _mm256_xor_si256(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes + i)), flip_vector);
    const __m256i high = _mm256_xor_si256(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes + i + 32)), flip_vector);
    const __m256i any = _mm256_or_si256(low, high);
    if (!_mm256_testz_si256(any, any)) break;
  }
  return i;
}
#endif

using SkipFunction = size_t (*)(const uint8_t*, size_t, uint64_t);
using CountOnesFunction = uint64_t (*)(const uint8_t*, size_t);
using CombineFunction = void (*)(Op, std::span<const std::string_view>, size_t, uint8_t*);

CountOnesFunction pick_count_ones() {
#ifdef KEYWARDEN_BITOPS_DISPATCH
  if (__builtin_cpu_supports("popcnt")) return count_ones_popcnt;
#endif
  return count_ones_baseline;
}

SkipFunction pick_skip() {
#ifdef KEYWARDEN_BITOPS_DISPATCH
  if (__builtin_cpu_supports("avx2")) return skip_avx2;
#endif
  return skip_baseline;
}

CombineFunction pick_combine() {
#ifdef KEYWARDEN_BITOPS_DISPATCH
  if (__builtin_cpu_supports("avx2")) return combine_avx2;
#endif
  return combine_baseline;
}

// The byte with only the bits of `byte` that equal `bit` set.
inline uint8_t matching(uint8_t byte, bool bit) {
  return bit ? byte : static_cast<uint8_t>(~byte);
}

// Index of the top set bit of a non-zero byte, bit 0 being the most significant.
inline int64_t first_in_byte(uint8_t byte) { return __builtin_clz(byte) - 24; }

// Bits set in [first_bit, last_bit] of `bytes` (bit indexes, inclusive, within the bytes).
uint64_t count_bits(const uint8_t* bytes, uint64_t first_bit, uint64_t last_bit) {
  const uint64_t first_byte = first_bit >> 3;
  const uint64_t last_byte = last_bit >> 3;
  uint64_t total = count_ones(bytes + first_byte, last_byte - first_byte + 1);
  // Take back the bits of the edge bytes outside the range.
  const auto before = static_cast<uint8_t>(0xFF00 >> (first_bit & 7));
  const auto after = static_cast<uint8_t>((1u << (7 - (last_bit & 7))) - 1);
  total -= static_cast<uint64_t>(__builtin_popcount(bytes[first_byte] & before));
  total -= static_cast<uint64_t>(__builtin_popcount(bytes[last_byte] & after));
  return total;
}

// The first bit equal to `bit` in [first_bit, last_bit] of `bytes`, or -1.
int64_t find_bits(const uint8_t* bytes, uint64_t first_bit, uint64_t last_bit, bool bit) {
  const uint64_t first_byte = first_bit >> 3;
  const uint64_t last_byte = last_bit >> 3;
  const auto from_first = static_cast<uint8_t>(0xFF >> (first_bit & 7));
  const auto to_last = static_cast<uint8_t>(0xFF00 >> ((last_bit & 7) + 1));
  if (first_byte == last_byte) {
    const uint8_t found = matching(bytes[first_byte], bit) & from_first & to_last;
    return found ? static_cast<int64_t>(first_byte * 8) + first_in_byte(found) : -1;
  }
  if (uint8_t found = matching(bytes[first_byte], bit) & from_first) {
    return static_cast<int64_t>(first_byte * 8) + first_in_byte(found);
  }
  const int64_t middle = find_first(bytes + first_byte + 1, last_byte - first_byte - 1, bit);
  if (middle >= 0) return static_cast<int64_t>((first_byte + 1) * 8) + middle;
  if (uint8_t found = matching(bytes[last_byte], bit) & to_last) {
    return static_cast<int64_t>(last_byte * 8) + first_in_byte(found);
  }
  return -1;
}

// Resolves a BITCOUNT/BITPOS range as Redis does (negative from the end, clamped to the
// string) into inclusive bit indexes; false for an empty range.
bool resolve_range(size_t length, int64_t start, int64_t end, Unit unit, uint64_t* first_bit,
                   uint64_t* last_bit) {
  const int64_t total = static_cast<int64_t>(length) * (unit == Unit::kBit ? 8 : 1);
  if (start < 0) start += total;
  if (end < 0) end += total;
  start = std::max<int64_t>(start, 0);
  end = std::max<int64_t>(end, 0);
  end = std::min(end, total - 1);
  if (start > end) return false;
  if (unit == Unit::kBit) {
    *first_bit = static_cast<uint64_t>(start);
    *last_bit = static_cast<uint64_t>(end);
  } else {
    *first_bit = static_cast<uint64_t>(start) * 8;
    *last_bit = static_cast<uint64_t>(end) * 8 + 7;
  }
  return true;
}

}  // namespace

uint64_t count_ones(const uint8_t* bytes, size_t length) {
  static const CountOnesFunction function = pick_count_ones();
  return function(bytes, length);
}

int64_t find_first(const uint8_t* bytes, size_t length, bool bit) {
  static const SkipFunction skip = pick_skip();
  // Whole blocks without the bit are skipped first, then the word holding it is found and
  // its leading zeros counted.
  const uint64_t flip = bit ? 0 : ~uint64_t{0};
  size_t i = length == 0 ? 0 : skip(bytes, length, flip);
  for (; i + 8 <= length; i += 8) {
    const uint64_t word = load_big_endian(bytes + i) ^ flip;
    if (word != 0) return static_cast<int64_t>(i * 8) + __builtin_clzll(word);
  }
  for (; i < length; ++i) {
    if (uint8_t found = matching(bytes[i], bit)) {
      return static_cast<int64_t>(i * 8) + first_in_byte(found);
    }
  }
  return -1;
}

int64_t count_range(std::string_view bytes, int64_t start, int64_t end, Unit unit) {
  // Both ends before the string's start and crossed: empty, although clamping both to 0
  // would select the first byte.
  if (start < 0 && end < 0 && start > end) return 0;
  uint64_t first_bit, last_bit;
  if (!resolve_range(bytes.size(), start, end, unit, &first_bit, &last_bit)) return 0;
  return static_cast<int64_t>(
      count_bits(reinterpret_cast<const uint8_t*>(bytes.data()), first_bit, last_bit));
}

int64_t find_in_range(std::string_view bytes, bool bit, int64_t start, std::optional<int64_t> end,
                      Unit unit) {
  const int64_t total = static_cast<int64_t>(bytes.size()) * (unit == Unit::kBit ? 8 : 1);
  uint64_t first_bit, last_bit;
  if (!resolve_range(bytes.size(), start, end.value_or(total - 1), unit, &first_bit, &last_bit)) {
    return -1;
  }
  const int64_t found =
      find_bits(reinterpret_cast<const uint8_t*>(bytes.data()), first_bit, last_bit, bit);
  if (found >= 0 || bit || end.has_value()) return found;
  // Looking for a clear bit up to the end of the string: the zero padding past it has one.
  return static_cast<int64_t>(last_bit) + 1;
}

void combine(Op op, std::span<const std::string_view> sources, uint8_t* out) {
  static const CombineFunction function = pick_combine();
  size_t total = 0;
  for (std::string_view source : sources) total = std::max(total, source.size());
  function(op, sources, total, out);
}

uint64_t get_unsigned(const uint8_t* bytes, size_t length, uint64_t offset, unsigned bits) {
  // A field of up to 64 bits at any bit position spans at most 9 bytes: gather them into one
  // 72-bit big-endian number (zeros past the string) and shift the field out.
  const uint64_t first_byte = offset >> 3;
  unsigned __int128 gathered = 0;
  for (uint64_t i = 0; i < 9; ++i) {
    gathered <<= 8;
    if (first_byte + i < length) gathered |= bytes[first_byte + i];
  }
  gathered >>= 72 - (offset & 7) - bits;
  const uint64_t field = static_cast<uint64_t>(gathered);
  return bits == 64 ? field : field & ((uint64_t{1} << bits) - 1);
}

int64_t get_signed(const uint8_t* bytes, size_t length, uint64_t offset, unsigned bits) {
  uint64_t field = get_unsigned(bytes, length, offset, bits);
  // Two's complement: a set top bit extends to the bits above the field.
  if (bits < 64 && (field >> (bits - 1)) != 0) field |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(field);
}

void set_unsigned(uint8_t* bytes, uint64_t offset, unsigned bits, uint64_t value) {
  const uint64_t first_byte = offset >> 3;
  const unsigned lead = static_cast<unsigned>(offset & 7);
  const unsigned span = (lead + bits + 7) / 8;
  unsigned __int128 gathered = 0;
  for (unsigned i = 0; i < span; ++i) gathered = (gathered << 8) | bytes[first_byte + i];
  const unsigned shift = span * 8 - lead - bits;
  const unsigned __int128 mask = ((static_cast<unsigned __int128>(1) << bits) - 1) << shift;
  gathered = (gathered & ~mask) | ((static_cast<unsigned __int128>(value) << shift) & mask);
  for (unsigned i = span; i-- > 0;) {
    bytes[first_byte + i] = static_cast<uint8_t>(gathered);
    gathered >>= 8;
  }
}

int check_unsigned(uint64_t value, int64_t increment, unsigned bits, Overflow overflow,
                   uint64_t* result) {
  const uint64_t max = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  int direction = 0;
  if (value > max || (increment > 0 && static_cast<uint64_t>(increment) > max - value)) {
    direction = 1;
  } else if (increment < 0 && (uint64_t{0} - static_cast<uint64_t>(increment)) > value) {
    direction = -1;
  }
  if (direction == 0) return 0;
  if (overflow == Overflow::kWrap) {
    *result = (value + static_cast<uint64_t>(increment)) & max;
  } else if (overflow == Overflow::kSat) {
    *result = direction > 0 ? max : 0;
  }
  return direction;
}

int check_signed(int64_t value, int64_t increment, unsigned bits, Overflow overflow,
                 int64_t* result) {
  const int64_t max = bits >= 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  const int64_t min = -max - 1;
  int direction = 0;
  // Compared in a range where the subtraction cannot overflow: value is within [min, max]
  // once the first test fails.
  if (value > max || (increment > 0 && value >= 0 && increment > max - value) ||
      (increment > 0 && value < 0 && bits < 64 && increment > max - value)) {
    direction = 1;
  } else if (value < min || (increment < 0 && value < 0 && increment < min - value) ||
             (increment < 0 && value >= 0 && bits < 64 && increment < min - value)) {
    direction = -1;
  }
  if (direction == 0) return 0;
  if (overflow == Overflow::kWrap) {
    uint64_t sum = static_cast<uint64_t>(value) + static_cast<uint64_t>(increment);
    if (bits < 64) {
      const uint64_t high = ~uint64_t{0} << bits;
      sum = (sum >> (bits - 1)) & 1 ? sum | high : sum & ~high;
    }
    *result = static_cast<int64_t>(sum);
  } else if (overflow == Overflow::kSat) {
    *result = direction > 0 ? max : min;
  }
  return direction;
}

}  // namespace keywarden::bitops
